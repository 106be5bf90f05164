package record

import (
	"encoding/json"
	"math"
	"time"
)

// The rows of bench.json (`bench bench`): what one benchmark run measured,
// read by the report site and by -compare.

// Bench is everything one run measured; bench.json is this, encoded.
// Figures that do not apply (no peer, no round-trip bound for an in-process
// lock) are left out rather than set to a made-up number.
type Bench struct {
	Date     string        `json:"date"`
	Command  string        `json:"command"`
	Machine  Machine       `json:"machine"`
	Servers  []Server      `json:"servers"`
	Settings BenchSetting  `json:"settings"`
	Limits   []Limit       `json:"limits"`
	Impls    []BenchResult `json:"implementations"`
	Targets  []Target      `json:"targets,omitempty"`
	// Overhead is what the guest protocol costs: each guest that wraps a
	// lock of the lab's own beside that lock, per workload (bench.md's
	// "What the guest protocol costs"). Absent from runs without both.
	Overhead []ProtocolOverhead `json:"protocol_overhead,omitempty"`
	Charts   []string           `json:"charts"`
	Elapsed  float64            `json:"elapsed_seconds"`
	// Others say how the rows of other topologies than the single one
	// were measured (Append), and which topologies were left out.
	Others *OtherTopologies `json:"other_topologies,omitempty"`
}

// OtherTopologies is how a default run measured the topologies beside the
// single one: fewer locks, workloads and trials, to keep to its budget.
type OtherTopologies struct {
	Trials    int      `json:"trials"`
	Workloads []string `json:"workloads"`
	// Locks says which locks ran there, in words.
	Locks string `json:"locks"`
	// LeftOut are the topologies a request takes the same path on as on
	// another one (topology.Named.SameRequestsAs), not measured again, and
	// the ones whose servers cannot start where the run ran.
	LeftOut []LeftOutTopology `json:"left_out,omitempty"`
}

// LeftOutTopology is a topology the run did not measure: the one its
// requests take the same path on, or why its servers cannot start here
// (container mode starts no Sentinel, for one).
type LeftOutTopology struct {
	Topology       string `json:"topology"`
	SameRequestsAs string `json:"same_requests_as,omitempty"`
	CannotStart    string `json:"cannot_start,omitempty"`
}

// ProtocolOverhead is a guest that wraps a lock of the lab's own (the
// same Go lock reached through the guest protocol) beside that lock called
// natively, in one workload of one run.
type ProtocolOverhead struct {
	Guest    string `json:"guest"`
	Native   string `json:"native"`
	Workload string `json:"workload"`
	// GuestPairs and NativePairs are acquire+release pairs per second.
	GuestPairs  Stat `json:"guest_pairs_per_sec"`
	NativePairs Stat `json:"native_pairs_per_sec"`
	// Ratio is the guest's pairs/s over the native lock's, trial by trial
	// (both ran in the same trial); what it falls short of 1 is the
	// protocol's own cost.
	Ratio Stat `json:"guest_over_native"`
}

// BenchSetting records the options the run used.
type BenchSetting struct {
	DurationMS float64 `json:"duration_ms"`
	Clients    int     `json:"clients"`
	Sweep      []int   `json:"sweep"`
	TTLMS      float64 `json:"ttl_ms"`
	Trials     int     `json:"trials"`
	// Slices is how many turns each uncontended and contended window was
	// cut into, a backend's locks taking theirs in between (0: one window
	// each, before slices).
	Slices      int `json:"slices,omitempty"`
	SweepTrials int `json:"sweep_trials"`
	// IndependentTrials is how many trials measured the independent keys.
	IndependentTrials int               `json:"independent_trials,omitempty"`
	Quick             bool              `json:"quick"`
	Workloads         []string          `json:"workloads"`
	CostUnits         map[string]string `json:"cost_units"`
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

// BenchResult is one implementation's figures.
type BenchResult struct {
	Name string `json:"name"`
	// Topology names the servers' topology when it is not the single one
	// (Bench.Append).
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

	// HandoffSamples and WaitSamples are pooled over the trials for the
	// distribution charts, which are drawn from the run itself; bench.json
	// keeps the figures, not the samples.
	HandoffSamples []time.Duration `json:"-"`
	WaitSamples    []time.Duration `json:"-"`
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
	// Where the round trips were measured in the slices between the
	// lock's own (a lock on one node), the rate is their median, and
	// OfBound is the fraction taken trial by trial (each trial's pairs/s
	// over that trial's bound), FractionOfBound its median.
	BoundPairsPerSec *float64 `json:"bound_pairs_per_sec,omitempty"`
	FractionOfBound  *float64 `json:"fraction_of_bound,omitempty"`
	OfBound          *Stat    `json:"of_bound,omitempty"`
	// PeerRatio is this lock's median pairs/s over its closest peer's.
	PeerRatio *float64    `json:"peer_ratio,omitempty"`
	CPU       *CPUPerPair `json:"cpu,omitempty"`
}

// CPUPerPair is CPU time per acquire+release, in µs, as the kernel counts
// it: what the lock costs each side, beside how fast it went. Absent in
// runs from before it was measured.
type CPUPerPair struct {
	// Clients: the lab's process (every client's goroutines, the Go
	// runtime's work for them) and any guest process it started.
	Clients Stat `json:"clients_us"`
	// Servers: the lock's own servers and their backends; absent where the
	// lab did not start them.
	Servers *Stat `json:"servers_us,omitempty"`
	// Process is the lab's process's CPU per pair (uncontended only) in
	// the interleaved slices the rates come from, one figure a trial, as
	// the kernel counts it; ClientParts splits its median by the code it
	// ran (the Part names), in µs, in the shares a CPU profile of the same
	// slices found. Absent for a guest, the in-process mutex and runs from
	// before they were measured.
	Process     *Stat              `json:"process_us,omitempty"`
	ClientParts map[string]float64 `json:"client_parts_us,omitempty"`
	// ProfileSamples is how many profile samples ClientParts rests on.
	ProfileSamples int `json:"profile_samples,omitempty"`
	// ServerCommands is the time the servers spent running the lock's
	// commands, per pair, as they count it themselves (Redis: INFO
	// commandstats usec, scripts included): the rest of Servers is
	// reading, parsing and answering requests. Redis only.
	ServerCommands *Stat `json:"server_commands_us,omitempty"`
}

// The parts of a client's CPU a profile tells apart (CPUPerPair.ClientParts).
const (
	PartLock     = "lock"           // the lock's own code: ours under impls/, or a peer library's
	PartLibrary  = "client library" // the client library the lock talks to its servers through
	PartHarness  = "harness"        // the lab's own code driving the clients
	PartRuntime  = "Go runtime"     // scheduler and garbage collector, not in a system call
	PartSyscalls = "system calls"   // the kernel: sending and receiving the round trips, waking threads
)

// Parts lists the Part names in report order.
var Parts = []string{PartLock, PartLibrary, PartHarness, PartRuntime, PartSyscalls}

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
	// CostByCommand is the cost per acquisition command by command, where
	// the servers count that way (Redis; a script's own commands count
	// under their names, the script under EVALSHA): every cost window's
	// calls over all their grants, one figure, not a median.
	CostByCommand map[string]float64 `json:"cost_by_command,omitempty"`
	// CPU: per grant, the critical section's reads and writes included.
	CPU *CPUPerPair `json:"cpu,omitempty"`
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
func (r *Bench) Append(o *Bench, topo string) {
	at := func(s string) string { return s + topologySep + topo }
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

// Confidence is the level of every interval in the report, as benchstat's.
const Confidence = 0.95

// WideInterval is the half-width, as a fraction of the median, beyond which
// a figure is flagged: its trials disagree too much to be quoted alone.
const WideInterval = 0.10

// Stat is one figure measured over several trials: the median is what the
// report shows, with benchstat's distribution-free confidence interval of
// the median (golang.org/x/perf/benchmath, AssumeNothing): benchmark
// figures on a shared machine are not normal, and one trial says little.
// Min and max stay as the raw spread.
type Stat struct {
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	// CILo and CIHi bound the median at CIConfidence (at least Confidence);
	// absent when there are too few trials for a finite interval (6 are
	// needed at 95%).
	CILo         *float64  `json:"ci_lo,omitempty"`
	CIHi         *float64  `json:"ci_hi,omitempty"`
	CIConfidence float64   `json:"ci_confidence,omitempty"`
	Trials       []float64 `json:"trials"`
}

// HalfWidth is the confidence interval's larger distance from the median,
// as a fraction of it (benchstat's ±x%); ok is false when there is no
// finite interval or no positive median to relate it to.
func (s Stat) HalfWidth() (frac float64, ok bool) {
	if s.CILo == nil || s.CIHi == nil || s.Median <= 0 {
		return 0, false
	}
	return math.Max(*s.CIHi/s.Median-1, 1-*s.CILo/s.Median), true
}

// Wide reports a figure whose interval is wider than ±WideInterval, or that
// has no interval at all although it was measured more than once.
func (s Stat) Wide() bool {
	f, ok := s.HalfWidth()
	if !ok {
		return len(s.Trials) > 1 && s.Median > 0
	}
	return f > WideInterval
}

// MeasuredRoundTrips is a lock's count, beside what it declares.
type MeasuredRoundTrips struct {
	// PerPair is requests per pair, on the busiest node for multi-node
	// locks (they send to every node in parallel: one round trip each).
	PerPair  float64 `json:"per_pair"`
	Pairs    int     `json:"pairs"`
	Counter  string  `json:"counted_as"`
	Declared int     `json:"declared,omitempty"`
	Note     string  `json:"declared_note,omitempty"`
	// DeclaredCount is what the counter should see per pair when it
	// counts something else than round trips (countedAs).
	DeclaredCount int `json:"declared_count,omitempty"`
}

// Divisor is the round trips per pair a bound divides by: the count, or,
// where the counter does not count round trips, the declaration.
func (m MeasuredRoundTrips) Divisor() float64 {
	if m.DeclaredCount > 0 {
		return float64(m.Declared)
	}
	return m.PerPair
}

// Rounded is the count as a whole number of round trips.
func (m MeasuredRoundTrips) Rounded() int { return int(m.PerPair + 0.5) }

// Agrees reports whether the declaration matches the count.
func (m MeasuredRoundTrips) Agrees() bool {
	want := m.Declared
	if m.DeclaredCount > 0 {
		want = m.DeclaredCount
	}
	return want > 0 && want == m.Rounded()
}

// UnmarshalJSON also reads reports written before round trips were
// counted, where the field was the declared number, so that -compare can
// read them.
func (m *MeasuredRoundTrips) UnmarshalJSON(b []byte) error {
	var n float64
	if err := json.Unmarshal(b, &n); err == nil {
		*m = MeasuredRoundTrips{PerPair: n, Declared: int(n), Counter: "declared (a report from before round trips were counted)"}
		return nil
	}
	type plain MeasuredRoundTrips
	return json.Unmarshal(b, (*plain)(m))
}

// Target is one target's verdict in one run.
type Target struct {
	Name     string  `json:"name"`
	Impl     string  `json:"impl"`
	Peer     string  `json:"peer,omitempty"`
	Workload string  `json:"workload"`
	Want     float64 `json:"want"`
	// AtMost: the figure must stay at or below Want (else at or above).
	AtMost bool `json:"at_most,omitempty"`
	// Ratio is impl over peer per trial; for an absolute target (no peer)
	// the figure itself.
	Ratio Stat `json:"measured"`
	// Met: "met" when the interval clears the target, "met (within noise)"
	// when only the median does, "short" or "short (within noise)" likewise.
	Met string `json:"met"`
	// Reach explains a target that no lock can meet on this machine: the
	// figure needed against the physical ceiling measured in the same run.
	Reach string `json:"reach,omitempty"`
	// Note carries what the target needs beside the ratio (commands per
	// acquisition, the ceiling's terms).
	Note string `json:"note,omitempty"`
}

// Survival is how many of the fault scenarios that apply to a lock it came
// through (checker.Survived: safe), without fencing, in the verdict matrix
// (results/correctness.json, written by `bench matrix`).
type Survival struct {
	Safe    int `json:"safe"`
	Applied int `json:"applied"`
}

// Machine describes where the figures were measured.
type Machine struct {
	CPU       string `json:"cpu"`
	Cores     int    `json:"cores"`
	MemoryGiB string `json:"memory_gib"`
	Kernel    string `json:"kernel"`
	OS        string `json:"os"`
	Go        string `json:"go"`
	// Placement: which CPUs the servers and the clients ran on (empty in
	// a run from before the lab split them).
	Placement string `json:"placement,omitempty"`
}

// Server describes one backend as the server itself reports it.
type Server struct {
	Backend  string            `json:"backend"`
	Version  string            `json:"version"`
	Started  string            `json:"started"` // "by the lab" or "external"
	Settings map[string]string `json:"settings"`
}
