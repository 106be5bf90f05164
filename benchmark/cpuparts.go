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
		if c := uncontendedCPU(r); c != nil && len(c.ClientParts) > 0 {
			rows = append(rows, r)
		}
	}
	if len(rows) == 0 {
		return
	}
	p("## Where an uncontended pair's CPU goes\n\n")
	p("The clients' CPU per acquire+release in the uncontended CPU windows above (its median), split by the code it\n")
	p("ran, in the shares a CPU profile of the lab's process found over every uncontended slice of every trial (100\n")
	p("samples per CPU-second; `samples` says how many). A sample is charged to the system call it is in, if any, else\n")
	p("to the innermost function outside Go's standard library, else to the Go runtime: `lock` is the lock's own code\n")
	p("(ours, or the peer library's), `library` the client library it talks through, `harness` the lab's code\n")
	p("driving it, `runtime` the Go scheduler and garbage collector, `syscalls` the kernel sending and receiving each\n")
	p("round trip and waking threads. A lock with as many round trips as another cannot avoid the other's system calls\n")
	p("and runtime; what it adds in `lock` and `library` is its own. Beside them, the servers' CPU per pair and, where\n")
	p("the servers count it (Redis: `INFO commandstats`), the part spent running the lock's commands and scripts: the\n")
	p("rest is reading, parsing and answering requests, which every round trip costs. The last column takes the best\n")
	p("peer's figures from ours (see \"Against the best peer\"): where our lock is behind, what it spends more on.\n\n")
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
	heads := []string{"lock", "round trips", "clients, µs"}
	for _, part := range record.Parts {
		heads = append(heads, partHeading(part))
	}
	heads = append(heads, "samples", "servers, µs", "in commands", "against the best peer")
	right := []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	t := report.NewTable(heads...).AlignRight(right...).PadRule()
	for _, r := range rows {
		c := uncontendedCPU(r)
		row := []string{labelOf(r), roundTripLabel(r), fmtStat(c.Clients)}
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
			if pc := uncontendedCPU(byName[peer]); pc != nil && len(pc.ClientParts) > 0 {
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
// peer: the clients' difference with its two largest parts, and the
// servers', with their command time where counted.
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
	out := "clients " + signed(ours.Clients.Median-peer.Clients.Median) + " µs (" + strings.Join(parts, ", ") + ")"
	if ours.Servers != nil && peer.Servers != nil {
		out += ", servers " + signed(ours.Servers.Median-peer.Servers.Median) + " µs"
		if ours.ServerCommands != nil && peer.ServerCommands != nil {
			out += " (commands " + signed(ours.ServerCommands.Median-peer.ServerCommands.Median) + ")"
		}
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
