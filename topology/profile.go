package topology

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// Profile is the set of timeouts a run's servers and locks use, declared as
// data beside the topologies: the lease or session every lock asks for, the
// servers' detection times and replication settings. A verdict that turns on
// a ratio of timeouts (a session against a client's reconnect back-off, a
// lease against a fail-over's detection) can differ between profiles; the
// matrix runs such cells under each, and the cell's key names the profile
// when it is not the fast one.
//
// Every server setting a profile names is given to every server of the
// kind; a topology's own settings go on top (pg-replica-sync's
// synchronous_commit on is what makes it synchronous), except the timeouts
// that are a topology's point (Timeouts), whose length is the profile's.
type Profile struct {
	Name    string
	Summary string
	// TTL is the lease every lock asks for: its key's expiry, its
	// ZooKeeper session, its etcd lease. `-ttl` overrides it.
	TTL time.Duration
	// MinTTL, when positive, is the least -ttl the profile accepts: a
	// production profile with one-second sessions would be the fast one.
	MinTTL time.Duration
	// Settings are each kind's server settings, by the server's own name
	// for each (Sentinel's down-after-milliseconds, PostgreSQL's
	// synchronous_commit), as an operator's configuration would set them.
	Settings map[Kind]map[string]string
	// Timeouts are the values of the timeouts that are a topology's point
	// (pg-idle-timeouts' idle_session_timeout, the semi-synchronous
	// primary's rpl_semi_sync_master_timeout): a topology declares the
	// setting (with the fast profile's value, so a server started without
	// a profile runs as the lab always did), and its length is the
	// profile's.
	Timeouts map[string]string
	// FailOver is, by kind, how long the system of that kind takes at most
	// to notice a lost member and replace it (detection plus election or
	// promotion) under the profile's settings. A fault on a server that
	// lasts less than FailOver plus the TTL is stretched to that
	// (nemesis.Schedule.Outlasting), so a fault meant to outlast the
	// fail-over and the lease does so under every profile. The fast
	// profile's fixed faults were chosen for its own times, and it
	// stretches nothing.
	FailOver map[Kind]time.Duration
	// Runs, when set, are the only cells the profile runs: by topology,
	// the scenarios whose verdict a ratio of timeouts decides there.
	// Elsewhere the profile would repeat the fast profile's verdicts at
	// ten times their length (a pause of 2.5 leases outlasts a lease under
	// either profile). Nil: every cell.
	Runs map[string][]string
}

// Topologies are the topologies the profile runs cells on, in name order
// (nil: every one).
func (p Profile) Topologies() []string {
	if p.Runs == nil {
		return nil
	}
	return slices.Sorted(maps.Keys(p.Runs))
}

// RunsCell reports whether the profile runs the scenario's cells on the
// named topology.
func (p Profile) RunsCell(topo, scenario string) bool {
	if p.Runs == nil {
		return true
	}
	return slices.Contains(p.Runs[Or(topo)], scenario)
}

// The profiles' names.
const (
	FastName       = "fast"
	ProductionName = "production"
)

// Fast is the lab's profile, every timeout a second or less, so a cell runs
// in seconds: the settings every matrix before the profile axis ran with.
var Fast = Profile{
	Name: FastName,
	Summary: "the lab's own: a 1 s lease and session, Sentinel down after 500 ms, a Redis Cluster node timeout of 500 ms, " +
		"a 100 ms ZooKeeper tick, etcd's 50 ms heartbeat and 500 ms election, semi-sync waiting an hour, PostgreSQL's synchronous_commit off",
	TTL: time.Second,
	Settings: map[Kind]map[string]string{
		// cluster/sentinel.go says why: a master cut off past a lease is
		// failed over while the fault lasts; a stalled fail-over is retried
		// within a run.
		Sentinel: {"down-after-milliseconds": "500", "failover-timeout": "2000"},
		// cluster/rediscluster.go: the cluster fails over on Sentinel's clock.
		RedisCluster: {"cluster-node-timeout": "500"},
		// cluster/zookeeper.go: a short tick lets sessions be sub-second;
		// a follower syncs within 2 s and stays within 1 s of the leader.
		ZooKeeper: {"tickTime": "100", "initLimit": "20", "syncLimit": "10"},
		// cluster/etcd.go: etcd refuses a lease under 1.5 election
		// timeouts, so 500 ms keeps a 1 s lease 1 s.
		Etcd: {"heartbeat-interval": "50", "election-timeout": "500"},
		// The lab measures locking, not the disk.
		Postgres: {"synchronous_commit": "off"},
	},
	Timeouts: map[string]string{
		// Longer than the lab's locks' watcher interval at the fast TTL
		// (a third of 1 s), shorter than any pause past the TTL.
		"idle_in_transaction_session_timeout": "500ms",
		"idle_session_timeout":                "500ms",
		// MariaDB's least (whole seconds).
		"wait_timeout": "1",
		// An hour, longer than any run: a commit the replica does not
		// acknowledge waits rather than returning unreplicated
		// (topology/mysqlreplica.go).
		"rpl_semi_sync_master_timeout": "3600000",
	},
}

// Production is the profile with the values people run their servers with:
// the servers' defaults where they have one, and sessions and leases of
// 10 s, the least of the ranges client libraries and operators use (10 to
// 60 s).
var Production = Profile{
	Name: ProductionName,
	Summary: "as people run them: a 10 s lease and session, Sentinel's default down-after (30 s) and failover-timeout (3 min), " +
		"Redis Cluster's default node timeout (15 s), ZooKeeper's default tick (2 s, syncLimit 5, initLimit 10), etcd's default " +
		"heartbeat (100 ms) and election (1 s), MariaDB's default semi-sync timeout (10 s, then silently asynchronous), " +
		"PostgreSQL's default synchronous_commit (on), idle and wait timeouts of 10 s",
	TTL:    10 * time.Second,
	MinTTL: 10 * time.Second,
	Settings: map[Kind]map[string]string{
		Sentinel:     {"down-after-milliseconds": "30000", "failover-timeout": "180000"},
		RedisCluster: {"cluster-node-timeout": "15000"},
		// zoo_sample.cfg's: a follower must stay within 10 s of the leader.
		ZooKeeper: {"tickTime": "2000", "initLimit": "10", "syncLimit": "5"},
		Etcd:      {"heartbeat-interval": "100", "election-timeout": "1000"},
		// fsync stays off (the lab measures locking, not the disk); a
		// commit returns once its WAL is written, and handed to the
		// replica's sender, not before.
		Postgres: {"synchronous_commit": "on"},
	},
	Timeouts: map[string]string{
		"idle_in_transaction_session_timeout": "10s",
		"idle_session_timeout":                "10s",
		"wait_timeout":                        "10",
		// MariaDB's default: past it the primary returns the commit and
		// goes on asynchronously, telling no client.
		"rpl_semi_sync_master_timeout": "10000",
	},
	FailOver: map[Kind]time.Duration{
		// down-after, then two sentinels agree (ODOWN), elect a leader
		// and promote: a few seconds more.
		Sentinel: 35 * time.Second,
		// node timeout, FAIL spread by gossip, the replica's election
		// delay (500 ms plus up to 500 ms plus its rank).
		RedisCluster: 20 * time.Second,
		// syncLimit ticks (10 s) before the followers give up on a lost
		// leader, then an election.
		ZooKeeper: 12 * time.Second,
		// an election timeout (randomized up to twice) and a vote.
		Etcd: 3 * time.Second,
	},
	Runs: map[string][]string{
		// A session or lease against an election and a client's
		// reconnect back-off (a constant of the client, not a fraction of
		// the session).
		ZKEnsembleName:  {"leader-isolated", "holder-server-cut"},
		EtcdClusterName: {"leader-isolated"},
		// A lease against detection and promotion; min-replicas-max-lag
		// (1 s) against down-after (30 s instead of 0.5 s).
		RedisSentinelName:            {"sentinel-master-split", "sentinel-master-kill"},
		RedisSentinelMinReplicasName: {"sentinel-master-split"},
		RedisClusterName:             {"cluster-master-split"},
		// A commit against replication: synchronous_commit, the semi-sync
		// timeout. In primary-split-brain (28.5 s at a 10 s lease) the
		// semi-synchronous primary cut off from its replica waits 10 s
		// for an acknowledgement and then commits asynchronously, telling
		// no client, for the rest of the split (under fast it waits an
		// hour); the asynchronous PostgreSQL primary's commits reach its
		// replica before the cut (synchronous_commit on), and the holder
		// at the cut keeps a 10 s lease on the promoted replica.
		PGReplicaAsyncName:       {"primary-failover", "primary-split-brain"},
		PGReplicaSyncName:        {"primary-failover", "primary-split-brain"},
		MySQLReplicaAsyncName:    {"primary-failover", "primary-split-brain"},
		MySQLReplicaSemisyncName: {"primary-failover", "primary-split-brain"},
		// The holder's hand-off wait (half its lease: 5 s) against the
		// others' reconnection to the moved address (about a second): under
		// fast the 0.5 s wait ended first and a lease lock's holder wrote
		// before anyone could collide with it. No semi-sync timeout is
		// reached: the second replica acknowledges in milliseconds.
		PGReplicaSync2Name:        {"primary-acked-standby-lost"},
		MySQLReplicaSemisync2Name: {"primary-acked-standby-lost"},
		// A stall against the server's idle limit and the watcher's
		// interval (a third of the TTL).
		PGIdleTimeoutsName:   {"pause-past-ttl", "slow-work-past-ttl"},
		MySQLWaitTimeoutName: {"pause-past-ttl", "slow-work-past-ttl"},
	},
}

var profiles = map[string]Profile{FastName: Fast, ProductionName: Production}

// ProfileNames lists the profiles, the fast one first.
func ProfileNames() []string { return []string{FastName, ProductionName} }

// OrFast returns name, or FastName when name is empty (a cell or row
// written before the profile was an axis).
func OrFast(name string) string {
	if name == "" {
		return FastName
	}
	return name
}

// LookupProfile finds a profile by name (empty is the fast one); the error
// lists the valid names.
func LookupProfile(name string) (Profile, error) {
	p, ok := profiles[OrFast(name)]
	if !ok {
		return Profile{}, fmt.Errorf("unknown profile %q; valid names: %s", name, strings.Join(ProfileNames(), ", "))
	}
	return p, nil
}

// CheckTTL says why the profile cannot run with ttl, or nil.
func (p Profile) CheckTTL(ttl time.Duration) error {
	if p.MinTTL > 0 && ttl < p.MinTTL {
		return fmt.Errorf("the %s profile's leases and sessions are %v or more, and -ttl is %v", p.Name, p.MinTTL, ttl)
	}
	return nil
}

// Apply returns d with the profile's settings: every group of a kind the
// profile sets starts with them, its own settings on top, and every
// setting the group declares that is one of the profile's timeouts takes
// the profile's value. The protected resource is the judge, not the system
// under test, and keeps its own.
func (p Profile) Apply(d Declaration) Declaration {
	d.Groups = slices.Clone(d.Groups)
	for i, g := range d.Groups {
		if g.Role == Resource || (len(p.Settings[g.Kind]) == 0 && len(g.Settings) == 0) {
			continue
		}
		s := maps.Clone(p.Settings[g.Kind])
		if s == nil {
			s = map[string]string{}
		}
		for k, v := range g.Settings {
			if t, ok := p.Timeouts[k]; ok {
				v = t
			}
			s[k] = v
		}
		d.Groups[i].Settings = s
	}
	return d
}

// FailOverOf is the longest time the profile gives any kind of d's lock
// servers to fail over (FailOver), zero when it gives none.
func (p Profile) FailOverOf(d Declaration) time.Duration {
	var out time.Duration
	for _, g := range d.Groups {
		if g.Role != Resource {
			out = max(out, p.FailOver[g.Kind])
		}
	}
	return out
}

// Setting is the kind's setting called name under the fast profile: what
// a server the lab starts without a profile (a test of the server alone)
// runs with.
func Setting(kind Kind, name string) string { return Fast.Settings[kind][name] }
