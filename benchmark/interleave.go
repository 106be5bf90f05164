package benchmark

import (
	"context"
	"time"
)

// Where the noise of this machine comes from, measured (see the package
// comment): neither the clients and servers taking turns on a core nor
// warm-up, but the machine's own speed changing faster than a trial. Two
// locks measured one after the other, half a second each, see different
// machines, and their ratio moved ±14–31% from trial to trial. So the locks
// a ratio compares (a lock and its peers, on one backend) are measured in
// turns of a few slices each, inside one trial: a slow moment lands on
// every one of them alike, and their per-trial ratio holds still even where
// their rates do not.

// interleave measures sessions in turns: slices rounds of one slice each
// per session, each round starting one session further on (none always
// follows the same one); a session's run is the sum of its slices (every
// slice a window of its own, drained like any window). The sessions are
// not hooked nor sampled for CPU: the server counters and the CPU time are
// read in windows of their own (costWindows), as reading them around
// every slice would cost more than a slice's work. A profiled load's slices
// are profiled (profile.go), the profile started and read between slices.
func (b *bench) interleave(ctx context.Context, sessions []*session, slices int) ([]*run, error) {
	runs := make([]*run, len(sessions))
	for i := range runs {
		runs[i] = &run{}
	}
	for round := 0; round < slices; round++ {
		for k := range sessions {
			i := (round + k) % len(sessions)
			s := sessions[i]
			w, err := s.window(ctx, sliceOf(s.l.duration, slices), nil)
			if err != nil {
				return nil, err
			}
			runs[i].add(w)
		}
	}
	for i, s := range sessions {
		b.logErrors(s.l, runs[i])
	}
	return runs, nil
}

// sliceOf is one slice of a load measured in slices turns.
func sliceOf(d time.Duration, slices int) time.Duration {
	if slices < 1 {
		return d
	}
	return d / time.Duration(slices)
}
