package benchmark

import (
	"slices"
	"strconv"

	"github.com/locklab/locklab/record"
	"github.com/locklab/locklab/report"
)

// protocolTwin pairs a guest with the lab's own lock it wraps
// (guests/lab-redis-setnx-px): the same Go lock, client library and round
// trips, reached through the guest protocol instead of a call. The guest's
// pairs/s over the native lock's is then what the protocol itself costs
// (two pipe crossings, a JSON line each way and the guest's own scheduler
// per operation), and nothing else; the other guests' figures carry the same
// cost on top of their own library's.
type protocolTwin struct{ guest, native string }

var protocolTwins = []protocolTwin{
	{"guest:lab-redis-setnx-px", "redis-setnx-px"},
}

// wrapsOurs says whether a guest wraps a lock of the lab's own.
func wrapsOurs(name string) bool {
	return slices.ContainsFunc(protocolTwins, func(tw protocolTwin) bool { return tw.guest == name })
}

// protocolOverhead is each twin's ratio per workload, trial by trial as
// the targets' ratios are (both ran in the same trial, so a slow minute of
// the machine cancels out), with its interval: bench.json's Overhead,
// which bench.md and the site both show.
func protocolOverhead(rep *record.Bench) []record.ProtocolOverhead {
	byName := map[string]*record.BenchResult{}
	for i := range rep.Impls {
		byName[rep.Impls[i].Name] = &rep.Impls[i]
	}
	var out []record.ProtocolOverhead
	for _, tw := range protocolTwins {
		g, n := byName[tw.guest], byName[tw.native]
		if g == nil || n == nil {
			continue
		}
		for _, w := range []string{Uncontended, Contended} {
			gs, ns := pairsOf(g, w), pairsOf(n, w)
			rs := trialRatios(gs, ns)
			if len(rs) == 0 {
				continue
			}
			out = append(out, record.ProtocolOverhead{Guest: tw.guest, Native: tw.native, Workload: w,
				GuestPairs: NewStat(gs), NativePairs: NewStat(ns), Ratio: NewStat(rs)})
		}
	}
	return out
}

// overheadSection shows bench.json's Overhead (computed from the run's
// figures for a bench.json written before it had one).
func overheadSection(rep *record.Bench, p printer) {
	rows := rep.Overhead
	if rows == nil {
		rows = protocolOverhead(rep)
	}
	if len(rows) == 0 {
		return
	}
	times := func(f float64) string { return strconv.FormatFloat(f, 'f', 2, 64) + "×" }
	table := report.NewTable("guest", "wraps", "workload", "guest pairs/s", "native pairs/s", "guest / native").
		AlignRight(3, 4, 5).PadRule()
	for _, o := range rows {
		table.Row("`"+o.Guest+"`", "`"+o.Native+"`", o.Workload, fmtStat(o.GuestPairs), fmtStat(o.NativePairs), fmtStatWith(o.Ratio, times))
	}
	p("## What the guest protocol costs\n\n")
	p("A guest that wraps a lock of the lab's own (the same Go lock, client library and round trips, reached through\n")
	p("the guest protocol, `docs/guests/protocol.md`: a JSON line through a pipe to a child process and one back\n")
	p("per operation), beside that lock called natively. The ratio is taken trial by trial, as the targets' are; what\n")
	p("it falls short of 1 is the protocol's own cost, which every guest's figures carry on top of its library's.\n\n")
	p("%s\n", table)
}
