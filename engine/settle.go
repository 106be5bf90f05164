package engine

import (
	"context"
	"fmt"

	lin "github.com/locklab/locklab/linearizability"
	"github.com/locklab/locklab/nemesis"
)

// settleStep is one step's kind that readies the servers before the
// faults (nemesis.Settler), with the step's target.
type settleStep struct {
	kind   string
	target string
	settle nemesis.Settler
}

// settlersOf lists s's steps whose kind settles, once per kind and target.
func settlersOf(s nemesis.Schedule) ([]settleStep, error) {
	var out []settleStep
	seen := map[[2]string]bool{}
	for _, st := range s.Faults {
		k, err := nemesis.Lookup(st.Kind)
		if err != nil {
			return nil, err
		}
		settler, ok := k.(nemesis.Settler)
		if !ok || seen[[2]string{st.Kind, st.Target}] {
			continue
		}
		seen[[2]string{st.Kind, st.Target}] = true
		out = append(out, settleStep{kind: st.Kind, target: st.Target, settle: settler})
	}
	return out, nil
}

// settleAll runs each settler once, after the workers have built their
// clients and before any is granted the lock, and records what each did
// in the history (lin.Settled, which nothing judges).
func settleAll(ctx context.Context, env *Env, sys *system, steps []settleStep, logf func(string, ...any)) error {
	for _, st := range steps {
		begin := lin.Now()
		note, err := st.settle.Settle(ctx, sys, st.target)
		if err != nil {
			return fmt.Errorf("settle %s %s before the faults: %w", st.kind, st.target, err)
		}
		text := fmt.Sprintf("before %s %s: %s", st.kind, st.target, note)
		logf("settled %s", text)
		env.Rec.Record(lin.Event{Kind: lin.Settled, Time: begin, End: lin.Now(), Text: text})
	}
	return nil
}
