// Package engine is the one place a run happens: it starts the servers a
// run needs (cluster), its client worker processes (runner), executes a
// schedule's steps through the nemesis's fault kinds, and collects every
// client's history into one. It records; it never decides: the history
// goes to package checker, which returns the verdict.
//
// Three bodies share it: RunSchedule (a nemesis schedule, fixed or drawn,
// which is what explore, the shrinker's replays and most matrix cells
// run), RunScript (the coupon sale, whose workload and figures a schedule
// does not carry; its pause is a nemesis kind's) and the in-process
// workloads (contention, hand-off, re-entry), all
// started through Run or RunSchedule, which make the run dir, start and
// stop the servers and reset the protected counter in one place. A
// scenario (package scenarios) is data that names one of them;
// RunScenario and RunCell run it.
package engine
