package checker

import "time"

// Two of the lessons' measurements are judged by counts, not by a
// history: a sale of a stock (the coupon sale of the source documents, on
// PostgreSQL), as Jepsen's counter workload is judged by its total, and a
// race of clients for a lock whose holder went away (the redis-getset
// takeover), by how many won and when (grantoverlap.go). The engine runs them on the servers it
// starts for every run, but their clients keep no history for porcupine;
// what each count must be to show exclusion, and the verdict it gives,
// are still the checker's to say (JudgeSale, JudgeTakeover).

// SoldExactly reports whether a sale of stock items sold each one once:
// the sellers were told of exactly stock sales and the stock reads zero
// after. More sales than the stock is an oversell, two sellers' reads of
// the same count both written back; fewer, or stock left, is a sale lost.
func SoldExactly(stock, sold, remaining int) bool {
	return sold == stock && remaining == 0
}

// OneWinner reports whether a race for a free lock granted it once: two
// winners hold it at once (unsafe), and none left it free while every
// racer asked.
func OneWinner(winners int) bool { return winners == 1 }

// RefreshMatchesKey reports whether a holder's own view of its lease
// agrees with the server's: its Refresh is refused exactly when the key no
// longer holds the expiry it was granted (overwritten by a racer that
// lost). A refusal with the key intact, or an accepted refresh of a key
// another client rewrote, is a lock that misreports what it holds.
func RefreshMatchesKey(overwritten, refreshRefused bool) bool {
	return overwritten == refreshRefused
}

// SaleTrial is one trial of a sale from a full stock until every seller
// found it sold out: the stock, the sales the sellers were told
// succeeded, and what the stock row read after.
type SaleTrial struct{ Stock, Sold, Remaining int }

// JudgeSale is the verdict on the trials of a sale whose sellers must not
// sell one item twice: unsafe when a trial sold more than its stock (two
// sellers' reads of the same count both written back, the lost update
// exclusion is for), inconclusive when a trial's counts are off otherwise
// (sold short, or stock left after every seller found none: no sale the
// counts can judge), and safe when every trial sold each item once
// (SoldExactly). bad is the first trial that gave the verdict, -1 when
// every trial was safe (or there was none: a sale of no trials is
// inconclusive).
func JudgeSale(trials []SaleTrial) (v Verdict, bad int) {
	if len(trials) == 0 {
		return Inconclusive, -1
	}
	return judgeEach(len(trials), func(i int) Verdict {
		t := trials[i]
		switch {
		case SoldExactly(t.Stock, t.Sold, t.Remaining):
			return Safe
		case t.Sold > t.Stock:
			return Unsafe
		}
		return Inconclusive
	})
}

// JudgeSales is the verdict on a measurement of several sales (every way
// that must not oversell, each its trials): the worst of their JudgeSale
// verdicts, with the sale and the trial that first gave it (-1, -1 when
// every sale was safe). A measurement of no sale is inconclusive.
func JudgeSales(sales [][]SaleTrial) (v Verdict, sale, trial int) {
	return worstPart(len(sales), func(i int) (Verdict, int) { return JudgeSale(sales[i]) })
}

// TakeoverRound is one race of clients for a lock whose holder went away:
// how many were granted it and, when recorded, when (Grants, in the order
// of their replies); and for the last winner, the holder at the end of the
// race, whether the key still held the expiry it was granted, whether its
// Refresh was refused, and when that Refresh was answered (on the grants'
// clock: a refresh answered after its lease ended may be refused for that
// alone).
type TakeoverRound struct {
	Winners                     int
	Grants                      []TakeoverGrant
	Overwritten, RefreshRefused bool
	RefreshReply                time.Duration
}

// JudgeTakeover is the verdict on the rounds of a takeover race: unsafe
// when a round granted the lock to two racers whose leases ran at once
// (LeasesOverlap), or to two racers it did not time (a count alone cannot
// show the second came after the first's lease); inconclusive when two
// grants' times cannot place one against the other's lease end
// (LeasesUnplaced), or when the holder's Refresh, asked within its lease,
// disagreed with the key (RefreshMatchesKey: a lock misreporting what it
// holds, which the counts cannot tell safe or not); stuck when a round
// granted the lock to none while every racer asked for the free lock; and
// safe when every round had one holder at a time whose view of its lease
// was the server's. A second winner whose request went out after the
// first's lease ended took over an expired lease, as the lock is meant to
// (a racer held back past the 100 ms lease of lesson 3 on a loaded
// machine): that round is safe, and LateTakeover counts it. bad is the
// first round that gave the verdict, -1 when every round was safe (a race
// of no rounds is inconclusive).
func JudgeTakeover(rounds []TakeoverRound) (v Verdict, bad int) {
	if len(rounds) == 0 {
		return Inconclusive, -1
	}
	return judgeEach(len(rounds), func(i int) Verdict {
		r := rounds[i]
		switch {
		case r.Winners == 0:
			return Stuck
		case r.Winners > 1 && len(r.Grants) != r.Winners:
			return Unsafe
		}
		switch worstOverlap(r.Grants) {
		case LeasesOverlap:
			return Unsafe
		case LeasesUnplaced:
			return Inconclusive
		}
		if RefreshWithinLease(r) && !RefreshMatchesKey(r.Overwritten, r.RefreshRefused) {
			return Inconclusive
		}
		return Safe
	})
}

// JudgeTakeovers is the verdict on several races (one per clock
// setting, each its rounds): the worst of their JudgeTakeover verdicts,
// with the race and the round that first gave it (-1, -1 when every race
// was safe). A measurement of no race is inconclusive.
func JudgeTakeovers(races [][]TakeoverRound) (v Verdict, race, round int) {
	return worstPart(len(races), func(i int) (Verdict, int) { return JudgeTakeover(races[i]) })
}

// worstPart is the worst of n parts' verdicts, each with the piece of the
// part that gave it, and the first part that gave the worst.
func worstPart(n int, judge func(i int) (Verdict, int)) (v Verdict, part, at int) {
	if n == 0 {
		return Inconclusive, -1, -1
	}
	v, part, at = Safe, -1, -1
	for i := 0; i < n; i++ {
		if w, bad := judge(i); Rank(w) > Rank(v) {
			v, part, at = w, i, bad
		}
	}
	return v, part, at
}

// judgeEach is the worst of n counted parts' verdicts (Worst), and the
// first part that gave it (-1 when every part was safe).
func judgeEach(n int, verdict func(i int) Verdict) (v Verdict, bad int) {
	v, bad = Safe, -1
	for i := 0; i < n; i++ {
		if w := verdict(i); Rank(w) > Rank(v) {
			v, bad = w, i
		}
	}
	return v, bad
}
