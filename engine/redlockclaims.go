package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/workload/docclaims"
)

// RedlockClaims are the measurements of the source documents' claims
// about Redlock and a lease on its nodes (lesson 17), each with its
// settings; the job fills in the nodes' addresses and how to stall one.
type RedlockClaims struct {
	// Split is one race of split votes per entry (its clients differ).
	Split []docclaims.SplitOptions
	// Down takes the lock with none to a majority of the nodes stalled;
	// NodeTimeout is how long the lock waits for one node's answer.
	Down        docclaims.DownOptions
	NodeTimeout time.Duration
	// Budget is one row of clients waiting within a budget per entry
	// (their work differs).
	Budget []docclaims.BudgetOptions
	// Script blocks the first node with a slow script.
	Script docclaims.ScriptOptions
}

// RedlockClaimsMeasured is what a RedlockClaimsJob measured.
type RedlockClaimsMeasured struct {
	Split  []docclaims.SplitResult
	Down   docclaims.DownResult
	Budget []docclaims.BudgetRow
	Script docclaims.ScriptResult
}

// RedlockClaimsJob is the job that measures opt's claims on the nodes of
// the lock it runs for (Options.Impl: docclaims.Redlock, five Redis
// nodes), in order: the split votes, the nodes stalled (SIGSTOP through
// the started nodes, every one woken before the next measurement), the
// waiting budget, the slow script. The engine starts and stops the
// servers as for every run; the clients are in-process, one lock client
// each, as the contention workload's are. What it measured lands in
// *got, and its verdict is the checker's over the counts that show the
// lock kept to its rule (JudgeRedlockClaims).
func RedlockClaimsJob(opt RedlockClaims, got *RedlockClaimsMeasured) Job {
	return Job{Name: "redlock-claims", Body: func(ctx context.Context, env *Env) (*Outcome, error) {
		nodes := env.Topo.Lock(env.Impl.Backend.Kind)
		addrs := env.Topo.Endpoints().Addrs(env.Impl.Backend.Kind)
		if len(nodes) == 0 || len(nodes) != len(addrs) {
			return nil, fmt.Errorf("the claims need the %s servers of %s, and the run started %d (%d addresses)", env.Impl.Backend.Kind, env.Impl.Name, len(nodes), len(addrs))
		}
		var m RedlockClaimsMeasured
		for _, s := range opt.Split {
			s.Redis = addrs
			env.Logf("lesson claims: split votes, %d redlock clients, %d rounds each way", s.Clients, s.Rounds)
			split, err := docclaims.MeasureSplitVotes(ctx, s)
			if err != nil {
				return nil, fmt.Errorf("split votes: %w", err)
			}
			m.Split = append(m.Split, split...)
		}
		down := opt.Down
		down.Redis = addrs
		down.Stall = func(i int) error { return nodes[i].Pause() }
		down.Wake = func(i int) error { return nodes[i].Resume() }
		env.Logf("lesson claims: redlock with nodes stalled, %d acquires per row", down.Acquires)
		var err error
		if m.Down, err = docclaims.MeasureNodesDown(ctx, down, opt.NodeTimeout); err != nil {
			return nil, fmt.Errorf("nodes down: %w", err)
		}
		for _, b := range opt.Budget {
			b.Redis = addrs
			env.Logf("lesson claims: waiting budget TTL/2, %d clients, work %s", b.Clients, b.Hold)
			row, err := docclaims.MeasureBudget(ctx, b)
			if err != nil {
				return nil, fmt.Errorf("waiting budget: %w", err)
			}
			m.Budget = append(m.Budget, row)
		}
		script := opt.Script
		script.Redis = addrs[0]
		env.Logf("lesson claims: a %s script on one node, %d other clients", script.Script, script.Clients)
		if m.Script, err = docclaims.MeasureSlowScript(ctx, script); err != nil {
			return nil, fmt.Errorf("slow script: %w", err)
		}
		*got = m
		env.Phase(PhaseWorkload)
		out := &Outcome{Clients: len(addrs), Figures: map[string]float64{}}
		out.Verdict, out.Detail = JudgeRedlockClaims(m)
		env.Phase(PhaseCheck)
		return out, nil
	}}
}

// JudgeRedlockClaims has the checker judge every measurement of m: the
// worst of SplitVerdict (each race), DownVerdict, BudgetVerdict (each
// row) and ScriptVerdict, with the line of the first that gave it. What
// the measurements took, the lesson page describes; a measurement of
// nothing is inconclusive.
func JudgeRedlockClaims(m RedlockClaimsMeasured) (checker.Verdict, string) {
	parts := []func() (checker.Verdict, string){
		func() (checker.Verdict, string) { return DownVerdict(m.Down) },
		func() (checker.Verdict, string) { return ScriptVerdict(m.Script) },
	}
	if len(m.Split) == 0 {
		parts = append(parts, func() (checker.Verdict, string) { return checker.JudgeProgress(0), "split votes: no race" })
	}
	for _, s := range m.Split {
		parts = append(parts, func() (checker.Verdict, string) { return SplitVerdict(s) })
	}
	if len(m.Budget) == 0 {
		parts = append(parts, func() (checker.Verdict, string) { return checker.JudgeProgress(0), "waiting budget: no row" })
	}
	for _, b := range m.Budget {
		parts = append(parts, func() (checker.Verdict, string) { return BudgetVerdict(b) })
	}
	return worstOf(parts)
}

// worstOf is the checker's worst of parts' verdicts (checker.Worst), with
// the line of the first part that gave it.
func worstOf(parts []func() (checker.Verdict, string)) (checker.Verdict, string) {
	var v checker.Verdict
	var detail string
	for _, p := range parts {
		w, d := p()
		if checker.Worst(v, w) != v {
			v, detail = w, d
		}
	}
	if checker.Survived(v) {
		detail = ""
	}
	return v, detail
}

// SplitVerdict is the checker's verdict on one way's races of split votes
// (checker.JudgeVoteRaces: stuck when a race ended its bound with no
// grant), with a line on the race that gave it when that is not safe.
func SplitVerdict(s docclaims.SplitResult) (checker.Verdict, string) {
	granted := make([]bool, len(s.Rounds))
	for i, r := range s.Rounds {
		granted[i] = r.GrantMS >= 0
	}
	v, bad := checker.JudgeVoteRaces(granted)
	way := fmt.Sprintf("split votes, %d clients, back-off %v", s.Clients, s.Backoff)
	switch {
	case checker.Survived(v):
		return v, ""
	case bad < 0:
		return v, way + ": no round"
	}
	return v, fmt.Sprintf("%s, round %d: no grant within %s", way, bad+1, s.Bound)
}

// DownVerdict is the checker's verdict on the acquires with nodes stalled
// (checker.JudgeQuorumAcquires: granted while a majority runs, refused
// once it does not), with a line on the row that gave it when that is not
// safe.
func DownVerdict(d docclaims.DownResult) (checker.Verdict, string) {
	rows := make([]checker.QuorumAcquires, len(d.Rows))
	for i, r := range d.Rows {
		rows[i] = checker.QuorumAcquires{Nodes: d.Nodes, Down: r.Down, Granted: r.Acquire.N, Refused: r.Refused}
	}
	v, bad := checker.JudgeQuorumAcquires(rows)
	switch {
	case checker.Survived(v):
		return v, ""
	case bad < 0:
		return v, "nodes down: no row"
	}
	r := rows[bad]
	return v, fmt.Sprintf("nodes down, %d of %d stalled: %d granted, %d refused", r.Down, r.Nodes, r.Granted, r.Refused)
}

// BudgetVerdict is the checker's verdict on one row of clients waiting
// within a budget (checker.JudgeProgress: some grant), with a line when
// that is not safe.
func BudgetVerdict(b docclaims.BudgetRow) (checker.Verdict, string) {
	v := checker.JudgeProgress(b.Granted)
	if checker.Survived(v) {
		return v, ""
	}
	return v, fmt.Sprintf("waiting budget, work %s: nothing granted (%d gave up)", b.Hold, b.GaveUp)
}

// ScriptVerdict is the checker's verdict on the leases held across the
// slow script and without it (checker.JudgeLeaseViews: a holder's refresh
// fails exactly when another client could take the lock after it), with
// a line on the lease that gave it when that is not safe.
func ScriptVerdict(s docclaims.ScriptResult) (checker.Verdict, string) {
	views := make([]checker.LeaseView, len(s.Leases))
	for i, l := range s.Leases {
		views[i] = checker.LeaseView{RefreshFailed: l.Refused || l.Error != "", TakenByOther: l.TakenByOther}
	}
	v, bad := checker.JudgeLeaseViews(views)
	switch {
	case checker.Survived(v):
		return v, ""
	case bad < 0:
		return v, "slow script: no lease"
	}
	l := s.Leases[bad]
	return v, fmt.Sprintf("slow script, script %v: the refresh failed %v (%s), another client took the lock %v", l.Script, views[bad].RefreshFailed, l.Error, l.TakenByOther)
}
