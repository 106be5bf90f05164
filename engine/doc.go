// Package engine is the one place a run happens: it starts the servers a
// run needs (cluster), its client worker processes (runner), executes a
// schedule's steps through the nemesis's fault kinds, and collects every
// client's history into one. It records; it never decides: the history
// goes to package checker, which returns the verdict.
//
// Two bodies share it: a nemesis schedule, fixed or drawn, on worker
// processes (RunSchedule, FixedJob: what explore, the shrinker's replays
// and every fault scenario run, the coupon sale too, whose workload of
// sales a scenario names beside its schedule), and the in-process
// workloads (contention, hand-off, re-entry), all started through Run or
// RunSchedule, which make the run dir, start and stop the servers and
// reset the protected counter in one place. A scenario (package
// scenarios) is data that names a schedule, a workload, or both;
// RunScenario and RunCell run it. The lessons' measurements are jobs for
// Run too (SaleJob, TakeoverJob, and lesson 17's RedlockClaimsJob and
// EphemeralJob): in-process clients, and for the ephemeral node a worker
// process killed mid-hold, whose counts, not a history, the checker
// judges (checker.JudgeSale, checker.JudgeTakeover, checker.JudgeVoteRaces,
// checker.JudgeQuorumAcquires, checker.JudgeProgress,
// checker.JudgeLeaseViews).
package engine
