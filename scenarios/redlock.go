package scenarios

import (
	"errors"
	"github.com/locklab/locklab/checker"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/cluster/hosts"
	"github.com/locklab/locklab/impls"
)

// multiRedis applies to locks over several independent Redis nodes: a
// kind whose lock nodes are independent (cluster.FanOuter), at least 3.
func multiRedis(spec impls.Spec, _ bool) error {
	k, err := cluster.KindOf(spec.Backend.Kind)
	_, independent := k.(cluster.FanOuter)
	if err != nil || !independent || spec.Backend.Nodes < 3 {
		return errors.New("it needs a lock over at least 3 independent Redis nodes")
	}
	return nil
}

// movableClocks: multiRedis, on servers whose clocks the lab can move
// here (not in containers of another machine's engine).
func movableClocks(spec impls.Spec, fencing bool) error {
	if err := multiRedis(spec, fencing); err != nil {
		return err
	}
	return cluster.ClockShiftAvailable()
}

// The three bare-majority Redlock scenarios first cut the holder off the
// nodes beyond a bare majority for the whole run (standing proxy resets,
// so its grant lands on exactly a quorum), then strike a node of that
// majority while the holder is in its section (the nemesis's fixed
// schedules of the same names).
func init() {
	Register(alone(redlockWhy, scheduleScenario("redlock-restart", checker.RiskAtStrike,
		"a node in the holder's bare majority restarts empty at once",
		multiRedis)))

	Register(alone(redlockWhy, scheduleScenario("redlock-restart-delayed", checker.RiskAtStrike,
		"a node in the holder's bare majority crashes and restarts empty only after the max TTL (antirez's delayed restart)",
		multiRedis)))

	Register(alone(redlockWhy, scheduleScenario("redlock-clock-jump", checker.RiskAtStrike,
		"the clock of a node in the holder's bare majority jumps forward past the TTL",
		movableClocks)))

	Register(alone(redlockWhy, scheduleScenario("redlock-partition", checker.RiskAtStrike,
		"every client is cut off a minority of the nodes by dropped packets (still available), then off a majority (unavailable, never unsafe)",
		redlockPartition)))
}

// redlockPartition applies to Redlock's independent nodes when the lab can
// put them and the clients on hosts of their own, where a cut drops
// packets.
func redlockPartition(spec impls.Spec, fencing bool) error {
	if err := multiRedis(spec, fencing); err != nil {
		return err
	}
	return hosts.Available()
}
