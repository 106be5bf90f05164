package lessons

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/engine"
	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/workload/takeover"
)

// The race a page measures: short leases so that many rounds fit in a few
// seconds, and the clients' clocks either one (this machine's) or a few
// milliseconds apart, as separate machines' clocks kept by NTP are.
const (
	takeoverClients = 8
	takeoverRounds  = 50
	takeoverTTL     = 100 * time.Millisecond
)

var takeoverSpreads = []time.Duration{0, 5 * time.Millisecond}

// TakeoverRecord is the measured race of a page, kept in takeover.json.
type TakeoverRecord struct {
	Generated string            `json:"generated"`
	Results   []takeover.Result `json:"results"`
}

// runTakeover has the engine race the clients on the server
// redis-getset declares (one Redis), started and stopped as for every run
// (engine.TakeoverJob), once per clock setting, and stops the
// regeneration on a race the page could not explain: a round with no
// winner, two winners whose leases ran at once (or that the times cannot
// place), or a winner whose Refresh within its lease disagrees with the
// key, which the checker finds not safe. A racer held back past the first
// winner's lease taking over the ended lease is safe, and the page counts
// it (lateBlock).
func runTakeover(ctx context.Context, opt Options) (TakeoverRecord, error) {
	spec, err := impls.Lookup(takeover.Lock)
	if err != nil {
		return TakeoverRecord{}, err
	}
	rec := TakeoverRecord{Generated: time.Now().UTC().Format("2006-01-02 15:04 MST")}
	job := engine.TakeoverJob(takeover.Options{Clients: takeoverClients, Rounds: takeoverRounds, TTL: takeoverTTL}, takeoverSpreads, &rec.Results)
	out, err := engine.Run(ctx, job, engine.Options{Impl: spec, Seed: 1, TTL: takeoverTTL, Logf: opt.Logf})
	if err != nil {
		return TakeoverRecord{}, fmt.Errorf("the race: %w", err)
	}
	if !checker.Survived(out.Verdict) {
		return TakeoverRecord{}, fmt.Errorf("the race is %s (%s): the page cannot explain it", out.Verdict, out.Detail)
	}
	return rec, nil
}

func loadTakeover(dir string) (*TakeoverRecord, error) {
	return loadRecord[TakeoverRecord](dir, "takeover.json")
}

func saveTakeover(dir string, r TakeoverRecord) error { return saveRecord(dir, "takeover.json", r) }

// takeoverBlock is the measured race, with its settings.
func takeoverBlock(t *TakeoverRecord) string {
	if t == nil || len(t.Results) == 0 {
		return "Not run yet: run `make lessons`."
	}
	var b strings.Builder
	first := t.Results[0]
	fmt.Fprintf(&b, "Measured %s by `make lessons` on one Redis the lab started: `%s`, %d clients racing for each abandoned lock, %d rounds per row, TTL %s. GETSETs are Redis's own count (`INFO commandstats`); a race with more than one had a loser's GETSET land after the winner's.\n\n",
		t.Generated, takeover.Lock, first.Clients, len(first.Rounds), first.TTL)
	b.WriteString("| clients' clocks | rounds | GETSETs per race (mean, max) | races where a loser's GETSET landed | key holds a loser's expiry, not the winner's | winner's Refresh refused while it holds the lock | stored minus granted expiry (min, max) |\n|---|---|---|---|---|---|---|\n")
	for _, r := range t.Results {
		clocks := "one clock (this machine's)"
		if r.ClockSpread != "0s" {
			clocks = "spread evenly over ±" + r.ClockSpread
		}
		var sum, most, lo, hi int64
		for _, x := range r.Rounds {
			sum += x.GetSets
			most = max(most, x.GetSets)
			lo, hi = min(lo, x.DriftMS), max(hi, x.DriftMS)
		}
		n := len(r.Rounds)
		refused := 0
		for _, x := range engine.TakeoverRounds(r) {
			// A refresh answered after the lease ended is refused for that
			// alone: not one refused while the winner holds the lock.
			if x.RefreshRefused && checker.RefreshWithinLease(x) {
				refused++
			}
		}
		fmt.Fprintf(&b, "| %s | %d | %.1f, %d | %d | %d | %d | %d ms, %d ms |\n", clocks, n, float64(sum)/float64(max(n, 1)), most,
			r.Count(func(x takeover.Round) bool { return x.GetSets > 1 }),
			r.Count(func(x takeover.Round) bool { return x.Overwritten }),
			refused, lo, hi)
	}
	b.WriteString(lateBlock(t.Results))
	return b.String()
}

// lateBlock says, when the measurement held any, which rounds a racer
// held back past the first winner's lease took over after it ended
// (checker.LateTakeover), and which winners' Refresh came after their
// lease, so the table's counts are read with them; a measurement with
// neither adds nothing.
func lateBlock(results []takeover.Result) string {
	var late, afterLease []string
	for _, r := range results {
		var nLate, nAfter int
		for _, x := range engine.TakeoverRounds(r) {
			if checker.LateTakeover(x) {
				nLate++
			}
			if !checker.RefreshWithinLease(x) {
				nAfter++
			}
		}
		clocks := "with clocks ±" + r.ClockSpread
		if r.ClockSpread == "0s" {
			clocks = "on one clock"
		}
		if nLate > 0 {
			late = append(late, fmt.Sprintf("%d %s", nLate, clocks))
		}
		if nAfter > 0 {
			afterLease = append(afterLease, fmt.Sprintf("%d %s", nAfter, clocks))
		}
	}
	var b strings.Builder
	if len(late) > 0 {
		fmt.Fprintf(&b, "\nLate takeovers (rounds: %s): a racer held back past the first winner's lease (the machine was loaded) found it ended and took the lock over, as the lock is meant to; the two leases did not run at once, and the table counts the later winner as the holder.\n",
			strings.Join(late, ", "))
	}
	if len(afterLease) > 0 {
		fmt.Fprintf(&b, "\nRefreshes after the lease (rounds: %s): the winner's Refresh was answered after its lease had ended by its own clock, and is refused for that alone; the table does not count those refusals.\n",
			strings.Join(afterLease, ", "))
	}
	return b.String()
}
