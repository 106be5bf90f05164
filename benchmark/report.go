package benchmark

import (
	"time"
)

// Report is everything one run measured; bench.json is this, encoded.
// Figures that do not apply (no peer, no round-trip bound for an in-process
// lock) are left out rather than set to a made-up number.
type Report struct {
	Date     string     `json:"date"`
	Command  string     `json:"command"`
	Machine  Machine    `json:"machine"`
	Servers  []Server   `json:"servers"`
	Settings RunSetting `json:"settings"`
	Limits   []Limit    `json:"limits"`
	Impls    []Result   `json:"implementations"`
	Targets  []Target   `json:"targets,omitempty"`
	Charts   []string   `json:"charts"`
	Elapsed  float64    `json:"elapsed_seconds"`
}

// RunSetting records the options the run used.
type RunSetting struct {
	DurationMS  float64           `json:"duration_ms"`
	Clients     int               `json:"clients"`
	Sweep       []int             `json:"sweep"`
	TTLMS       float64           `json:"ttl_ms"`
	Trials      int               `json:"trials"`
	SweepTrials int               `json:"sweep_trials"`
	Quick       bool              `json:"quick"`
	Workloads   []string          `json:"workloads"`
	CostUnits   map[string]string `json:"cost_units"`
}

// Limit is one backend's round-trip rate: the physical bound.
type Limit struct {
	Backend   string `json:"backend"`
	Request   string `json:"request"`
	OneClient Stat   `json:"one_client_per_sec"`
	Clients   int    `json:"clients"`
	NClients  Stat   `json:"n_clients_per_sec"`
	// WakeUp and FanOut are Redis's (absent elsewhere, and in reports
	// older than them): the floor of a hand-off to a sleeping waiter, and
	// the round trip of a lock on several nodes (FanOut only when the run
	// started more than one lock node).
	WakeUp *WakeUpLimit `json:"wake_up,omitempty"`
	FanOut *FanOutLimit `json:"fan_out,omitempty"`
}

// WakeUpLimit is the cheapest hand-off between two clients through Redis:
// one client's RPUSH reaching another's blocked BLPOP (see wakeUpHop).
type WakeUpLimit struct {
	Request string `json:"request"`
	// HopMS is one hop per trial, half a ping-pong cycle; its best trial
	// is the fastest, Min.
	HopMS Stat `json:"hop_ms"`
}

// FanOutLimit is one client sending PING to every Redis lock node in
// parallel (see fanOut), waiting for every answer or for a majority.
type FanOutLimit struct {
	Request        string `json:"request"`
	Nodes          int    `json:"nodes"`
	Majority       int    `json:"majority"`
	AllPerSec      Stat   `json:"all_per_sec"`
	MajorityPerSec Stat   `json:"majority_per_sec"`
}

// Result is one implementation's figures.
type Result struct {
	Name string `json:"name"`
	// Topology names the servers' topology when it is not the single one
	// (Report.Append).
	Topology string `json:"topology,omitempty"`
	Peer     bool   `json:"peer"`
	Broken   string `json:"broken,omitempty"`
	Backend  string `json:"backend"`
	Caps     string `json:"capabilities"`
	// RedisNodes is how many Redis lock nodes the lock uses (absent for
	// other backends): a lock on several sends to all of them at once.
	RedisNodes int `json:"redis_nodes,omitempty"`
	// RoundTrips per uncontended pair, counted by the servers, beside the
	// declaration (absent for in-process locks and runs without the
	// uncontended workload).
	RoundTrips  *MeasuredRoundTrips `json:"round_trips,omitempty"`
	ClosestPeer string              `json:"closest_peer,omitempty"`
	// Survives: fault scenarios this lock came through safe in the verdict
	// matrix, without fencing.
	Survives *Survival `json:"faults_survived,omitempty"`

	Uncontended *UncontendedR `json:"uncontended,omitempty"`
	Contended   *ContendedR   `json:"contended,omitempty"`
	Sweep       []SweepPoint  `json:"sweep,omitempty"`
	Independent *IndependentR `json:"independent_keys,omitempty"`
	Recovery    *RecoveryR    `json:"recovery,omitempty"`

	// Pooled samples over the trials, for the distribution charts.
	handoffSamples []time.Duration
	waitSamples    []time.Duration
}

// UncontendedR: one client, acquire then release, back to back.
type UncontendedR struct {
	PairsPerSec Stat `json:"pairs_per_sec"`
	AcquireP50  Stat `json:"acquire_p50_ms"`
	AcquireP99  Stat `json:"acquire_p99_ms"`
	AcquireP999 Stat `json:"acquire_p999_ms"`
	Errors      int  `json:"errors"`
	// BoundPairsPerSec is the one-client round-trip rate divided by the
	// counted round trips; FractionOfBound the median pairs/s over it.
	BoundPairsPerSec *float64 `json:"bound_pairs_per_sec,omitempty"`
	FractionOfBound  *float64 `json:"fraction_of_bound,omitempty"`
	// PeerRatio is this lock's median pairs/s over its closest peer's.
	PeerRatio *float64 `json:"peer_ratio,omitempty"`
}

// ContendedR: Clients clients on one key, each doing a critical section on
// the protected resource. Hand-off, fairness and cost come from the same run.
type ContendedR struct {
	Clients     int      `json:"clients"`
	PairsPerSec Stat     `json:"pairs_per_sec"`
	WaitP50     Stat     `json:"wait_p50_ms"`
	WaitP99     Stat     `json:"wait_p99_ms"`
	WaitMax     Stat     `json:"wait_max_ms"`
	Errors      int      `json:"errors"`
	PeerRatio   *float64 `json:"peer_ratio,omitempty"`

	HandoffP50 Stat `json:"handoff_p50_ms"`
	HandoffP99 Stat `json:"handoff_p99_ms"`
	Handoffs   Stat `json:"handoffs"`
	// SameClient counts grants that went back to the client that had just
	// released; SameClientShare is their share of all grants after the first.
	SameClient      Stat `json:"same_client_reacquisitions"`
	SameClientShare Stat `json:"same_client_share"`
	Jain            Stat `json:"jain_index"`
	// Overlaps counts grants returned before the previous holder began to
	// release: two holders at once, which only a broken lock shows.
	Overlaps Stat `json:"overlaps"`

	CostPerAcquisition *Stat  `json:"cost_per_acquisition,omitempty"`
	CostUnit           string `json:"cost_unit,omitempty"`
}

// SweepPoint is the contended rate at one client count.
type SweepPoint struct {
	Clients     int  `json:"clients"`
	PairsPerSec Stat `json:"pairs_per_sec"`
	Errors      int  `json:"errors"`
}

// IndependentR: Clients clients, each on its own key.
type IndependentR struct {
	Clients          int      `json:"clients"`
	PairsPerSec      Stat     `json:"pairs_per_sec"`
	Errors           int      `json:"errors"`
	BoundPairsPerSec *float64 `json:"bound_pairs_per_sec,omitempty"`
	FractionOfBound  *float64 `json:"fraction_of_bound,omitempty"`
	PeerRatio        *float64 `json:"peer_ratio,omitempty"`
}

// RecoveryR is the holder-crash scenario's figure, or why there is none.
type RecoveryR struct {
	Seconds *float64 `json:"seconds,omitempty"`
	Verdict string   `json:"verdict,omitempty"`
	Note    string   `json:"note"`
}

// Append adds the locks, limits, servers and targets of o, a run on the
// named topology topo, to r (a run on the single one): each of its names
// and backends says the topology ("zookeeper @ zk-ensemble"), so every
// table keeps one row per lock per topology and a lock is compared with
// the limit of the servers it ran on.
func (r *Report) Append(o *Report, topo string) {
	at := func(s string) string { return s + " @ " + topo }
	for _, x := range o.Impls {
		x.Topology, x.Name, x.Backend = topo, at(x.Name), at(x.Backend)
		r.Impls = append(r.Impls, x)
	}
	for _, l := range o.Limits {
		l.Backend = at(l.Backend)
		r.Limits = append(r.Limits, l)
	}
	for _, s := range o.Servers {
		s.Backend = at(s.Backend)
		r.Servers = append(r.Servers, s)
	}
	for _, t := range o.Targets {
		t.Name, t.Impl = at(t.Name), at(t.Impl)
		if t.Peer != "" {
			t.Peer = at(t.Peer)
		}
		r.Targets = append(r.Targets, t)
	}
	r.Elapsed += o.Elapsed
}
