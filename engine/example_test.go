package engine_test

import (
	"context"
	"fmt"
	"time"

	"github.com/locklab/locklab/engine"
	"github.com/locklab/locklab/impls"
	_ "github.com/locklab/locklab/impls/all"
	"github.com/locklab/locklab/workload"
)

// Run is the one place a run's servers and clients start: it starts the
// servers the lock needs and the protected counter's, hands the body its
// environment, and stops every server whatever the body did. The body here
// is the plainest there is, clients racing for one key with no fault; the
// checker (Env.Judge) turns the history into the verdict. Without
// redis-server installed the example prints why the run could not start,
// and fails.
func ExampleRun() {
	spec, err := impls.Lookup("redis-setnx-px")
	if err != nil {
		fmt.Println(err)
		return
	}
	job := engine.Job{Name: "contention", Body: func(ctx context.Context, env *engine.Env) (*engine.Outcome, error) {
		clients, closeClients, err := env.NewClients()
		if err != nil {
			return nil, err
		}
		defer closeClients()
		res := workload.Contend(ctx, clients, env.Sections, env.AcquireBound())
		if res.Failures > 0 || res.Stuck != nil {
			return nil, fmt.Errorf("%d acquires failed, stuck: %v", res.Failures, res.Stuck)
		}
		out := &engine.Outcome{Clients: env.Clients}
		return out, env.Judge(out)
	}}
	out, err := engine.Run(context.Background(), job, engine.Options{
		Impl: spec, Clients: 4, Sections: 200, TTL: time.Second, Seed: 1,
	})
	if err != nil {
		fmt.Println("the run could not start:", err)
		return
	}
	fmt.Println(out.Impl, "on", out.Topology, "with", out.Clients, "clients:", out.Verdict)
	fmt.Println("critical sections checked:", out.Sections)
	// Output:
	// redis-setnx-px on single with 4 clients: safe
	// critical sections checked: 200
}
