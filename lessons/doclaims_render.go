package lessons

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/locklab/locklab/workload/docclaims"
)

// docClaimsBlocks are the measured tables of the page on the documents'
// last claims, one block beside each claim; every figure in them is read
// from docclaims.json.
func docClaimsBlocks(r *DocClaimsRecord) map[string]string {
	names := []string{"claims:split", "claims:down", "claims:script", "claims:budget", "claims:ephemeral"}
	out := map[string]string{}
	if r == nil {
		for _, n := range names {
			out[n] = "Not run yet: run `make lessons`."
		}
		return out
	}
	how := fmt.Sprintf("Measured %s by `go run ./cmd/bench lessons -page %s`", r.Generated, strings.TrimSuffix(DocClaimsPage, ".md"))
	out["claims:split"] = splitBlock(how, r.Split)
	out["claims:down"] = downBlock(how, r.Down)
	out["claims:script"] = scriptBlock(how, r.Script)
	out["claims:budget"] = budgetBlock(how, r.Budget)
	out["claims:ephemeral"] = ephemeralBlock(how, r.Ephemeral)
	return out
}

// DocClaimsPage is the page's file.
const DocClaimsPage = "17-the-documents-last-claims.md"

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return -1
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return s[(len(s)-1)/2]
}

func maxOf(xs []float64) float64 {
	m := -1.0
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}

func msOrDash(x float64) string {
	if x < 0 {
		return "–"
	}
	return num(x) + " ms"
}

// splitStats is a row's split rounds and times to a grant.
func splitStats(s docclaims.SplitResult) (split, unresolved int, all, splitGrant []float64) {
	for _, x := range s.Rounds {
		if x.GrantMS < 0 {
			unresolved++
		} else {
			all = append(all, x.GrantMS)
		}
		if x.Split {
			split++
			if x.GrantMS >= 0 {
				splitGrant = append(splitGrant, x.GrantMS)
			}
		}
	}
	return
}

func splitBlock(how string, rows []docclaims.SplitResult) string {
	var b strings.Builder
	if len(rows) == 0 {
		return "Not run yet: run `make lessons`."
	}
	fmt.Fprintf(&b, "%s on five Redis nodes the lab started: `redlock`, TTL %s; in each round every client's first attempt fires at one instant on a free lock; a round nobody wins within %s is unresolved.\n\n", how, rows[0].TTL, rows[0].Bound)
	b.WriteString("| clients | after a lost attempt | rounds | split votes (no first attempt won) | unresolved | time to the first grant, median (max), every round | the same, split rounds only |\n|---|---|---|---|---|---|---|\n")
	for _, s := range rows {
		split, unresolved, all, sg := splitStats(s)
		way := "retry at once"
		if s.Backoff {
			way = "random back-off (`Acquire`)"
		}
		splitCol := "–"
		if len(sg) > 0 {
			splitCol = fmt.Sprintf("%s (%s)", msOrDash(median(sg)), msOrDash(maxOf(sg)))
		}
		fmt.Fprintf(&b, "| %d | %s | %d | %d | %d | %s (%s) | %s |\n", s.Clients, way, len(s.Rounds), split, unresolved, msOrDash(median(all)), msOrDash(maxOf(all)), splitCol)
	}
	ttl, _ := time.ParseDuration(rows[0].TTL)
	var long, slow int
	for _, s := range rows {
		for _, x := range s.Rounds {
			if x.GrantMS >= float64(ttl.Milliseconds()) {
				long++
			}
			slow += x.Errors
		}
	}
	fmt.Fprintf(&b, "\nRounds, of all above, whose first grant came only after a TTL or more: %d. Attempts that failed because a node did not answer within its budget (an unknown outcome, or no majority answering), rather than on the votes: %d.\n", long, slow)
	return b.String()
}

func downBlock(how string, d docclaims.DownResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s on the same %d nodes: one client, no contention, TTL %s, each node's budget %s (`redlock.NodeTimeout`); a stalled node is SIGSTOPped, the last nodes first.\n\n", how, d.Nodes, d.TTL, d.NodeTimeout)
	b.WriteString("| nodes stalled | acquires granted | acquire p50 / p99 / max | acquire and release p50 / max | refused | first refusal took |\n|---|---|---|---|---|---|\n")
	for _, r := range d.Rows {
		acq, cyc := "–", "–"
		if r.Acquire.N > 0 {
			acq = fmt.Sprintf("%s / %s / %s ms", num(r.Acquire.P50), num(r.Acquire.P99), num(r.Acquire.Max))
			cyc = fmt.Sprintf("%s / %s ms", num(r.Cycle.P50), num(r.Cycle.Max))
		}
		refused := fmt.Sprintf("%d", r.Refused)
		took := "–"
		if r.Refused > 0 {
			refused += fmt.Sprintf(" (%s)", r.Error)
			took = num(r.RefusedMS) + " ms"
		}
		fmt.Fprintf(&b, "| %d of %d | %d of %d | %s | %s | %s | %s |\n", r.Down, d.Nodes, r.Acquire.N, r.Acquire.N+r.Refused, acq, cyc, refused, took)
	}
	return b.String()
}

func scriptBlock(how string, s docclaims.ScriptResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s on one Redis node the lab started: %d other clients each send GET in a loop over a window of %s; in the second window one more client runs a Lua script that spins for %s, started mid-window. Held through: GETs sent before the script had run a quarter of its set time and answered only after it had run nine tenths (without the script, over the same span of the window); each client has one GET in flight at a time.\n\n", how, s.Clients, s.Window, s.Script)
	b.WriteString("| window | GETs | p50 | p99 | max | the script's EVAL took | GETs held through |\n|---|---|---|---|---|---|---|\n")
	for _, r := range s.Rows {
		name, took := "without the script", "–"
		if r.Script {
			name, took = "with the script", num(r.ScriptMS)+" ms"
		}
		fmt.Fprintf(&b, "| %s | %d | %s ms | %s ms | %s ms | %s | %d |\n", name, r.Others.N, num(r.Others.P50), num(r.Others.P99), num(r.Others.Max), took, r.HeldThrough)
	}
	b.WriteString("\nA lock on the same node: `" + docclaims.LeaseLock + "` taken with a short lease, the script started, and the holder's refresh sent early in the lease, as a watchdog sends it; then a second client tries the lock.\n\n")
	b.WriteString("| window | lease | refresh sent after the grant | refresh answered in | refresh | second client took the lock |\n|---|---|---|---|---|---|\n")
	for _, l := range s.Leases {
		name := "without the script"
		if l.Script {
			name = "with the script"
		}
		outcome := "extended the lease"
		switch {
		case l.Refused:
			outcome = "refused: the lease was gone"
		case l.Error != "":
			outcome = "failed: `" + l.Error + "`"
		}
		fmt.Fprintf(&b, "| %s | %s | %s ms | %s ms | %s | %s |\n", name, l.TTL, num(l.RefreshSentMS), num(l.RefreshMS), outcome, yesNo(l.TakenByOther))
	}
	return b.String()
}

func budgetBlock(how string, rows []docclaims.BudgetRow) string {
	var b strings.Builder
	if len(rows) == 0 {
		return "Not run yet: run `make lessons`."
	}
	f := rows[0]
	fmt.Fprintf(&b, "%s on the same five nodes: %d `redlock` clients contend for %s, each giving up an acquire after %s (half the TTL of %s), holding each grant for its work, then asking again.\n\n", how, f.Clients, f.Duration, f.Budget, f.TTL)
	b.WriteString("| work per grant | the others' work, queued | acquires granted | gave up | granted wait p50 / p99 / max | least validity left at a grant |\n|---|---|---|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %s | %d | %d | %s / %s / %s ms | %s ms |\n", r.Hold, queued(r), r.Granted, r.GaveUp, num(r.Wait.P50), num(r.Wait.P99), num(r.Wait.Max), num(r.LeftMS))
	}
	return b.String()
}

// queued is the work of every other client, end to end: what a fair queue
// would have a waiter wait at worst.
func queued(r docclaims.BudgetRow) string {
	d, err := time.ParseDuration(r.Hold)
	if err != nil {
		return "–"
	}
	return (d * time.Duration(r.Clients-1)).String()
}

func ephemeralBlock(how string, rows []docclaims.EphemeralResult) string {
	var b strings.Builder
	if len(rows) == 0 {
		return "Not run yet: run `make lessons`."
	}
	fmt.Fprintf(&b, "%s on one ZooKeeper the lab started: the holder takes the `zookeeper` lock (an ephemeral sequential node) with a session timeout of %s; a watcher on another session times the node's deletion from the holder's end.\n\n", how, rows[0].Session)
	b.WriteString("| the holder | trials | node deleted after (each trial) |\n|---|---|---|\n")
	for _, r := range rows {
		name := "closes its session (`Close`)"
		if r.Way == "sigkill" {
			name = "is SIGKILLed in its own process"
		}
		var each []string
		for _, x := range r.DeletedMS {
			each = append(each, num(x)+" ms")
		}
		fmt.Fprintf(&b, "| %s | %d | %s |\n", name, len(r.DeletedMS), strings.Join(each, ", "))
	}
	return b.String()
}
