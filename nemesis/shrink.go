package nemesis

import (
	"context"
	"time"
)

// Fails replays a candidate schedule and reports whether it still fails
// the way the original did. The caller decides how many replays make an
// answer (a candidate still fails if any of its replays fails).
type Fails func(ctx context.Context, s Schedule) (bool, error)

// ShrinkStats says what shrinking did.
type ShrinkStats struct {
	Candidates int           // schedules tried
	Accepted   int           // of which still failed and were kept
	Elapsed    time.Duration // time spent
	// OutOfTime is set when the budget ran out before the schedule was
	// minimal: the result still fails, but a smaller one may exist.
	OutOfTime bool
}

// Shrink cuts a failing schedule down to a minimal one that still fails:
// first with no faults at all (a lock that fails by itself needs none),
// then each suspect alone (indices of faults the failing history points
// at, most likely first), then by delta debugging over its faults (keep
// one chunk, or drop one, halving the chunks until single faults). Every
// candidate is compacted: every gap as short as the liveness rule allows,
// the run ended a bound after the last heal. It stops when
// budget runs out and returns the smallest failing schedule found so far;
// s itself is assumed to fail.
func Shrink(ctx context.Context, s Schedule, bound time.Duration, budget time.Duration, suspects []int, fails Fails) (Schedule, ShrinkStats, error) {
	start := time.Now()
	var st ShrinkStats
	best := s
	try := func(c Schedule) (bool, error) {
		if time.Since(start) > budget {
			st.OutOfTime = true
			return false, nil
		}
		st.Candidates++
		ok, err := fails(ctx, c)
		if err != nil {
			return false, err
		}
		if ok {
			st.Accepted++
			best = c
		}
		return ok, nil
	}
	done := func() (Schedule, ShrinkStats, error) {
		st.Elapsed = time.Since(start)
		return best, st, ctx.Err()
	}
	empty := s
	empty.Faults = nil
	if ok, err := try(empty.Compact(bound)); err != nil || ok {
		st.Elapsed = time.Since(start)
		return best, st, err
	}
	// The faults the failing history points at, alone: when one of them
	// fails by itself the search is over (no faults did not fail).
	for _, i := range suspects {
		if i < 0 || i >= len(s.Faults) {
			continue
		}
		if ok, err := try(with(s, s.Faults[i:i+1]).Compact(bound)); err != nil || ok {
			st.Elapsed = time.Since(start)
			return best, st, err
		}
	}
	n := 2
	for len(best.Faults) >= 2 && !st.OutOfTime && ctx.Err() == nil {
		chunks := split(best.Faults, n)
		reduced := false
		// Keep one chunk alone.
		for _, c := range chunks {
			if ok, err := try(with(best, c).Compact(bound)); err != nil {
				return best, st, err
			} else if ok {
				n, reduced = 2, true
				break
			}
		}
		// Or drop one chunk (the complements), when there are more than two.
		if !reduced && n > 2 {
			for i := range chunks {
				if ok, err := try(with(best, complement(chunks, i)).Compact(bound)); err != nil {
					return best, st, err
				} else if ok {
					n, reduced = max(n-1, 2), true
					break
				}
			}
		}
		if !reduced {
			if n >= len(best.Faults) {
				break // every single fault is needed
			}
			n = min(2*n, len(best.Faults))
		}
	}
	return done()
}

// with returns s with faults replaced.
func with(s Schedule, faults []Step) Schedule {
	s.Faults = append([]Step(nil), faults...)
	return s
}

// split cuts steps into n nearly equal chunks, in order.
func split(steps []Step, n int) [][]Step {
	var out [][]Step
	for i := 0; i < n; i++ {
		lo, hi := i*len(steps)/n, (i+1)*len(steps)/n
		if hi > lo {
			out = append(out, steps[lo:hi])
		}
	}
	return out
}

// complement joins every chunk but the i-th.
func complement(chunks [][]Step, i int) []Step {
	var out []Step
	for j, c := range chunks {
		if j != i {
			out = append(out, c...)
		}
	}
	return out
}
