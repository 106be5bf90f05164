package scenarios

import (
	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/nemesis"
)

func init() {
	Register(scheduleScenario(nemesis.HolderSessionEnded,
		"the lock server ends the holder's sessions (an operator's pg_terminate_backend or KILL) while it is inside "+
			"its critical section and alive; it writes a fifth of a TTL later, within its lease",
		func(spec impls.Spec, _ bool) error { return nemesis.SessionsEnd(spec) }))
}
