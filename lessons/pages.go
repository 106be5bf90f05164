// Package lessons regenerates the teaching pages in docs/lessons/ from real
// runs of the lab: each page's verdicts, commands, timelines and measured
// figures sit between generated markers and are rewritten by `bench
// lessons`, while the prose around them is written by hand.
package lessons

import (
	"strings"

	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/record"
	"github.com/locklab/locklab/topology"
)

// Run is one cell a page runs to show a failure or its fix.
type Run struct {
	ID       string // file stem for the page's timeline and porcupine HTML
	Impl     string
	Scenario string
	Fencing  bool
	Seed     int64 // first seed tried; an expected failure that does not show retries the next ones
	// Topology names the servers' topology (topology.Named); empty is the
	// single one the other pages teach with.
	Topology string
}

// Cell names a row of results/correctness.json.
type Cell struct {
	// Impl is the lock, or "lock @ topology" for a cell of a topology other
	// than the single one, as the matrix names its cells; such a cell is
	// read from results/topologies/NAME/ when the main matrix lacks it.
	Impl     string
	Scenario string
}

// lockOn splits a Cell's Impl into the lock and its topology.
func (c Cell) lockOn() (impl, topo string) {
	return record.SplitRow(c.Impl)
}

// Page is one lesson: its file, the locks it explains, the runs it shows
// and the measured rows it quotes.
type Page struct {
	File  string
	Title string
	Impls []string // the locks whose code the page explains
	Runs  []Run
	// Cells are the matrix rows (with and without fencing) the page quotes.
	Cells []Cell
	// Bench lists the implementations whose speed the page quotes.
	Bench []string
	// Compare lists the pairs of locks whose speed the page's prose
	// compares; its noise block prints each pair's medians with their
	// 95 % intervals (benchnoise.go).
	Compare []Comparison
	// Fairness adds the benchmark's fairness figures for Bench: who gets
	// the lock after a release, how evenly, and the longest wait.
	Fairness bool
	// Sale measures the coupon sale on PostgreSQL each way (package
	// workload/sale): the conditional update beside the locked sale.
	Sale bool
	// EveryTopology: the page's sentences speak of every topology the
	// matrix runs (the decision page), and are held to all of them
	// (ContradictionsEverywhere).
	EveryTopology bool
	// Takeover races redis-getset clients for abandoned locks (package
	// workload/takeover): how often a loser's GETSET overwrites the
	// winner's expiry.
	Takeover bool
	// DocClaims measures the source documents' last claims (package
	// workload/docclaims): Redlock's split votes and stalled nodes, a slow
	// script, a waiting budget, a dead client's ephemeral node.
	DocClaims bool
}

// Pages lists every lesson in reading order.
var Pages = []Page{
	{
		File: "01-no-lock.md", Title: "No lock at all: lost updates and the coupon oversell",
		Impls: []string{"none", "redis-setnx-px"},
		Runs: []Run{
			{ID: "none-contention", Impl: "none", Scenario: "contention", Seed: 1},
			{ID: "none-coupon", Impl: "none", Scenario: "coupon", Seed: 1},
			{ID: "setnx-px-contention", Impl: "redis-setnx-px", Scenario: "contention", Seed: 1},
		},
		Cells: []Cell{{"none", "contention"}, {"none", "coupon"}, {"redis-setnx-px", "contention"}, {"local-mutex", "contention"}},
		Bench: []string{"none", "local-mutex", "redis-setnx-px"},
	},
	{
		File: "02-setnx-then-expire.md", Title: "SETNX then EXPIRE: a crash in between leaves a lock that never expires",
		Impls: []string{"redis-setnx-expire", "redis-setnx-px", "redis-lua-setnx-expire"},
		Runs: []Run{
			{ID: "setnx-expire-crash", Impl: "redis-setnx-expire", Scenario: "crash-after-setnx", Seed: 1},
			{ID: "setnx-px-crash", Impl: "redis-setnx-px", Scenario: "crash-after-setnx", Seed: 1},
			// 004_84007c392b46b35c.txt's other fix: the two commands in one script.
			{ID: "lua-setnx-expire-crash", Impl: "redis-lua-setnx-expire", Scenario: "crash-after-setnx", Seed: 1},
		},
		Cells:   []Cell{{"redis-setnx-expire", "crash-after-setnx"}, {"redis-setnx-px", "crash-after-setnx"}, {"redis-setnx-expire", "holder-crash"}, {"redis-setnx-px", "holder-crash"}},
		Bench:   []string{"redis-setnx-expire", "redis-setnx-px"},
		Compare: []Comparison{{A: "redis-setnx-px", B: "redis-setnx-expire"}},
	},
	{
		File: "03-getset-timestamp.md", Title: "The GETSET timestamp lock: expiry judged by the clients' clocks",
		Impls: []string{"redis-getset", "redis-setnx-px", "redis-getset-own-expiry"},
		Runs: []Run{
			{ID: "getset-clock-skew", Impl: "redis-getset", Scenario: "client-clock-skew", Seed: 1},
			{ID: "getset-late-release", Impl: "redis-getset", Scenario: "late-release", Seed: 1},
			// 003_a6064ed1f179a5a2.txt's variant, under the fault it answers.
			{ID: "getset-own-expiry-late-release", Impl: "redis-getset-own-expiry", Scenario: "late-release", Seed: 1},
			{ID: "setnx-px-clock-skew", Impl: "redis-setnx-px", Scenario: "client-clock-skew", Seed: 1},
		},
		Cells:    []Cell{{"redis-getset", "client-clock-skew"}, {"redis-getset", "late-release"}, {"redis-setnx-px", "client-clock-skew"}},
		Bench:    []string{"redis-getset", "redis-setnx-px"},
		Takeover: true,
	},
	{
		File: "04-releasing-someone-elses-lock.md", Title: "DEL without an owner check, and GET then DEL: releasing someone else's lock",
		Impls: []string{"redis-del-release", "redis-get-del-release", "redis-setnx-px"},
		Runs: []Run{
			{ID: "del-release-late", Impl: "redis-del-release", Scenario: "late-release", Seed: 1},
			{ID: "get-del-release-late", Impl: "redis-get-del-release", Scenario: "late-release", Seed: 1},
			{ID: "setnx-px-late", Impl: "redis-setnx-px", Scenario: "late-release", Seed: 1},
		},
		Cells: []Cell{{"redis-del-release", "late-release"}, {"redis-get-del-release", "late-release"}, {"redis-setnx-px", "late-release"}},
		Bench: []string{"redis-del-release", "redis-get-del-release", "redis-setnx-px"},
	},
	{
		File: "05-lease-expires-under-a-pause.md", Title: "A lease that expires under a pause, and why a watchdog does not save a paused process",
		Impls: []string{"redis-setnx-px", "redis-reentrant"},
		Runs: []Run{
			{ID: "setnx-px-pause", Impl: "redis-setnx-px", Scenario: "pause-past-ttl", Seed: 1},
			{ID: "setnx-px-slow", Impl: "redis-setnx-px", Scenario: "slow-work-past-ttl", Seed: 1},
			{ID: "reentrant-slow", Impl: "redis-reentrant", Scenario: "slow-work-past-ttl", Seed: 1},
			{ID: "reentrant-pause", Impl: "redis-reentrant", Scenario: "pause-past-ttl", Seed: 1},
		},
		Cells: []Cell{{"redis-setnx-px", "pause-past-ttl"}, {"redis-setnx-px", "slow-work-past-ttl"}, {"redis-reentrant", "pause-past-ttl"}, {"redis-reentrant", "slow-work-past-ttl"},
			{"peer-redislock", "slow-work-past-ttl"}, {"peer-redsync", "slow-work-past-ttl"}},
		Bench: []string{"redis-setnx-px", "redis-reentrant"},
	},
	{
		File: "06-fencing-tokens.md", Title: "Fencing tokens: what they fix, who can issue them, what the resource must do",
		Impls: []string{"redis-setnx-px", "redis-reentrant-fenced", "zookeeper", "pg-optimistic"},
		Runs: []Run{
			{ID: "setnx-px-pause-fenced", Impl: "redis-setnx-px", Scenario: "pause-past-ttl", Fencing: true, Seed: 1},
			{ID: "reentrant-fenced-pause-fenced", Impl: "redis-reentrant-fenced", Scenario: "pause-past-ttl", Fencing: true, Seed: 1},
			// The same run as lesson 13's: one command, one set of figures.
			{ID: "coupon-setnx-px-fenced", Impl: "redis-setnx-px", Scenario: "coupon", Fencing: true, Seed: 1},
		},
		Cells: []Cell{{"redis-setnx-px", "pause-past-ttl"}, {"redis-reentrant-fenced", "pause-past-ttl"}, {"zookeeper", "pause-past-ttl"}, {"pg-optimistic", "pause-past-ttl"}, {"redis-setnx-px", "coupon"}},
		Bench: []string{"redis-setnx-px", "redis-reentrant", "redis-reentrant-fenced"},
	},
	{
		File: "07-redis-failover.md", Title: "Redis fail-over (and a restart without persistence) losing a lock",
		Impls: []string{"redis-setnx-px", "redis-setnx-px-wait", "redis-setnx-px-wait-all"},
		Runs: []Run{
			{ID: "setnx-px-failover", Impl: "redis-setnx-px", Scenario: "redis-failover", Seed: 1},
			{ID: "setnx-px-restart", Impl: "redis-setnx-px", Scenario: "server-restart", Seed: 1},
			{ID: "setnx-px-failover-fenced", Impl: "redis-setnx-px", Scenario: "redis-failover", Fencing: true, Seed: 1},
			// The same story with Sentinel deciding: nobody scripts the
			// fail-over, and the old master goes on until it is demoted.
			{ID: "setnx-px-sentinel-split", Impl: "redis-setnx-px", Scenario: "sentinel-master-split", Topology: topology.RedisSentinelName, Seed: 1},
			{ID: "setnx-px-sentinel-split-fenced", Impl: "redis-setnx-px", Scenario: "sentinel-master-split", Fencing: true, Topology: topology.RedisSentinelName, Seed: 1},
			{ID: "setnx-px-min-replicas-split", Impl: "redis-setnx-px", Scenario: "sentinel-master-split", Topology: topology.RedisSentinelMinReplicasName, Seed: 1},
			{ID: "setnx-px-wait-sentinel-split", Impl: "redis-setnx-px-wait", Scenario: "sentinel-master-split", Topology: topology.RedisSentinelName, Seed: 1},
			{ID: "setnx-px-wait-kill-at-grant", Impl: "redis-setnx-px-wait", Scenario: "sentinel-kill-at-grant", Topology: topology.RedisSentinelName, Seed: 1},
			{ID: "setnx-px-wait-split-after-ack", Impl: "redis-setnx-px-wait", Scenario: "sentinel-split-after-ack", Topology: topology.RedisSentinelName, Seed: 1},
			{ID: "setnx-px-wait-split-after-ack-fenced", Impl: "redis-setnx-px-wait", Scenario: "sentinel-split-after-ack", Fencing: true, Topology: topology.RedisSentinelName, Seed: 1},
		},
		Cells: []Cell{{"redis-setnx-px", "redis-failover"}, {"redis-setnx-px", "server-restart"},
			{"redis-setnx-px @ redis-sentinel", "sentinel-master-split"}, {"redis-setnx-px @ redis-sentinel", "sentinel-master-kill"},
			{"redis-setnx-px @ redis-sentinel", "sentinel-split-at-grant"},
			{"redis-setnx-px @ redis-sentinel-min-replicas", "sentinel-master-split"},
			{"redis-setnx-px-wait @ redis-sentinel", "sentinel-master-split"}, {"redis-setnx-px-wait @ redis-sentinel", "sentinel-kill-at-grant"},
			{"redis-setnx-px-wait @ redis-sentinel", "sentinel-split-at-grant"}},
		Bench: []string{"redis-setnx-px", "redis-setnx-px @ redis-sentinel", "redis-setnx-px-wait @ redis-sentinel", "peer-redislock @ redis-sentinel"},
	},
	{
		File: "08-redlock.md", Title: "Redlock under restart, clock jump and partition, and the delayed restart",
		Impls: []string{"redlock"},
		Runs: []Run{
			{ID: "redlock-restart", Impl: "redlock", Scenario: "redlock-restart", Seed: 1},
			{ID: "redlock-clock-jump", Impl: "redlock", Scenario: "redlock-clock-jump", Seed: 1},
			{ID: "redlock-partition", Impl: "redlock", Scenario: "redlock-partition", Seed: 1},
			{ID: "redlock-restart-delayed", Impl: "redlock", Scenario: "redlock-restart-delayed", Seed: 1},
		},
		Cells:   []Cell{{"redlock", "redlock-restart"}, {"redlock", "redlock-clock-jump"}, {"redlock", "redlock-partition"}, {"redlock", "redlock-restart-delayed"}, {"redlock", "pause-past-ttl"}, {"peer-redsync-5", "redlock-restart"}},
		Bench:   []string{"redlock", "peer-redsync-5", "redis-setnx-px"},
		Compare: []Comparison{{A: "redlock", B: "peer-redsync-5"}, {A: "redlock", B: "redis-setnx-px"}},
	},
	{
		File: "09-zookeeper-session-expiry.md", Title: "ZooKeeper: session expiry is a lease too",
		Impls: []string{"zookeeper", "etcd-lock", "peer-etcd-mutex"},
		Runs: []Run{
			{ID: "zookeeper-pause", Impl: "zookeeper", Scenario: "pause-past-ttl", Seed: 1},
			{ID: "zookeeper-pause-fenced", Impl: "zookeeper", Scenario: "pause-past-ttl", Fencing: true, Seed: 1},
			{ID: "zookeeper-holder-crash", Impl: "zookeeper", Scenario: "holder-crash", Seed: 1},
		},
		Cells:   []Cell{{"zookeeper", "pause-past-ttl"}, {"zookeeper", "holder-crash"}, {"zookeeper", "slow-work-past-ttl"}, {"peer-zk-lock", "pause-past-ttl"}},
		Bench:   []string{"zookeeper", "peer-zk-lock", "redis-setnx-px"},
		Compare: []Comparison{{A: "zookeeper", B: "redis-setnx-px"}},
	},
	{
		File: "10-database-locks.md", Title: "Database locks: a lock table, a version column, a named lock, a row lock",
		Impls: []string{"pg-unique-insert", "pg-optimistic", "pg-advisory", "pg-for-update", "mysql-lock-table", "mysql-optimistic", "mysql-get-lock", "mysql-for-update"},
		Runs: []Run{
			{ID: "pg-unique-holder-crash", Impl: "pg-unique-insert", Scenario: "holder-crash", Seed: 1},
			{ID: "pg-advisory-holder-crash", Impl: "pg-advisory", Scenario: "holder-crash", Seed: 1},
			{ID: "pg-optimistic-pause", Impl: "pg-optimistic", Scenario: "pause-past-ttl", Seed: 1},
			{ID: "pg-optimistic-pause-fenced", Impl: "pg-optimistic", Scenario: "pause-past-ttl", Fencing: true, Seed: 1},
			{ID: "pg-advisory-pause", Impl: "pg-advisory", Scenario: "pause-past-ttl", Seed: 1},
			{ID: "pg-advisory-session-ended", Impl: "pg-advisory", Scenario: "holder-session-ended", Seed: 1},
			{ID: "mysql-for-update-session-ended", Impl: "mysql-for-update", Scenario: "holder-session-ended", Seed: 1},
			{ID: "mysql-optimistic-session-ended", Impl: "mysql-optimistic", Scenario: "holder-session-ended", Seed: 1},
			{ID: "pg-advisory-idle-pause", Impl: "pg-advisory", Scenario: "pause-past-ttl", Topology: "pg-idle-timeouts", Seed: 1},
			{ID: "mysql-get-lock-failover", Impl: "mysql-get-lock", Scenario: "primary-failover", Topology: "mysql-replica-async", Seed: 1},
		},
		Cells: databaseCells(),
		Bench: []string{"pg-unique-insert", "pg-optimistic", "pg-advisory", "pg-for-update", "mysql-lock-table", "mysql-optimistic", "mysql-get-lock", "mysql-for-update"},
	},
	{
		File: "11-partitioned-holder.md", Title: "A holder cut off by the network: leases, sessions and Lost()",
		Impls: []string{"redis-setnx-px", "redis-reentrant", "zookeeper", "pg-advisory", "pg-unique-insert"},
		Runs: []Run{
			{ID: "setnx-px-partition", Impl: "redis-setnx-px", Scenario: "holder-partition", Seed: 1},
			{ID: "setnx-px-partition-fenced", Impl: "redis-setnx-px", Scenario: "holder-partition", Fencing: true, Seed: 1},
			{ID: "reentrant-partition", Impl: "redis-reentrant", Scenario: "holder-partition", Seed: 1},
			{ID: "zookeeper-partition", Impl: "zookeeper", Scenario: "holder-partition", Seed: 1},
			{ID: "zookeeper-partition-fenced", Impl: "zookeeper", Scenario: "holder-partition", Fencing: true, Seed: 1},
			{ID: "pg-advisory-partition", Impl: "pg-advisory", Scenario: "holder-partition", Seed: 1},
		},
		Cells: []Cell{{"redis-setnx-px", "holder-partition"}, {"redis-reentrant", "holder-partition"}, {"redis-reentrant-fenced", "holder-partition"},
			{"zookeeper", "holder-partition"}, {"peer-zk-lock", "holder-partition"}, {"pg-advisory", "holder-partition"},
			{"pg-optimistic", "holder-partition"}, {"pg-unique-insert", "holder-partition"}, {"peer-redislock", "holder-partition"}, {"peer-redsync", "holder-partition"}},
	},
	{
		File: "12-waiting-and-fairness.md", Title: "Waiting for a lock: polling, a watch, a queue; fairness and reentrancy",
		Impls: []string{"redis-fair", "redis-reentrant", "zookeeper", "redis-setnx-px", "pg-advisory"},
		Runs: []Run{
			{ID: "setnx-px-hand-off", Impl: "redis-setnx-px", Scenario: "release-hand-off", Seed: 1},
			{ID: "fair-hand-off", Impl: "redis-fair", Scenario: "release-hand-off", Seed: 1},
			{ID: "fair-waiter-crash", Impl: "redis-fair", Scenario: "queued-waiter-crash", Seed: 1},
			{ID: "fair-waiter-pause", Impl: "redis-fair", Scenario: "queued-waiter-pause", Seed: 1},
			{ID: "zookeeper-waiter-pause", Impl: "zookeeper", Scenario: "queued-waiter-pause", Seed: 1},
			{ID: "reentrant-re-entry", Impl: "redis-reentrant", Scenario: "re-entry", Seed: 1},
			{ID: "setnx-px-re-entry", Impl: "redis-setnx-px", Scenario: "re-entry", Seed: 1},
			{ID: "zookeeper-re-entry", Impl: "zookeeper", Scenario: "re-entry", Seed: 1},
			{ID: "lock-table-re-entry", Impl: "mysql-lock-table", Scenario: "re-entry", Seed: 1},
			{ID: "advisory-re-entry", Impl: "pg-advisory", Scenario: "re-entry", Seed: 1},
		},
		Cells: []Cell{{"redis-setnx-px", "release-hand-off"}, {"redis-fair", "release-hand-off"}, {"redis-reentrant", "release-hand-off"},
			{"zookeeper", "release-hand-off"}, {"pg-advisory", "release-hand-off"},
			{"redis-fair", "queued-waiter-crash"}, {"redis-fair", "queued-waiter-pause"},
			{"zookeeper", "queued-waiter-crash"}, {"zookeeper", "queued-waiter-pause"},
			{"peer-zk-lock", "queued-waiter-crash"}, {"peer-zk-lock", "queued-waiter-pause"}},
		Bench:    []string{"redis-setnx-px", "peer-redislock", "redis-reentrant", "redis-fair", "zookeeper", "pg-advisory"},
		Fairness: true,
	},
	{
		File: "13-coupon-oversold.md", Title: "We used a lock and still oversold: the coupon sale without and with a fence",
		Impls: []string{"redis-setnx-px"},
		Runs: []Run{
			{ID: "coupon-setnx-px", Impl: "redis-setnx-px", Scenario: "coupon", Seed: 1},
			{ID: "coupon-setnx-px-fenced", Impl: "redis-setnx-px", Scenario: "coupon", Fencing: true, Seed: 1},
		},
		Cells: []Cell{{"redis-setnx-px", "pause-past-ttl"}},
		Sale:  true,
	},
	{
		File: "14-quorums.md", Title: "Quorums: a ZooKeeper ensemble and an etcd cluster when the leader or the holder's server is cut away",
		Impls: []string{"zookeeper", "etcd-lock"},
		Runs: []Run{
			{ID: "ensemble-leader-isolated", Impl: "zookeeper", Topology: "zk-ensemble", Scenario: "leader-isolated", Seed: 1},
			{ID: "ensemble-leader-isolated-fenced", Impl: "zookeeper", Topology: "zk-ensemble", Scenario: "leader-isolated", Fencing: true, Seed: 1},
			{ID: "ensemble-holder-server-cut", Impl: "zookeeper", Topology: "zk-ensemble", Scenario: "holder-server-cut", Seed: 1},
			{ID: "etcd-cluster-pause", Impl: "etcd-lock", Topology: "etcd-cluster", Scenario: "pause-past-ttl", Seed: 1},
			{ID: "etcd-cluster-pause-fenced", Impl: "etcd-lock", Topology: "etcd-cluster", Scenario: "pause-past-ttl", Fencing: true, Seed: 1},
			{ID: "etcd-cluster-leader-isolated", Impl: "etcd-lock", Topology: "etcd-cluster", Scenario: "leader-isolated", Seed: 1},
		},
		Cells: []Cell{{"zookeeper @ zk-ensemble", "leader-isolated"}, {"peer-zk-lock @ zk-ensemble", "leader-isolated"},
			{"zookeeper @ zk-ensemble", "holder-server-cut"}, {"peer-zk-lock @ zk-ensemble", "holder-server-cut"},
			{"etcd-lock @ etcd-cluster", "pause-past-ttl"}, {"peer-etcd-mutex @ etcd-cluster", "pause-past-ttl"},
			{"etcd-lock @ etcd-cluster", "leader-isolated"}, {"peer-etcd-mutex @ etcd-cluster", "leader-isolated"}},
	},
	{
		File: "15-redis-cluster.md", Title: "Redis Cluster: a slot's fail-over loses the lock, and what writing to every node would buy",
		Cells: []Cell{
			{"redis-setnx-px @ redis-cluster", "contention"}, {"redis-setnx-px @ redis-cluster", "holder-crash"},
			{"redis-setnx-px @ redis-cluster", "cluster-master-kill"}, {"redis-setnx-px @ redis-cluster", "cluster-master-split"},
			{"redis-setnx-px-wait @ redis-cluster", "cluster-master-kill"}, {"redis-setnx-px-wait @ redis-cluster", "cluster-master-split"},
			{"redis-reentrant @ redis-cluster", "cluster-master-kill"}, {"redis-reentrant @ redis-cluster", "cluster-master-split"},
			{"peer-redsync @ redis-cluster", "cluster-master-kill"},
			{"redlock", "redlock-restart"}, {"redlock", "redlock-restart-delayed"}, {"redlock", "pause-past-ttl"}, {"redlock", "redlock-clock-jump"},
		},
	},
	{
		File: "16-guest-locks.md", Title: "Guest locks: Curator, Redisson, redis-py and node-redlock under the same faults",
		Cells: []Cell{
			{"guest:curator @ zk-ensemble", "holder-server-cut"}, {"zookeeper @ zk-ensemble", "holder-server-cut"},
			{"guest:curator @ zk-ensemble", "leader-isolated"}, {"zookeeper @ zk-ensemble", "leader-isolated"},
			{"guest:curator", "pause-past-ttl"}, {"guest:curator", "holder-partition"},
			{"guest:node-redisson", "slow-work-past-ttl"}, {"guest:node-redisson", "holder-partition"}, {"guest:node-redisson", "pause-past-ttl"},
			{"guest:redis-py", "slow-work-past-ttl"}, {"guest:redis-py", "late-release"},
			{"guest:node-redlock", "slow-work-past-ttl"}, {"guest:node-redlock-5", "redlock-partition"},
			{"guest:lab-redis-setnx-px", "slow-work-past-ttl"}, {"redis-setnx-px", "slow-work-past-ttl"},
			{"guest:redis-py", "holder-crash"}, {"guest:node-redlock", "holder-crash"}, {"guest:lab-redis-setnx-px", "holder-crash"}, {"redis-setnx-px", "holder-crash"},
		},
	},
	{
		File: DocClaimsPage, Title: "The documents' last claims: split votes, two nodes down, a slow script, half a TTL, a dead client's node",
		Impls:     []string{"redlock", "redis-setnx-px", "zookeeper"},
		DocClaims: true,
	},
	{
		File: "18-choosing-a-lock.md", Title: "Choosing a lock: a decision table from the measured safety and speed",
		EveryTopology: true,
		Compare:       []Comparison{{A: "redis-setnx-px", B: "pg-advisory"}},
	},
	{
		File: SyncReplicationPage, Title: "What synchronous replication buys a database lock, and what it does not",
		Impls: []string{"pg-unique-insert", "pg-optimistic", "mysql-optimistic", "pg-advisory", "mysql-get-lock"},
		Runs: []Run{
			// Split brain with clients on both sides: the old primary stays
			// alive with the holder and one more client.
			{ID: "pg-optimistic-split-async", Impl: "pg-optimistic", Scenario: "primary-split-brain", Topology: topology.PGReplicaAsyncName, Seed: 1},
			{ID: "pg-optimistic-split-async-fenced", Impl: "pg-optimistic", Scenario: "primary-split-brain", Fencing: true, Topology: topology.PGReplicaAsyncName, Seed: 1},
			{ID: "pg-optimistic-split-sync", Impl: "pg-optimistic", Scenario: "primary-split-brain", Topology: topology.PGReplicaSyncName, Seed: 1},
			{ID: "pg-optimistic-split-sync-fenced", Impl: "pg-optimistic", Scenario: "primary-split-brain", Fencing: true, Topology: topology.PGReplicaSyncName, Seed: 1},
			{ID: "mysql-optimistic-split-semisync", Impl: "mysql-optimistic", Scenario: "primary-split-brain", Topology: topology.MySQLReplicaSemisyncName, Seed: 1},
			// The queued locks: the old primary's ghost grant to a
			// majority-side client holds the old side off, by accident.
			{ID: "mysql-get-lock-split-async", Impl: "mysql-get-lock", Scenario: "primary-split-brain", Topology: topology.MySQLReplicaAsyncName, Seed: 1},
			{ID: "pg-advisory-split-async", Impl: "pg-advisory", Scenario: "primary-split-brain", Topology: topology.PGReplicaAsyncName, Seed: 1},
			// The replica that acknowledged dies with the primary.
			{ID: "pg-unique-acked-standby-lost", Impl: "pg-unique-insert", Scenario: "primary-acked-standby-lost", Topology: topology.PGReplicaSync2Name, Seed: 1},
			{ID: "mysql-optimistic-acked-standby-lost", Impl: "mysql-optimistic", Scenario: "primary-acked-standby-lost", Topology: topology.MySQLReplicaSemisync2Name, Seed: 1},
			{ID: "mysql-optimistic-acked-standby-lost-fenced", Impl: "mysql-optimistic", Scenario: "primary-acked-standby-lost", Fencing: true, Topology: topology.MySQLReplicaSemisync2Name, Seed: 1},
		},
		Cells: syncReplicationCells(),
	},
}

// PageFor returns the page a lock links to, a file of docs/lessons/: the
// page its impls.Spec declares (Page), which TestEveryLockDeclaresItsPage
// holds to a page of Pages that covers it; "" for a lock that declares
// none (a guest, whose page is docs/guests/README.md).
func PageFor(impl string) string {
	s, err := impls.Lookup(impl)
	if err != nil {
		return ""
	}
	return strings.TrimPrefix(s.Page, lessonsDir)
}

// lessonPage is the lesson a lock's row on a lesson page links to: its
// declared page, or the guests' lesson for a guest, which declares none.
// (The project README's table links a guest to nothing, as PageFor does.)
func lessonPage(impl string) string {
	if p := PageFor(impl); p != "" {
		return p
	}
	if s, err := impls.Lookup(impl); err == nil && s.Guest {
		return GuestPage
	}
	return ""
}

// lessonsDir is where, from the repo root, a lock's declared Page lives.
const lessonsDir = "docs/lessons/"

// KeyScenarios are the columns of the summary tables (index and choosing page).
var KeyScenarios = []string{"contention", "holder-crash", "crash-after-setnx", "late-release", "holder-partition",
	"slow-work-past-ttl", "pause-past-ttl", "server-restart", "redis-failover", "redlock-restart"}

// databaseCells are lesson 10's rows of the matrix: every database lock
// under a crash, a pause and a session ended under its holder on the
// single servers; a pause where the server ends idle sessions; and the
// primary's fail-over to its replica.
func databaseCells() []Cell {
	pg := []string{"pg-unique-insert", "pg-optimistic", "pg-advisory", "pg-for-update"}
	my := []string{"mysql-lock-table", "mysql-optimistic", "mysql-get-lock", "mysql-for-update"}
	var out []Cell
	for _, sc := range []string{"holder-crash", "pause-past-ttl", "holder-session-ended"} {
		for _, l := range append(append([]string{}, pg...), my...) {
			out = append(out, Cell{l, sc})
		}
	}
	for _, l := range pg {
		out = append(out, Cell{l + " @ pg-idle-timeouts", "pause-past-ttl"})
	}
	for _, l := range my {
		out = append(out, Cell{l + " @ mysql-wait-timeout", "pause-past-ttl"})
	}
	for _, l := range pg {
		out = append(out, Cell{l + " @ pg-replica-async", "primary-failover"}, Cell{l + " @ pg-replica-sync", "primary-failover"})
	}
	for _, l := range my {
		out = append(out, Cell{l + " @ mysql-replica-async", "primary-failover"}, Cell{l + " @ mysql-replica-semisync", "primary-failover"})
	}
	return out
}

// syncReplicationCells are lesson 19's rows of the matrix: every database
// lock's fail-over (the primary killed, its replica promoted) on the
// synchronous topologies, against which the page sets the two faults it
// runs.
func syncReplicationCells() []Cell {
	var out []Cell
	for _, l := range []string{"pg-unique-insert", "pg-optimistic", "pg-advisory", "pg-for-update"} {
		out = append(out, Cell{l + " @ " + topology.PGReplicaSyncName, "primary-failover"})
	}
	for _, l := range []string{"mysql-lock-table", "mysql-optimistic", "mysql-get-lock", "mysql-for-update"} {
		out = append(out, Cell{l + " @ " + topology.MySQLReplicaSemisyncName, "primary-failover"})
	}
	return out
}

// SyncReplicationPage teaches what synchronous replication buys a database
// lock: the fault where the replica that acknowledged is lost, and split
// brain with clients on the old primary's side.
const SyncReplicationPage = "19-what-synchronous-replication-buys.md"
