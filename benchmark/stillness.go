package benchmark

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/locklab/locklab/record"
	"github.com/locklab/locklab/report"
)

// How still the headline figures held, and where they did not, why: the
// report judges its own figures against the ±WideInterval a reader can
// quote, and names the cause of each that misses, from the run's own
// measurements rather than a guess.

// headline is one headline figure of the run: a lock's pairs/s on a
// workload, its per-trial ratio to a peer, or a backend's round-trip
// limit.
type headline struct {
	kind, name string
	stat       record.Stat
	// backend is the servers the figure ran on: a lock's, or the limit's.
	backend string
}

// headlines gathers every headline figure of rep.
func headlines(rep *record.Bench) []headline {
	var out []headline
	for _, l := range rep.Limits {
		out = append(out, headline{"round-trip limit, one client", l.Backend, l.OneClient, l.Backend},
			headline{fmt.Sprintf("round-trip limit, %d clients", l.Clients), l.Backend, l.NClients, l.Backend})
	}
	for _, r := range rep.Impls {
		if r.Uncontended != nil {
			out = append(out, headline{"uncontended pairs/s", r.Name, r.Uncontended.PairsPerSec, r.Backend})
		}
		if r.Contended != nil {
			out = append(out, headline{"contended pairs/s", r.Name, r.Contended.PairsPerSec, r.Backend})
		}
	}
	for _, c := range bestPeers(rep) {
		out = append(out, headline{c.workload + " ratio to the best peer", c.lock + " / " + c.peer, c.ratio, c.backend})
	}
	return out
}

// machineSpread is how much a backend's one-client round-trip limit moved
// from trial to trial: the machine's own speed, as no lock is involved.
func machineSpread(rep *record.Bench, backend string) (float64, bool) {
	for _, l := range rep.Limits {
		if l.Backend == backend {
			return l.OneClient.HalfWidth()
		}
	}
	return 0, false
}

// cause says why a figure's interval is wide, from the run itself.
func cause(rep *record.Bench, h headline) string {
	if _, ok := h.stat.HalfWidth(); !ok {
		return "too few trials for an interval"
	}
	spread, ok := machineSpread(rep, h.backend)
	switch {
	case strings.Contains(h.kind, "ratio"):
		return "the two locks' speeds moved apart from trial to trial, though they took turns slice by slice: the locks' own variation (their waits and back-offs), not the machine's"
	case ok && spread > record.WideInterval:
		return fmt.Sprintf("the machine: the servers' own round-trip limit moved ±%.0f%% in this run", 100*spread)
	case ok:
		return fmt.Sprintf("the lock itself: the servers' round-trip limit held to ±%.0f%%", 100*spread)
	}
	return "no limit measured beside it"
}

// stillnessSection reports how many headline figures hold to ±WideInterval
// and names each that does not, with its cause.
func stillnessSection(rep *record.Bench, p printer) {
	hs := headlines(rep)
	if len(hs) == 0 {
		return
	}
	p("## How still the figures held\n\n")
	p("Every headline figure of this run (each lock's uncontended and contended pairs/s, each ratio of a lock of ours\n")
	p("to the best peer on its backend, each round-trip limit) against the ±%.0f%% a reader can quote. A lock and its\n", 100*record.WideInterval)
	p("peers took turns slice by slice, so their ratio is taken trial by trial; a rate moves with the machine's own\n")
	p("speed, which the round-trip limit measures with no lock involved, so a wide rate beside a wide limit is the\n")
	p("machine, and a wide rate beside a still limit is the lock.\n\n")
	var kinds []string
	held, all := map[string]int{}, map[string]int{}
	var wide []headline
	for _, h := range hs {
		if !slices.Contains(kinds, h.kind) {
			kinds = append(kinds, h.kind)
		}
		all[h.kind]++
		if h.stat.Wide() {
			wide = append(wide, h)
		} else {
			held[h.kind]++
		}
	}
	t := report.NewTable("figure", "within ±"+strconv.Itoa(int(100*record.WideInterval))+"%", "of").AlignRight(1, 2).PadRule()
	total, totalHeld := 0, 0
	for _, k := range kinds {
		t.Row(k, strconv.Itoa(held[k]), strconv.Itoa(all[k]))
		total += all[k]
		totalHeld += held[k]
	}
	t.Row("**all**", "**"+strconv.Itoa(totalHeld)+"**", "**"+strconv.Itoa(total)+"**")
	p("%s\n", t)
	if len(wide) == 0 {
		return
	}
	p("The figures beyond ±%.0f%%, and why:\n\n", 100*record.WideInterval)
	w := report.NewTable("figure", "of", "measured", "cause").AlignRight(2).PadRule()
	for _, h := range wide {
		w.Row(h.kind, "`"+h.name+"`", fmtStat(h.stat), cause(rep, h))
	}
	p("%s\n", w)
}

// peerComparison is one lock of ours against the best peer on its backend
// on one workload: the peer with the highest median pairs/s there.
type peerComparison struct {
	lock, peer, workload, backend string
	ratio                         record.Stat
}

// ours is a correct lock of the lab's own: not a peer, not a guest (another
// project's library), not broken, not the in-process control.
func ours(r record.BenchResult) bool {
	return !r.Peer && r.Broken == "" && !strings.HasPrefix(r.Name, "guest:") && r.Backend != inProcess
}

// bestPeers compares every lock of ours with the fastest peer on its
// backend, per workload, trial by trial.
func bestPeers(rep *record.Bench) []peerComparison {
	var out []peerComparison
	for _, w := range []string{Uncontended, Contended} {
		for i := range rep.Impls {
			r := &rep.Impls[i]
			if !ours(*r) || len(pairsOf(r, w)) == 0 {
				continue
			}
			var best *record.BenchResult
			for j := range rep.Impls {
				q := &rep.Impls[j]
				// The same servers: the backend, and for Redis as many lock
				// nodes (Redlock's peer is a Redlock).
				if !q.Peer || q.Backend != r.Backend || q.RedisNodes != r.RedisNodes || len(pairsOf(q, w)) == 0 {
					continue
				}
				if best == nil || pairsStat(q, w).Median > pairsStat(best, w).Median {
					best = q
				}
			}
			if best == nil {
				continue
			}
			out = append(out, peerComparison{lock: r.Name, peer: best.Name, workload: w, backend: r.Backend,
				ratio: NewStat(trialRatios(pairsOf(r, w), pairsOf(best, w)))})
		}
	}
	return out
}

// bestPeerSection shows each lock of ours against the best peer on its
// backend: ahead when the whole interval of the per-trial ratio clears 1.0.
func bestPeerSection(rep *record.Bench, p printer) {
	cs := bestPeers(rep)
	if len(cs) == 0 {
		return
	}
	p("## Against the best peer\n\n")
	p("Each correct lock of ours against the fastest peer library on the same servers (the highest median pairs/s on\n")
	p("that workload, not only the closest peer), as the ratio of their pairs/s trial by trial: `ahead` when the whole\n")
	p("%.0f%% interval clears 1.0, `behind` when it stays below, `within noise` otherwise.\n\n", 100*record.Confidence)
	t := report.NewTable("lock", "workload", "best peer", "ratio", "verdict").AlignRight(3).PadRule()
	for _, c := range cs {
		t.Row("`"+c.lock+"`", c.workload, "`"+c.peer+"`",
			fmtStatWith(c.ratio, func(f float64) string { return strconv.FormatFloat(f, 'f', 2, 64) + "×" }),
			verdictWord(verdict(c.ratio, 1.0, true)))
	}
	p("%s\n", t)
}

// verdictWord names a ratio's verdict against 1.0 as this section does.
func verdictWord(v string) string {
	switch v {
	case "met":
		return "ahead"
	case "short":
		return "**behind**"
	}
	return "within noise"
}
