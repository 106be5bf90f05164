package benchmark

import (
	"slices"
	"time"

	"github.com/locklab/locklab/quorum"
	"github.com/locklab/locklab/record"
)

// report turns the per-trial figures into the report's medians, spreads,
// bounds and ratios.
func (b *bench) report(servers []record.Server) *record.Bench {
	o := b.opts
	rep := &record.Bench{
		Date:    time.Now().UTC().Format("2006-01-02 15:04 UTC"),
		Command: o.Command,
		Machine: describeMachine(b.placement),
		Servers: servers,
		Settings: record.BenchSetting{
			DurationMS: ms(o.Duration), Clients: o.Clients, Sweep: o.Sweep, TTLMS: ms(o.TTL),
			Trials: o.Trials, Slices: o.Slices, SweepTrials: b.sweepTrials(), IndependentTrials: b.independentTrials(), Quick: o.Quick, Workloads: o.Workloads, CostUnits: costUnits(),
		},
	}
	var backends []string
	for be := range b.limits {
		backends = append(backends, be)
	}
	slices.Sort(backends)
	limitMany := map[string]float64{}
	for _, be := range backends {
		acc := b.limits[be]
		l := record.Limit{Backend: be, Request: limitRequest(be), OneClient: NewStat(acc.one), Clients: o.Clients, NClients: NewStat(acc.many)}
		if len(acc.hop) > 0 {
			l.WakeUp = &record.WakeUpLimit{Request: acc.hopRequest, HopMS: NewStat(acc.hop)}
		}
		if len(acc.fanAll) > 0 {
			n := acc.fanNodes
			l.FanOut = &record.FanOutLimit{Request: limitRequest(be), Nodes: n, Majority: quorum.Majority(n),
				AllPerSec: NewStat(acc.fanAll), MajorityPerSec: NewStat(acc.fanMajority)}
		}
		rep.Limits = append(rep.Limits, l)
		// A bound is the fastest the servers answered in any trial: load
		// from elsewhere only ever slows a round trip down, and on a shared
		// machine the median trial can be several times slower than the
		// locks' own best trials.
		limitMany[be] = l.NClients.Max
	}
	fl := floorsOf(rep.Limits)
	specs := o.Impls
	for _, a := range b.accs {
		s := a.spec
		r := record.BenchResult{Name: s.Name, Peer: s.Peer, Broken: s.Broken, Backend: backendOf(s), Caps: s.Caps.String(), RedisNodes: redisNodes(s)}
		r.RoundTrips = a.roundTrips
		if sv, ok := o.Survival[s.Name]; ok {
			r.Survives = &sv
		}
		if p, ok := closestPeer(s, specs); ok {
			r.ClosestPeer = p.Name
		}
		if len(a.unc.rate) > 0 {
			u := &record.UncontendedR{
				PairsPerSec: NewStat(a.unc.rate), AcquireP50: NewStat(a.unc.p50),
				AcquireP99: NewStat(a.unc.p99), AcquireP999: NewStat(a.unc.p999), Errors: a.uncErrors,
				CPU: cpuPerPair(a.unc.cpuClient, a.unc.cpuServer),
			}
			splitCPU(u.CPU, a.unc.parts, a.unc.samples, a.unc.process, a.unc.commands)
			// A lock on several nodes does each round trip as a fan-out to
			// all of them: the bound is the fan-out's rate, the same round
			// trip the targets' ceiling uses.
			//
			// A lock on one node is held to the round trips measured in the
			// slices between its own (probeLocker): its bound is their
			// median rate over its round trips, and its fraction of the
			// bound is taken trial by trial, each trial's pairs over that
			// trial's bound, so that the machine's drift cancels.
			shape := shapeOf(r)
			switch lim := fl.roundTrip(shape); {
			case r.RoundTrips == nil || r.RoundTrips.Divisor() <= 0:
			case !fl.fansOut(shape) && len(a.unc.probe) == len(a.unc.rate):
				div := r.RoundTrips.Divisor()
				u.BoundPairsPerSec = ptr(NewStat(a.unc.probe).Median / div)
				of := NewStat(trialRatios(a.unc.rate, scaled(a.unc.probe, 1/div)))
				u.OfBound, u.FractionOfBound = &of, ptr(of.Median)
			case lim > 0:
				u.BoundPairsPerSec = ptr(lim / r.RoundTrips.Divisor())
				u.FractionOfBound = ptr(u.PairsPerSec.Median / *u.BoundPairsPerSec)
			}
			r.Uncontended = u
		}
		if len(a.con.rate) > 0 {
			c := a.con
			cr := &record.ContendedR{
				Clients: o.Clients, PairsPerSec: NewStat(c.rate),
				WaitP50: NewStat(c.wp50), WaitP99: NewStat(c.wp99), WaitMax: NewStat(c.wmax), Errors: a.conErrors,
				HandoffP50: NewStat(c.hp50), HandoffP99: NewStat(c.hp99), Handoffs: NewStat(c.hand),
				SameClient: NewStat(c.same), SameClientShare: NewStat(c.share), Jain: NewStat(c.jain),
				Overlaps: NewStat(c.overlaps), CPU: cpuPerPair(c.cpuClient, c.cpuServer),
			}
			if len(c.cost) > 0 {
				st := NewStat(c.cost)
				cr.CostPerAcquisition, cr.CostUnit = &st, costUnit(r.Backend)
			}
			if c.byCommandGrants > 0 {
				cr.CostByCommand = map[string]float64{}
				for cmd, n := range c.byCommand {
					cr.CostByCommand[cmd] = n / float64(c.byCommandGrants)
				}
			}
			r.Contended = cr
		}
		for _, n := range o.Sweep {
			rates, errs := a.sweep[n], a.sweepErrors[n]
			if n == o.Clients && len(rates) == 0 {
				rates, errs = a.con.rate, a.conErrors
			}
			if len(rates) > 0 {
				r.Sweep = append(r.Sweep, record.SweepPoint{Clients: n, PairsPerSec: NewStat(rates), Errors: errs})
			}
		}
		if len(a.ind) > 0 {
			ir := &record.IndependentR{Clients: o.Clients, PairsPerSec: NewStat(a.ind), Errors: a.indErrors}
			if lim, ok := limitMany[r.Backend]; ok && r.RoundTrips != nil && r.RoundTrips.Divisor() > 0 && lim > 0 {
				ir.BoundPairsPerSec = ptr(lim / r.RoundTrips.Divisor())
				ir.FractionOfBound = ptr(ir.PairsPerSec.Median / *ir.BoundPairsPerSec)
			}
			r.Independent = ir
		}
		if o.has(Recovery) {
			r.Recovery = a.recovery
		}
		r.HandoffSamples, r.WaitSamples = a.handSamples, a.waitSmp
		rep.Impls = append(rep.Impls, r)
	}
	// Peer ratios, once every peer's figures are in.
	byName := map[string]*record.BenchResult{}
	for i := range rep.Impls {
		byName[rep.Impls[i].Name] = &rep.Impls[i]
	}
	for i := range rep.Impls {
		r := &rep.Impls[i]
		p := byName[r.ClosestPeer]
		if p == nil {
			continue
		}
		if r.Uncontended != nil && p.Uncontended != nil {
			r.Uncontended.PeerRatio = ratio(r.Uncontended.PairsPerSec, p.Uncontended.PairsPerSec)
		}
		if r.Contended != nil && p.Contended != nil {
			r.Contended.PeerRatio = ratio(r.Contended.PairsPerSec, p.Contended.PairsPerSec)
		}
		if r.Independent != nil && p.Independent != nil {
			r.Independent.PeerRatio = ratio(r.Independent.PairsPerSec, p.Independent.PairsPerSec)
		}
	}
	rep.Targets = judgeTargets(rep)
	rep.Overhead = protocolOverhead(rep)
	return rep
}

func ratio(a, b record.Stat) *float64 {
	if b.Median <= 0 {
		return nil
	}
	return ptr(a.Median / b.Median)
}

func ptr(f float64) *float64 { return &f }

// scaled is every figure of xs times k.
func scaled(xs []float64, k float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = x * k
	}
	return out
}

// cpuPerPair is the trials' CPU per pair (nil: not measured).
func cpuPerPair(client, server []float64) *record.CPUPerPair {
	if len(client) == 0 {
		return nil
	}
	c := &record.CPUPerPair{Clients: NewStat(client)}
	if len(server) > 0 {
		st := NewStat(server)
		c.Servers = &st
	}
	return c
}

// splitCPU adds to c this process's CPU per grant in the profiled slices,
// shared among the parts as the profile's samples were, and the servers'
// time in commands.
func splitCPU(c *record.CPUPerPair, parts map[string]float64, samples int, process, commands []float64) {
	if c == nil {
		return
	}
	var total float64
	for _, ns := range parts {
		total += ns
	}
	if samples > 0 && total > 0 && len(process) > 0 {
		st := NewStat(process)
		c.Process = &st
		c.ClientParts = map[string]float64{}
		for part, ns := range parts {
			c.ClientParts[part] = st.Median * ns / total
		}
		c.ProfileSamples = samples
	}
	if len(commands) > 0 {
		st := NewStat(commands)
		c.ServerCommands = &st
	}
}
