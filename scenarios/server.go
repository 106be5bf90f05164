package scenarios

import "github.com/locklab/locklab/checker"

func init() {
	Register(alone(restartWhy, scheduleScenario("server-restart", checker.RiskAtStrike,
		"the single Redis lock server is SIGKILLed and restarted without its data while a client holds the lock",
		singleRedis)))

	// The grant never reaches the replica (replica-promote stalls it
	// first), and the clients move to the promoted replica through the
	// in-process proxy, which works in container mode too.
	Register(alone("the promoted replica must take the clients while the holder still waits inside its lease, and under another cell's load a server's restart or promotion took 0.6 s where it takes 20-30 ms", scheduleScenario("redis-failover", checker.RiskAtPromotion,
		"the grant never reaches the replica; the master dies; the replica is promoted and clients move to it",
		singleRedis)))
}
