package scenarios

import "github.com/locklab/locklab/checker"

func init() {
	Register(alone(scheduleScenario("server-restart", checker.RiskAtStrike,
		"the single Redis lock server is SIGKILLed and restarted without its data while a client holds the lock",
		singleRedis)))

	// The grant never reaches the replica (replica-promote stalls it
	// first), and the clients move to the promoted replica through the
	// in-process proxy, which works in container mode too.
	Register(alone(scheduleScenario("redis-failover", checker.RiskAtPromotion,
		"the grant never reaches the replica; the master dies; the replica is promoted and clients move to it",
		singleRedis)))
}
