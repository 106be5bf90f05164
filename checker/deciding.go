package checker

import "slices"

// DecidingRun is the run that made a cell's verdict what it is: the first
// of its runs whose verdict is the cell's (the worst run's, CellVerdict),
// so its seed replays the cell's counterexample when it has one. It is -1
// when no run gave the cell's verdict (a cell of no runs, or a verdict
// recorded by older rules than its runs').
func DecidingRun(cell Verdict, runs []Verdict) int {
	return slices.Index(runs, cell)
}
