package lessons

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/locklab/locklab/report"
)

// The pages were written from four source documents (Chinese blog posts on
// Redis and other distributed locks, kept outside the repository by their
// file names). What a page says a document says is a claim like a verdict:
// it can be misread, and it was (lesson 4 had GET-then-DEL "presented as the
// careful version" where 000 gives it as its second wrong release; lesson 7
// had fail-over mentioned "in passing" where 004 gives it a section and a
// diagram; lesson 10 had "three ways" where 003 lists two). Sources is the
// reviewed table of what each document says, written from its text; the
// prose check holds every clause that cites a document to it, the way the
// expectation table holds verdicts. A new citation either matches a row
// here or adds one, reviewed against the document.

// Source is one source document and what it says.
type Source struct {
	File   string // the file name the pages cite
	Short  string // its number, the anchor on sources.md
	Title  string // its own title, translated
	Claims []SourceClaim
}

// SourceClaim is one thing a document says, in the lab's words.
type SourceClaim struct {
	ID   string
	Says string // what the document says, reviewed against its text
	// About matches a clause that speaks of this claim.
	About *regexp.Regexp
	// Misread matches wordings of the claim the document does not
	// support; Why says what it says instead.
	Misread *regexp.Regexp
	Why     string
}

func claimRe(s string) *regexp.Regexp { return regexp.MustCompile(s) }

// Sources are the documents, in the order of their file names.
var Sources = []Source{
	{
		File: "000_4c93f78eaeec54ee.txt", Short: "000", Title: "The correct implementation of a Redis distributed lock (Java, Jedis)",
		Claims: []SourceClaim{
			{ID: "three-backends", Says: "distributed locks are commonly built three ways: a database optimistic lock, Redis, ZooKeeper; the post covers Redis only",
				About: claimRe(`(?i)three (ways|kinds)|database, Redis(,| and) ZooKeeper`)},
			{ID: "four-conditions", Says: "a lock must give mutual exclusion, no deadlock when a holder crashes, fault tolerance while most Redis nodes run, and release only by the client that acquired",
				About: claimRe(`(?i)four (conditions|properties)`)},
			{ID: "set-nx-px", Says: "the correct acquire is one SET key requestId NX PX ttl; the post considers a single Redis node only",
				About: claimRe(`(?i)\bSET\b[^.]*\bNX\b[^.]*\b(PX|EX)\b|single(-node| node) Redis`)},
			{ID: "setnx-expire", Says: "its first wrong acquire is SETNX then EXPIRE: two commands, not atomic; a crash between them leaves a lock that never expires (deadlock)",
				About:   claimRe(`(?i)SETNX[^.]*EXPIRE`),
				Misread: claimRe(`(?i)(correct|careful|recommend)`), Why: "000 gives SETNX then EXPIRE as its first wrong acquire"},
			{ID: "old-jedis", Says: "people write SETNX then EXPIRE because old Jedis versions had no set() taking the value, NX and the expiry together",
				About: claimRe(`(?i)\bJedis\b`)},
			{ID: "getset", Says: "its second wrong acquire stores the expiry time as the value and takes an expired lock with GETSET; it names three flaws: every client's clock must agree, a losing client's GETSET overwrites the winner's expiry, and the value names no owner, so anyone can release",
				About: claimRe(`(?i)GETSET`)},
			{ID: "del-release", Says: "its first wrong release is a plain DEL, which lets any client release a lock that is not its own",
				About: claimRe(`(?i)plain .?DEL|DEL without`)},
			{ID: "get-then-del", Says: "its second wrong release is GET, compare in the client, then DEL: two commands; if the lock expires and another client takes it between them, the DEL removes that client's lock; the author says it looks right at first glance and that he nearly wrote it himself",
				About:   claimRe(`(?i)\bGET\b[^.;]{0,40}\bDEL\b|GET-then-DEL`),
				Misread: claimRe(`(?i)careful version|presented as|recommend|the (correct|right) (way|release)`),
				Why:     "000 gives GET-then-DEL as its second wrong release, one that looks right at first glance"},
			{ID: "lua-release", Says: "the correct release is one Lua script that compares the value and deletes, run by EVAL, atomic because Redis runs a script as one command",
				About: claimRe(`(?i)\bLua\b|\bEVAL\b`)},
			{ID: "script-blocks", Says: "the Redis manual it quotes on EVAL: Redis runs every script with one Lua interpreter and runs a script atomically: no other script or Redis command runs while a script runs",
				About: claimRe(`(?i)no other (script or )?(Redis )?command|while (a|the|one) script runs`)},
			{ID: "redis-docs", Says: "it quotes Redis's documentation of SET: the single-node pattern (SET NX EX, a compare-and-delete script to release) is discouraged in favour of Redlock, which is fault tolerant",
				About: claimRe(`(?i)Redlock|Redis's own (page|documentation)`)},
			{ID: "redis-vs-zk", Says: "a Redis lock's waiters keep retrying while a ZooKeeper waiter registers a watch; a crashed Redis holder's lock lasts until its timeout, a ZooKeeper holder's ephemeral node goes when its client dies",
				About: claimRe(`(?i)ZooKeeper`)},
		},
	},
	{
		File: "001_053b9bda3658e97b.txt", Short: "001", Title: "Distributed locks: implementing a Redis distributed lock (the article 000 reposts, its correct code only)",
		Claims: []SourceClaim{
			{ID: "three-backends", Says: "the same three ways as 000 (database optimistic lock, Redis, ZooKeeper), Redis only",
				About: claimRe(`(?i)three (ways|kinds)`)},
			{ID: "set-nx-px", Says: "the same correct acquire (SET NX PX) and Lua release as 000, without 000's wrong examples",
				About: claimRe(`(?i)\bSET\b[^.]*\bNX\b|\bLua\b|same as`)},
		},
	},
	{
		File: "003_a6064ed1f179a5a2.txt", Short: "003", Title: "Distributed locks (notes: database, cache and ZooKeeper locks)",
		Claims: []SourceClaim{
			{ID: "requirements", Says: "a lock should be fast, acquire atomically, be cleared when its holder crashes or is cut off, be reentrant, and offer blocking and non-blocking acquires",
				About: claimRe(`(?i)reentran|blocking`)},
			{ID: "database-two", Says: "it lists two database locks: a lock table with a unique index (INSERT to take, DELETE to release; no expiry, so a failed release deadlocks; non-blocking only; not reentrant) and an optimistic version number (the acquire fails when the version moved)",
				About:   claimRe(`(?i)database|lock table|version`),
				Misread: claimRe(`(?i)three (ways|database)|advisory`),
				Why:     "003 lists two database locks, the lock table and the version number; the advisory lock is the lab's addition"},
			{ID: "lock-table-mysql", Says: "its lock table is MySQL's, and it says the lock mainly uses the `for update` keyword, beside the INSERT and DELETE it describes, without showing where the keyword goes",
				About: claimRe(`(?i)\bMySQL\b|for update`)},
			{ID: "setnx-expire", Says: "SETNX then EXPIRE can deadlock if the client dies between them; two fixes: SET with NX and EX/PX (Redis 2.6.12 and later), or a SETNX/GET/GETSET timestamp lock",
				About: claimRe(`(?i)SETNX[^.]*EXPIRE`)},
			{ID: "getset-own-expiry", Says: "its GETSET lock stores an expiry timestamp; after its work the holder checks whether its lock has timed out and deletes it only if not, so as not to delete another's lock",
				About: claimRe(`(?i)GETSET|own expiry`)},
			{ID: "redlock", Says: "Redlock takes the lock on a majority of five independent nodes within the validity time; its problems: five nodes, slower than one, split votes (every client gets one or two nodes and nobody a majority; retrying after a random time, as Raft does, greatly shortens them but cannot avoid them, least of all at the first attempt), two nodes of five down hurt availability (a client must wait for the down nodes' timeouts, and needs every one of the three left), a partition can keep a client from ever acquiring",
				About: claimRe(`(?i)Redlock`)},
			{ID: "zookeeper", Says: "a ZooKeeper lock is an ephemeral sequential node; the lowest holds, each other watches the one before it; an ephemeral node is deleted at once when its client's connection fails",
				About: claimRe(`(?i)ZooKeeper|ephemeral`)},
			{ID: "summary", Says: "database locks burden the database; cache locks rest on timeouts, unreliable when work outlasts them; ZooKeeper does not rest on timeouts but is slower than a cache lock, since nodes are created and deleted often",
				About: claimRe(`(?i)timeout|slower`)},
		},
	},
	{
		File: "004_84007c392b46b35c.txt", Short: "004", Title: "Interview question explained: how to build a distributed lock with Redis",
		Claims: []SourceClaim{
			{ID: "coupon", Says: "the author's coupon sale: three servers read the count, check it is above zero and write it back one less, and a slow one overwrites another's update",
				About: claimRe(`(?i)coupon`)},
			{ID: "single-update", Says: "it rejects a single UPDATE count = count - 1: without a lock, two claims on the last coupon both pass the check and the count goes negative",
				About: claimRe(`(?i)\bUPDATE\b[^.]*count|count - 1|negative`)},
			{ID: "optimistic-retries", Says: "it rejects an optimistic version column (UPDATE ... WHERE version = ?): updates may keep failing and retry at length",
				About: claimRe(`(?i)version|optimistic`)},
			{ID: "setnx-del", Says: "SETNX to take and DEL to release; a crashed holder leaves a deadlock",
				About: claimRe(`(?i)SETNX[^.]*DEL|deadlock`)},
			{ID: "lua-setnx-expire", Says: "two ways to add an expiry, either fine in its view: SETNX and EXPIRE inside one Lua script, or one SET NX EX",
				About: claimRe(`(?i)\bLua\b|SETNX[^.]*EXPIRE`)},
			{ID: "del-others", Says: "a holder that outlasts its timeout and then DELs removes another client's lock; the fix is a unique value and a Lua script that compares it before deleting",
				About: claimRe(`(?i)\bDEL\b|another client's lock|someone else's`)},
			{ID: "failover", Says: "a section of its own, with a diagram: master-replica replication lags, the master dies before the lock reaches the replica, the replica is promoted and the lock is lost",
				About:   claimRe(`(?i)fail-?over|replica|replication|promot`),
				Misread: claimRe(`(?i)in passing|briefly|only mentions?`),
				Why:     "004 gives the fail-over its own section and a diagram"},
			{ID: "redisson-nodes", Says: "its Redisson lock sets the key on every node of five, waits TTL/2 in all and a fifth of that per node, and holds when a majority answered in time",
				About: claimRe(`(?i)Redisson[^.]*(node|majority)|majority`)},
			{ID: "watchdog", Says: "a background thread refreshes the expiry of a lock whose work has no known length, by an owner-checked Lua script",
				About: claimRe(`(?i)watchdog|background thread|refresh`)},
			{ID: "reentrant", Says: "Redisson's scripts make the lock reentrant with a hash of owner and count",
				About: claimRe(`(?i)reentran|hash`)},
		},
	},
}

var (
	// sourceFileRe finds a citation of a source document by its file name.
	sourceFileRe = regexp.MustCompile(`\b(\d{3})_[0-9a-f]{16}\.txt\b`)
	// vagueSourceRe finds a mention of the documents that names none.
	vagueSourceRe = regexp.MustCompile(`(?i)\b(the|one of the|in the) source documents?\b`)
)

// SourceProblems holds every hand-written clause of a page that cites a
// source document to the reviewed table: a clause must name the file it
// speaks of, must speak of something the table says the file says, and
// must not word it as the table says the file does not.
func SourceProblems(page string) []string {
	byFile := map[string]Source{}
	for _, s := range Sources {
		byFile[s.File] = s
	}
	var out []string
	for _, para := range paragraphs(Prose(page)) {
		if strings.HasPrefix(para, "#") {
			continue // a heading names a topic; it says nothing a document said
		}
		for _, cl := range clauses(para) {
			files := sourceFileRe.FindAllString(cl, -1)
			if len(files) == 0 {
				if vagueSourceRe.MatchString(cl) {
					out = append(out, fmt.Sprintf("%q: cites the source documents without naming one by its file name", cl))
				}
				continue
			}
			// The file names themselves are no part of what is said.
			said := sourceFileRe.ReplaceAllString(cl, "")
			for _, f := range files {
				src, ok := byFile[f]
				if !ok {
					out = append(out, fmt.Sprintf("%q: cites %s, which is not a source document (lessons.Sources)", cl, f))
					continue
				}
				held := false
				for _, c := range src.Claims {
					if c.Misread != nil && c.Misread.MatchString(said) && c.About.MatchString(said) {
						out = append(out, fmt.Sprintf("%q: misreads %s (%s): %s", cl, src.Short, c.ID, c.Why))
					}
					held = held || c.About.MatchString(said)
				}
				if !held {
					out = append(out, fmt.Sprintf("%q: attributes to %s what the table of what it says (lessons.Sources) does not hold", cl, src.Short))
				}
			}
		}
	}
	return out
}

// sourcesBlock is the sources page's table: every document and what the
// pages may say it says.
func sourcesBlock() string {
	var b strings.Builder
	for _, s := range Sources {
		fmt.Fprintf(&b, "<a id=\"%s\"></a>\n### `%s`\n\n%s.\n\n", s.Short, s.File, s.Title)
		t := report.NewTable("claim", "what it says")
		for _, c := range s.Claims {
			t.Row(c.ID, c.Says)
		}
		b.WriteString(t.String() + "\n")
	}
	return b.String()
}
