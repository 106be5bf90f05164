package benchmark

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/engine"
	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/quorum"
	"github.com/locklab/locklab/record"
	"github.com/locklab/locklab/topology"
)

// bench is one run in progress: the options, the servers, and the figures
// gathered so far.
type bench struct {
	opts  Options
	topo  *cluster.Topology
	runID string
	seq   int
	bar   *progressbar.ProgressBar
	// pending: the bar's count of the step under way, added when the next
	// begins.
	pending int

	limits map[string]*limitAcc
	accs   []*implAcc
	// placement says which CPUs the servers and the clients ran on.
	placement string
	// pids are the servers' processes, read once at the start (a
	// container's costs a request to the engine) for the CPU split and the
	// CPU figures; a node with none (external) is absent.
	pids map[*cluster.Node]int
	// held are the sessions the interleaved windows reuse from trial to
	// trial, by lock and workload, on the pool's lockers.
	held map[heldKey]*session
	// pool is every lock's clients, built once per run (lockers).
	pool map[string][]impls.Locker
}

type heldKey struct{ impl, workload string }

// Per-trial figures, summarised into Stats at the end.
type limitAcc struct {
	one, many, hop, fanAll, fanMajority []float64
	// hopRequest names the wake-up hop measured (hop); fanNodes is how
	// many nodes the fan-out went to (fanAll).
	hopRequest string
	fanNodes   int
}

type implAcc struct {
	spec impls.Spec
	unc  struct {
		rate, p50, p99, p999, cpuClient, cpuServer []float64
		// parts is the profiled client CPU of the interleaved windows by
		// cpuPart (ns, every slice's summed), on samples samples;
		// commands the servers' command time per grant in the cost
		// windows, µs.
		parts   map[string]float64
		samples int
		// process is this process's CPU per grant in the profiled
		// slices, one figure a trial (µs).
		process  []float64
		commands []float64
		// probe is the backend's one-client round trips per second in the
		// slices between this lock's, one figure a trial (probeLocker).
		probe []float64
	}
	uncErrors int
	con       struct {
		rate, wp50, wp99, wmax, hp50, hp99, hand, same, share, jain, overlaps, cost []float64
		cpuClient, cpuServer                                                        []float64
		// byCommand sums each command's calls over the cost windows, and
		// byCommandGrants their grants (cluster.CommandCounter).
		byCommand       map[string]float64
		byCommandGrants int
	}
	conErrors            int
	handSamples, waitSmp []time.Duration
	sweep                map[int][]float64
	sweepErrors          map[int]int
	ind                  []float64
	indErrors            int
	recovery             *record.RecoveryR
	roundTrips           *record.MeasuredRoundTrips
}

// HolderCrash is the scenario the recovery figure comes from.
const HolderCrash = "holder-crash"

// Run measures every selected implementation and returns the report. It
// writes nothing: see Write.
func Run(ctx context.Context, opts Options) (*record.Bench, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	started := time.Now()
	// One set of servers for every lock: the union of their topologies.
	var decl topology.Declaration
	var backends []string
	named, err := topology.Lookup(opts.Topology)
	if err != nil {
		return nil, err
	}
	for _, s := range opts.Impls {
		d, err := s.Backend.On(named)
		if err != nil && s.Backend.Kind != "" {
			return nil, err
		}
		decl = decl.Merge(d)
		if be := backendOf(s); be != inProcess && !slices.Contains(backends, be) {
			backends = append(backends, be)
		}
	}
	slices.Sort(backends)
	decl = decl.Merge(topology.Of(topology.ResourceNode()))
	opts.logf("starting servers: %s", strings.Join(decl.Names(""), ", "))
	topo, err := cluster.Start(ctx, decl, opts.External)
	if err != nil {
		return nil, err
	}
	defer topo.Close()

	b := &bench{opts: opts, topo: topo, runID: strconv.FormatInt(time.Now().UnixNano(), 36), limits: map[string]*limitAcc{}}
	for _, s := range opts.Impls {
		b.accs = append(b.accs, &implAcc{spec: s, sweep: map[int][]float64{}, sweepErrors: map[int]int{}})
	}
	servers, err := b.describeServers(ctx, backends)
	if err != nil {
		return nil, err
	}
	b.pids = map[*cluster.Node]int{}
	var serverPIDs []int
	for _, n := range topo.Nodes() {
		if pid := n.PID(); pid > 0 {
			b.pids[n] = pid
			serverPIDs = append(serverPIDs, pid)
		}
	}
	if opts.SplitCPUs && !opts.External.Any() && len(serverPIDs) == len(topo.Nodes()) {
		// Every server is a process this machine can pin (in a container
		// too, by its PID here); otherwise nothing is split.
		split, err := newCPUSplit()
		if err != nil {
			return nil, err
		}
		if split != nil {
			if err := split.apply(serverPIDs); err != nil {
				return nil, err
			}
			defer split.undo()
		}
		b.placement = split.String()
	} else {
		b.placement = (*cpuSplit)(nil).String()
		if opts.External.Any() {
			b.placement = "external servers; the clients share this machine's CPUs"
		}
	}
	b.bar = b.newBar(backends)
	defer b.bar.Exit()
	b.held, b.pool = map[heldKey]*session{}, map[string][]impls.Locker{}
	defer b.closeHeld()

	// Each lock's round trips are counted first, before any other client
	// of the run exists: a server's counter may take in what other
	// sessions did before (an idle PostgreSQL backend reports its
	// transactions up to 10 s after it ran them, and a lock counted after
	// another's measurements read 3.16 or 8.11 transactions a pair where
	// it makes 2), and MySQL's count waits for every other session to end,
	// which held sessions never do.
	if opts.has(Uncontended) {
		for _, a := range b.accs {
			if backendOf(a.spec) == inProcess {
				continue
			}
			b.step(1, a.spec.Name, "round trips")
			rt, err := b.countRoundTrips(ctx, a.spec)
			if err != nil {
				return nil, fmt.Errorf("%s: count round trips: %w", a.spec.Name, err)
			}
			a.roundTrips = rt
		}
	}
	for t := 1; t <= opts.Trials; t++ {
		for _, be := range backends {
			if err := b.measureLimit(ctx, t, be); err != nil {
				return nil, err
			}
		}
		for _, g := range b.groups() {
			if err := b.measureGroup(ctx, t, g); err != nil {
				return nil, fmt.Errorf("trial %d: %w", t, err)
			}
		}
		for _, a := range b.accs {
			if err := b.measureImpl(ctx, t, a); err != nil {
				return nil, fmt.Errorf("trial %d, %s: %w", t, a.spec.Name, err)
			}
		}
	}
	if opts.has(Recovery) {
		for _, a := range b.accs {
			b.step(0, a.spec.Name, Recovery)
			a.recovery = b.recovery(ctx, a.spec)
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
	}
	b.bar.Describe("done")
	_ = b.bar.Finish()
	rep := b.report(servers)
	rep.Elapsed = time.Since(started).Seconds()
	return rep, nil
}

// steps counts the measurements of the run, for the progress bar.
func (b *bench) newBar(backends []string) *progressbar.ProgressBar {
	perImpl := 0
	if b.opts.has(Uncontended) {
		perImpl++
	}
	if b.opts.contended() {
		perImpl++
	}
	total := b.opts.Trials * (len(backends) + b.handOffLimitSteps(backends) + len(b.accs)*perImpl)
	if b.opts.has(Independent) {
		total += b.independentTrials() * len(b.accs)
	}
	if b.opts.has(Sweep) {
		total += b.sweepTrials() * len(b.accs) * len(b.sweepPoints())
	}
	if b.opts.has(Uncontended) || b.opts.contended() {
		total += b.sweepTrials() * len(b.accs) // the cost windows
	}
	if b.opts.has(Uncontended) {
		for _, a := range b.accs {
			if backendOf(a.spec) != inProcess {
				total++ // the round-trip count
			}
		}
	}
	if b.opts.has(Recovery) {
		total += len(b.accs)
	}
	w := b.opts.Progress
	if w == nil {
		return progressbar.NewOptions(total, progressbar.OptionSetVisibility(false))
	}
	return progressbar.NewOptions(total,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetWidth(30),
		progressbar.OptionShowCount(),
		progressbar.OptionSetElapsedTime(true),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionOnCompletion(func() { fmt.Fprintln(w) }),
	)
}

// step names what runs now on the bar, and counts the previous step done.
func (b *bench) step(trial int, name, workload string) { b.stepN(trial, name, workload, 1) }

// stepN is a step that counts as n on the bar (a group's locks in turn).
func (b *bench) stepN(trial int, name, workload string, n int) {
	desc := fmt.Sprintf("%-22s %-12s", name, workload)
	if trial > 0 {
		desc = fmt.Sprintf("trial %d/%d  %s", trial, b.opts.Trials, desc)
	}
	_ = b.bar.Add(b.pending)
	b.pending = n
	b.bar.Describe(desc)
}

// sweepTrials is how many trials run the sweep: SweepTrials, at most all
// of them (0 means all).
func (b *bench) sweepTrials() int {
	if b.opts.SweepTrials <= 0 || b.opts.SweepTrials > b.opts.Trials {
		return b.opts.Trials
	}
	return b.opts.SweepTrials
}

// sweepPoints are the sweep's client counts that need a run of their own:
// the count the contended workload uses is taken from it.
func (b *bench) sweepPoints() []int {
	var out []int
	for _, n := range b.opts.Sweep {
		if n == b.opts.Clients && b.opts.contended() {
			continue
		}
		out = append(out, n)
	}
	return out
}

// oneKey is a load of clients on one fresh key, with a critical section or
// not, for d: every workload but the independent keys.
func (b *bench) oneKey(s impls.Spec, clients int, section bool, d time.Duration) load {
	key := b.key()
	return load{spec: s, clients: clients, keys: func(int) string { return key }, section: section, duration: d}
}

func (b *bench) key() string {
	b.seq++
	return fmt.Sprintf("bench-%s-%d", b.runID, b.seq)
}

// config builds client id's lock configuration.
func (b *bench) config(id int) impls.Config {
	return impls.Config{
		Servers: b.topo.Endpoints(),
		TTL:     b.opts.TTL, ClientID: fmt.Sprintf("bench-client-%d", id),
	}
}

func (b *bench) measureLimit(ctx context.Context, trial int, be string) error {
	acc := b.limits[be]
	if acc == nil {
		acc = &limitAcc{}
		b.limits[be] = acc
	}
	b.step(trial, "limit: "+be, limitRequest(be))
	one, err := b.roundTrips(ctx, be, 1, b.opts.Duration)
	if err != nil {
		return err
	}
	many, err := b.roundTrips(ctx, be, b.opts.Clients, b.opts.Duration)
	if err != nil {
		return err
	}
	acc.one = append(acc.one, one)
	acc.many = append(acc.many, many)
	k, err := cluster.KindOf(topology.Kind(be))
	if err != nil {
		return err
	}
	ep := b.topo.Endpoints()[k.Kind()]
	if w, ok := k.(cluster.WakeUpHopper); ok {
		b.step(trial, "limit: "+be, "wake-up hop")
		hop, err := b.wakeUpHop(ctx, ep, w.WakeUpRequest(), b.opts.Duration)
		if err != nil {
			return err
		}
		acc.hop, acc.hopRequest = append(acc.hop, hop), w.WakeUpRequest()
	}
	if n := b.independentNodes(be); n > 1 {
		b.step(trial, "limit: "+be, fmt.Sprintf("fan-out to %d", n))
		all, err := b.fanOut(ctx, ep.Addrs, n, b.opts.Duration)
		if err != nil {
			return err
		}
		maj, err := b.fanOut(ctx, ep.Addrs, quorum.Majority(n), b.opts.Duration)
		if err != nil {
			return err
		}
		acc.fanAll, acc.fanMajority, acc.fanNodes = append(acc.fanAll, all), append(acc.fanMajority, maj), n
	}
	return nil
}

// handOffLimitSteps is how many steps of the bar the limits beyond the
// round trip take per trial: a wake-up hop for each kind that has one
// (cluster.WakeUpHopper), and a fan-out for each whose run has several
// independent lock nodes (cluster.FanOuter).
func (b *bench) handOffLimitSteps(backends []string) int {
	steps := 0
	for _, be := range backends {
		k, err := cluster.KindOf(topology.Kind(be))
		if err != nil {
			continue
		}
		if _, ok := k.(cluster.WakeUpHopper); ok {
			steps++
		}
		if b.independentNodes(be) > 1 {
			steps++
		}
	}
	return steps
}

// groups splits the locks by backend, in report order: the locks a
// ratio compares (a lock and its peers) share one, and are measured in
// turns (interleave).
func (b *bench) groups() [][]*implAcc {
	var order []string
	by := map[string][]*implAcc{}
	for _, a := range b.accs {
		be := backendOf(a.spec)
		if _, ok := by[be]; !ok {
			order = append(order, be)
		}
		by[be] = append(by[be], a)
	}
	out := make([][]*implAcc, 0, len(order))
	for _, be := range order {
		out = append(out, by[be])
	}
	return out
}

// measureGroup takes one trial's uncontended, contended and independent
// figures of one backend's locks, in turns.
func (b *bench) measureGroup(ctx context.Context, trial int, g []*implAcc) error {
	label := backendOf(g[0].spec)
	if len(g) > 1 {
		label = fmt.Sprintf("%s: %d locks in turn", label, len(g))
	}
	// extra are sessions that take their turns beside the locks' (the
	// limit's probe); their runs follow the locks' in the answer.
	turns := func(workload string, shape func(s impls.Spec) load, extra ...*session) ([]*run, error) {
		b.stepN(trial, label, workload, len(g))
		sessions := make([]*session, len(g), len(g)+len(extra))
		for i, a := range g {
			s, err := b.session(ctx, a.spec, workload, shape)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", workload, err)
			}
			sessions[i] = s
		}
		sessions = append(sessions, extra...)
		runs, err := b.interleave(ctx, sessions, b.opts.Slices)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", workload, err)
		}
		return runs, nil
	}
	if b.opts.has(Uncontended) {
		// The backend's round trip takes its turn too, one client as the
		// locks have: each lock's bound in this trial (probeLocker).
		probe, probed, err := b.probeSession(ctx, backendOf(g[0].spec))
		if err != nil {
			return fmt.Errorf("%s: %w", Uncontended, err)
		}
		var extra []*session
		if probed {
			extra = append(extra, probe)
		}
		runs, err := turns(Uncontended, func(s impls.Spec) load {
			l := b.oneKey(s, 1, false, b.opts.Duration)
			l.profile = profiled(backendOf(s), s.Guest)
			return l
		}, extra...)
		if err != nil {
			return err
		}
		for i, a := range g {
			r := runs[i]
			if probed {
				a.unc.probe = append(a.unc.probe, runs[len(g)].rate())
			}
			if r.samples > 0 {
				a.unc.parts = addParts(a.unc.parts, r.parts)
				a.unc.samples += r.samples
				if r.granted > 0 {
					a.unc.process = append(a.unc.process, float64(r.processCPU)/float64(time.Microsecond)/float64(r.granted))
				}
			}
			q := Quantiles(r.waits(), 0.5, 0.99, 0.999)
			a.unc.rate = append(a.unc.rate, r.rate())
			a.unc.p50, a.unc.p99, a.unc.p999 = append(a.unc.p50, q[0]), append(a.unc.p99, q[1]), append(a.unc.p999, q[2])
			a.uncErrors += r.errors
		}
	}
	if b.opts.contended() {
		runs, err := turns(Contended, func(s impls.Spec) load {
			return b.oneKey(s, b.opts.Clients, true, b.opts.Duration)
		})
		if err != nil {
			return err
		}
		for i, a := range g {
			b.addContended(a, runs[i])
		}
	}
	if b.opts.has(Independent) && trial <= b.independentTrials() {
		runs, err := turns(Independent, func(s impls.Spec) load {
			base := b.key()
			return load{spec: s, clients: b.opts.Clients, keys: func(i int) string { return fmt.Sprintf("%s-%d", base, i) }, duration: b.opts.Duration}
		})
		if err != nil {
			return err
		}
		for i, a := range g {
			a.ind = append(a.ind, runs[i].rate())
			a.indErrors += runs[i].errors
		}
	}
	return nil
}

// session returns the run's session of a lock on a workload, opening it
// (with shape's load) the first time.
func (b *bench) session(ctx context.Context, s impls.Spec, workload string, shape func(impls.Spec) load) (*session, error) {
	k := heldKey{s.Name, workload}
	if h := b.held[k]; h != nil {
		return h, nil
	}
	l := shape(s)
	l.pooled = true
	h, err := b.open(ctx, l)
	if err != nil {
		return nil, err
	}
	b.held[k] = h
	return h, nil
}

func (b *bench) closeHeld() {
	for _, h := range b.held {
		h.close()
	}
	b.closePool()
}

// independentTrials is how many trials (the first ones) measure the
// independent keys: they are no headline figure, and the run keeps to its
// budget.
func (b *bench) independentTrials() int { return HalfTrials(b.opts.Trials) }

// HalfTrials is half of trials, but at least 6, the fewest that give a 95%
// interval (and at most trials): the trials of figures measured for their
// shape, or on the topologies beside the single one.
func HalfTrials(trials int) int { return min(trials, max(6, trials/2)) }

// addContended adds one trial's contended figures.
func (b *bench) addContended(a *implAcc, r *run) {
	c := &a.con
	waits := r.waits()
	q := Quantiles(waits, 0.5, 0.99)
	c.rate = append(c.rate, r.rate())
	c.wp50, c.wp99, c.wmax = append(c.wp50, q[0]), append(c.wp99, q[1]), append(c.wmax, MaxMillis(waits))
	hand, same, overlaps := r.handoffs()
	hq := Quantiles(hand, 0.5, 0.99)
	c.hp50, c.hp99 = append(c.hp50, hq[0]), append(c.hp99, hq[1])
	c.hand = append(c.hand, float64(len(hand)))
	c.same = append(c.same, float64(same))
	share := 0.0
	if len(r.pairs) > 1 {
		share = float64(same) / float64(len(r.pairs)-1)
	}
	c.share = append(c.share, share)
	c.jain = append(c.jain, Jain(perClient(r.pairs, b.opts.Clients)))
	c.overlaps = append(c.overlaps, float64(overlaps))
	a.conErrors += r.errors
	a.handSamples = append(a.handSamples, hand...)
	a.waitSmp = append(a.waitSmp, waits...)
}

// measureImpl takes what one lock measures on its own in a trial: the
// windows its server counters and CPU time are read around and the sweep
// (the first SweepTrials trials). Its round trips are counted before the
// trials (Run).
func (b *bench) measureImpl(ctx context.Context, trial int, a *implAcc) error {
	s := a.spec
	if trial <= b.sweepTrials() && (b.opts.has(Uncontended) || b.opts.contended()) {
		b.step(trial, s.Name, "cost, CPU")
		if err := b.costWindows(ctx, a); err != nil {
			return err
		}
	}
	if b.opts.has(Sweep) && trial <= b.sweepTrials() {
		for _, n := range b.sweepPoints() {
			b.step(trial, s.Name, fmt.Sprintf("sweep %d", n))
			l := b.oneKey(s, n, true, b.opts.Duration/sweepShare)
			l.pooled = true
			r, err := b.measure(ctx, l)
			if err != nil {
				return fmt.Errorf("%s %d clients: %w", Sweep, n, err)
			}
			a.sweep[n] = append(a.sweep[n], r.rate())
			a.sweepErrors[n] += r.errors
		}
	}
	return nil
}

// costWindows are the uncontended and contended windows the CPU time (both)
// and the server counters (contended) are read around: one window each,
// hooked, apart from the interleaved slices. The counters and the CPU
// time count work, not time, so noise moves them less, and a few trials
// of them do. They run on the run's pool of lockers but where the servers
// count a session's work only once it ends (keepsCountedClients): there
// the window's clients are its own, closed before the second reading.
func (b *bench) costWindows(ctx context.Context, a *implAcc) error {
	s := a.spec
	be := backendOf(s)
	pooled := keepsCountedClients(be)
	if b.opts.has(Uncontended) {
		l := b.oneKey(s, 1, false, b.opts.Duration)
		l.cpu, l.pooled = true, pooled
		var before, after time.Duration
		timer := kindAs[cluster.CommandTimer](be)
		if timer != nil {
			ep := b.topo.Endpoints()[topology.Kind(be)]
			l.before = func(ctx context.Context) (err error) { before, err = timer.CommandTime(ctx, ep); return err }
			l.after = func(ctx context.Context) (err error) { after, err = timer.CommandTime(ctx, ep); return err }
		}
		r, err := b.measure(ctx, l)
		if err != nil {
			return fmt.Errorf("%s CPU: %w", Uncontended, err)
		}
		a.unc.cpuClient, a.unc.cpuServer = appendCPU(r, a.unc.cpuClient, a.unc.cpuServer)
		if timer != nil && r.granted > 0 {
			a.unc.commands = append(a.unc.commands, float64(after-before)/float64(time.Microsecond)/float64(r.granted))
		}
	}
	if !b.opts.contended() {
		return nil
	}
	var before, after float64
	var countsBefore, countsAfter map[string]float64
	l := b.oneKey(s, b.opts.Clients, true, b.opts.Duration)
	l.cpu, l.pooled = true, pooled
	counter := kindAs[cluster.CommandCounter](be)
	switch {
	case be == inProcess:
	case counter != nil:
		// One reading gives both the total and its split.
		ep := b.topo.Endpoints()[topology.Kind(be)]
		l.before = func(ctx context.Context) (err error) {
			countsBefore, err = counter.CommandCounts(ctx, ep)
			before = sumCommands(countsBefore)
			return err
		}
		l.after = func(ctx context.Context) (err error) {
			countsAfter, err = counter.CommandCounts(ctx, ep)
			after = sumCommands(countsAfter)
			return err
		}
	default:
		l.before = func(ctx context.Context) (err error) { before, err = b.serverCounter(ctx, be, false); return err }
		l.after = func(ctx context.Context) (err error) { after, err = b.serverCounter(ctx, be, true); return err }
	}
	r, err := b.measure(ctx, l)
	if err != nil {
		return fmt.Errorf("%s cost: %w", Contended, err)
	}
	c := &a.con
	c.cpuClient, c.cpuServer = appendCPU(r, c.cpuClient, c.cpuServer)
	if be != inProcess && r.granted > 0 {
		// Every grant, including those of the drain after the window, made
		// requests inside the counted interval, so divide by all of them.
		c.cost = append(c.cost, (after-before)/float64(r.granted))
		if counter != nil {
			if c.byCommand == nil {
				c.byCommand = map[string]float64{}
			}
			addCommands(c.byCommand, countsBefore, countsAfter)
			c.byCommandGrants += r.granted
		}
	}
	return nil
}

// recovery runs the holder-crash scenario, when it exists, and takes its
// recovery time. Its absence or failure is reported as text, never as a number.
func (b *bench) recovery(ctx context.Context, s impls.Spec) *record.RecoveryR {
	job, err := engine.FixedJob(HolderCrash, s, b.opts.Topology)
	if err != nil {
		return &record.RecoveryR{Note: "n/a (" + oneLine(err.Error()) + ")"}
	}
	out, err := engine.Run(ctx, job, engine.Options{
		Impl: s, Topology: b.opts.Topology, Clients: 4, Sections: b.opts.RecoverySections, TTL: b.opts.TTL, Seed: 1,
		External: b.opts.External, OutDir: os.TempDir(),
	})
	switch {
	case err != nil && errors.Is(err, ctx.Err()):
		return &record.RecoveryR{Note: "n/a (interrupted)"}
	case err != nil:
		b.opts.logf("recovery of %s: %v", s.Name, err)
		return &record.RecoveryR{Note: "n/a (" + oneLine(err.Error()) + ")"}
	case checker.LivenessViolated(out.Verdict):
		return &record.RecoveryR{Verdict: string(out.Verdict), Note: "never: no client held the lock within the scenario's bound"}
	case out.Recovery <= 0:
		return &record.RecoveryR{Verdict: string(out.Verdict), Note: "n/a (the scenario reported no recovery time: " + oneLine(out.Detail) + ")"}
	}
	sec := out.Recovery.Seconds()
	return &record.RecoveryR{Seconds: &sec, Verdict: string(out.Verdict), Note: "holder SIGKILLed; TTL " + b.opts.TTL.String()}
}

func oneLine(s string) string {
	for i, r := range s {
		if r == '\n' {
			s = s[:i]
			break
		}
	}
	if len(s) > 160 {
		s = s[:160] + "…"
	}
	return s
}

// independentNodes is how many independent lock nodes of backend be the
// run has, whose fan-out bounds a lock over several (cluster.FanOuter; 0
// for a kind whose nodes are not independent).
func (b *bench) independentNodes(be string) int {
	k, err := cluster.KindOf(topology.Kind(be))
	if err != nil {
		return 0
	}
	fo, ok := k.(cluster.FanOuter)
	if !ok {
		return 0
	}
	return fo.IndependentNodes(b.topo.Endpoints()[k.Kind()])
}

// appendCPU adds a measurement's CPU per grant to a lock's trials.
func appendCPU(r *run, client, server []float64) ([]float64, []float64) {
	if r.cpuOK {
		client = append(client, r.clientCPU)
	}
	if r.serverCPUOK {
		server = append(server, r.serverCPU)
	}
	return client, server
}
