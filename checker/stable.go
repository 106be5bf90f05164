package checker

import "math"

// A race-sensitive cell is one whose verdict turns on a race the lab does
// not decide: its expectation row says so, or its runs have disagreed. Three
// runs of such a cell prove little (redis-setnx-px-wait's
// sentinel-split-at-grant was unsafe in 2 of 13 runs; zookeeper's
// leader-isolated on the ensemble in 5 of 5, then 1 of 3, then 0 of 3), so
// it runs as Jepsen does: until a counterexample shows or a budget ends.
// The budget is not arbitrary: it is the number of runs after which a
// counterexample that shows at least once in every 1/Detect runs would
// have shown, but for a chance of Miss.

// UntilStable is the rule a race-sensitive cell's runs follow: run until
// a run is unsafe, or until Trials runs could have shown a counterexample
// and none did, or until Bound runs, whichever comes first.
type UntilStable struct {
	// Detect is p0, the least chance per run that a race-sensitive cell
	// shows its counterexample, assumed rather than measured: the rarest
	// race the lab has seen win is sentinel-split-at-grant's, 2 of 13
	// runs (0.15); a rarer one is below what the rule promises to find.
	Detect float64
	// Miss is the chance of missing such a counterexample the rule
	// accepts: (1-Detect)^Trials < Miss.
	Miss float64
	// Bound is the most runs one cell gets, whatever they showed: the
	// budget, a run or so above Trials so one run that judged nothing
	// (inconclusive) does not end it short.
	Bound int
}

// DefaultUntilStable is the matrix's rule: with p0 = 0.15 and a 5 %
// miss, 19 runs that could have failed and did not (0.85^19 = 4.6 %),
// within 20.
var DefaultUntilStable = UntilStable{Detect: 0.15, Miss: 0.05, Bound: 20}

// Trials is the fewest runs n, each able to show a counterexample, after
// which one that shows with chance Detect per run is missed with a chance
// below Miss: the least n with (1-Detect)^n < Miss.
func (u UntilStable) Trials() int {
	if u.Detect <= 0 || u.Miss <= 0 {
		return math.MaxInt
	}
	if u.Detect >= 1 || u.Miss >= 1 {
		return 1
	}
	n := int(math.Ceil(math.Log(u.Miss) / math.Log(1-u.Detect)))
	// Ceil of an exact quotient is that quotient, where (1-p)^n == Miss
	// is not below it.
	if math.Pow(1-u.Detect, float64(n)) >= u.Miss {
		n++
	}
	return max(n, 1)
}

// Stop says why a cell's runs ended.
type Stop string

const (
	// StopFixed: the cell ran the fixed number of runs every cell gets.
	StopFixed Stop = "fixed"
	// StopCounterexample: a run was unsafe; no later run can change a
	// cell's verdict then (unsafe is the worst, CellVerdict).
	StopCounterexample Stop = "counterexample"
	// StopTrusted: Trials runs could have shown a counterexample and
	// none did.
	StopTrusted Stop = "trusted"
	// StopBound: Bound runs, with neither a counterexample nor Trials runs
	// that could have shown one (some judged nothing).
	StopBound Stop = "bound"
)

// CouldFail reports whether a run could have shown a counterexample had
// its lock let two holders in: porcupine judged enough of its history
// (safe, unavailable, or stuck, whose liveness failure says nothing
// against its sections' order). An inconclusive or unknown run judged too
// little, and an n/a run's fault never reached the lock, so none of them
// makes a missed counterexample less likely.
func CouldFail(v Verdict) bool {
	switch v {
	case Safe, Unavailable, Stuck, Unsafe:
		return true
	}
	return false
}

// Next says whether a race-sensitive cell whose runs so far gave these
// verdicts needs another run, and when not, why it stopped. least is the
// runs every cell gets (the matrix's -runs): a race-sensitive cell gets at
// least as many as any other, so an early counterexample does not cut its
// share short.
func (u UntilStable) Next(runs []Verdict, least int) (more bool, stop Stop) {
	trials, unsafe := 0, false
	for _, v := range runs {
		if CouldFail(v) {
			trials++
		}
		if SafetyViolated(v) {
			unsafe = true
		}
	}
	switch {
	case len(runs) < least:
		return true, ""
	case unsafe:
		return false, StopCounterexample
	case trials >= u.Trials():
		return false, StopTrusted
	case len(runs) >= u.Bound:
		return false, StopBound
	}
	return true, ""
}

// Disagree reports whether a cell's runs gave different verdicts: the
// verdict turned on something the runs did not hold fixed, a race, so the
// cell's later runs follow UntilStable. An n/a run among others counts:
// whether the fault reached the lock at all was the race.
func Disagree(runs []Verdict) bool {
	for _, v := range runs {
		if v != runs[0] {
			return true
		}
	}
	return false
}
