package benchmark

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/locklab/locklab/record"
	"github.com/locklab/locklab/report"
)

// cpuPartsSection shows where an uncontended pair's CPU went, from the
// profile and the servers' own command time (profile.go): the figures
// that say why a lock falls short of its peer or of its round-trip bound,
// and which part of the difference no lock with as many round trips
// could avoid.
func cpuPartsSection(rep *record.Bench, p printer) {
	var rows []record.BenchResult
	for _, r := range rep.Impls {
		if c := uncontendedCPU(r); c != nil && c.Process != nil {
			rows = append(rows, r)
		}
	}
	if len(rows) == 0 {
		return
	}
	p("## Where an uncontended pair's CPU goes\n\n")
	p("The lab's process's CPU per acquire+release in every uncontended slice of every trial, the slices the rates\n")
	p("above come from (a lock and its peers in turn), as the kernel counts it (`getrusage`, read around each slice),\n")
	p("split in the shares a CPU profile of the same slices found (100 samples per CPU-second; `samples` says how many,\n")
	p("and a part of a few samples is rough).\n")
	p("A sample is charged to the system call it is in, if any, else to the innermost function outside Go's standard\n")
	p("library, else to the Go runtime: `lock` is the lock's own code (ours, or the peer library's), `library` the\n")
	p("client library it talks through, `harness` the lab's code driving it, `runtime` the Go scheduler and garbage\n")
	p("collector, `syscalls` the kernel sending and receiving each round trip and waking threads. A lock with as many\n")
	p("round trips as another cannot avoid the other's system calls and runtime; what it adds in `lock` and `library`\n")
	p("is its own. Beside them, the servers' CPU per pair and, where the servers count it themselves (Redis: `INFO\n")
	p("commandstats`), their time running the lock's commands and scripts, both read in the CPU windows above: the\n")
	p("rest of the servers' CPU is reading, parsing and answering requests, which every round trip costs. The last\n")
	p("column takes the best peer's figures from ours (see \"Against the best peer\"): where our lock is behind, what\n")
	p("it spends more on; differences of a few µs are within the noise of these figures.\n\n")
	best := map[string]string{}
	for _, c := range bestPeers(rep) {
		if c.workload == Uncontended {
			best[c.lock] = c.peer
		}
	}
	byName := map[string]record.BenchResult{}
	for _, r := range rep.Impls {
		byName[r.Name] = r
	}
	heads := []string{"lock", "round trips", "process, µs"}
	for _, part := range record.Parts {
		heads = append(heads, partHeading(part))
	}
	heads = append(heads, "samples", "servers, µs", "in commands", "against the best peer")
	right := []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	t := report.NewTable(heads...).AlignRight(right...).PadRule()
	for _, r := range rows {
		c := uncontendedCPU(r)
		row := []string{labelOf(r), roundTripLabel(r), fmtStat(*c.Process)}
		for _, part := range record.Parts {
			row = append(row, fmtNum(c.ClientParts[part]))
		}
		srv, cmd := "–", "–"
		if c.Servers != nil {
			srv = fmtStat(*c.Servers)
		}
		if c.ServerCommands != nil {
			cmd = fmtNum(c.ServerCommands.Median)
		}
		against := ""
		if peer, ok := best[r.Name]; ok {
			if pc := uncontendedCPU(byName[peer]); pc != nil && pc.Process != nil {
				against = "`" + peer + "`: " + cpuDifference(c, pc)
			}
		}
		row = append(row, fmt.Sprint(c.ProfileSamples), srv, cmd, against)
		t.Row(row...)
	}
	p("%s\n", t)
}

func partHeading(part string) string {
	switch part {
	case record.PartLibrary:
		return "library"
	case record.PartRuntime:
		return "runtime"
	case record.PartSyscalls:
		return "syscalls"
	}
	return part
}

func uncontendedCPU(r record.BenchResult) *record.CPUPerPair {
	if r.Uncontended == nil {
		return nil
	}
	return r.Uncontended.CPU
}

// cpuDifference says how ours spends more (or less) CPU per pair than the
// peer: the profiled clients' difference with its two largest parts, and
// the servers' time in commands where counted (their CPU time, read in
// windows apart, is too noisy to take one lock's from another's).
func cpuDifference(ours, peer *record.CPUPerPair) string {
	type diff struct {
		part string
		us   float64
	}
	var ds []diff
	for _, part := range record.Parts {
		ds = append(ds, diff{partHeading(part), ours.ClientParts[part] - peer.ClientParts[part]})
	}
	sort.SliceStable(ds, func(i, j int) bool { return math.Abs(ds[i].us) > math.Abs(ds[j].us) })
	var parts []string
	for _, d := range ds[:2] {
		parts = append(parts, d.part+" "+signed(d.us))
	}
	out := "clients " + signed(ours.Process.Median-peer.Process.Median) + " µs (" + strings.Join(parts, ", ") + ")"
	if ours.ServerCommands != nil && peer.ServerCommands != nil {
		out += ", server commands " + signed(ours.ServerCommands.Median-peer.ServerCommands.Median) + " µs"
	}
	return out
}

// signed is a µs difference with its sign.
func signed(us float64) string {
	if us >= 0 {
		return "+" + fmtNum(us)
	}
	return "−" + fmtNum(-us)
}
