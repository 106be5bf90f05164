package scenarios

import (
	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/nemesis"
)

func init() {
	Register(scheduleScenario(nemesis.HolderSessionEnded,
		"the lock server ends the holder's sessions (an operator's pg_terminate_backend or KILL) while it is inside "+
			"its critical section and alive; it writes half a TTL later",
		func(spec impls.Spec, _ bool) error { return nemesis.SessionsEnd(spec) }))
}
