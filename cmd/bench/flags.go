package main

import (
	"flag"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/locklab/locklab/scenarios"
	"github.com/locklab/locklab/shard"
	"github.com/locklab/locklab/topology"
)

// The flags several commands share, each with one spelling and one meaning
// everywhere; a command picks its own default where its runs differ.

// fencingFlag is -fencing: the resource refuses stale fencing tokens.
func fencingFlag(fs *flag.FlagSet) *bool {
	return fs.Bool("fencing", false, "the resource refuses writes with stale fencing tokens")
}

// ttlFlag is -ttl: the lease TTL, or ZooKeeper session timeout, of every
// run; note says what a zero default stands for, if anything.
func ttlFlag(fs *flag.FlagSet, def time.Duration, note string) *time.Duration {
	help := "lease TTL / session timeout"
	if note != "" {
		help += " " + note
	}
	return fs.Duration("ttl", def, help)
}

// seedFlag is -seed; zero draws one from the clock, and every command
// prints the seed it used. what says what the seed fixes in that command.
func seedFlag(fs *flag.FlagSet, what string) *int64 {
	return fs.Int64("seed", 0, what+" (default: from the clock)")
}

// outFlag is -out, the directory a command writes to (checked before any
// work: checkOutDir).
func outFlag(fs *flag.FlagSet, def, what string) *string {
	return fs.String("out", def, "directory for "+what)
}

// shardFlag is -shard i/n: run only the cells whose key hashes to shard i
// of n and write a partial result for `bench merge` (package shard). A bad
// value is a usage error at parse time, before any work.
func shardFlag(fs *flag.FlagSet) *shard.Shard {
	s := new(shard.Shard)
	fs.Func("shard", "run only shard `i/n` (0 <= i < n) of the cells, split by a hash of each cell's name, and write a partial result to -out for `bench merge`; needs -seed", func(v string) error {
		p, err := shard.Parse(v)
		if err != nil {
			return err
		}
		*s = p
		return nil
	})
	return s
}

// parallelFlag is -parallel: how many cells run at once. A cell spends
// almost all of its time waiting (out a lease, a pause, a fault's
// duration): the whole matrix used under half of one core of two, so two
// cells side by side still leave the machine mostly idle, and each run's
// faults are timed by its own clock and recorded as they happened.
//
// The default is 3: the 244 cells of the 2026-11-24 matrix (56m39s one
// after another) took 24m14s three at a time on 2 cores, with every run's
// verdict the same, cell for cell (docs/matrix.md, "Where a cell's time goes").
// A scenario whose holder must act within its lease right after the lab's
// fault runs alone whatever this says (scenarios.Scenario.Alone). make
// test's matrix keeps 2 (LOCKLAB_MATRIX_PARALLEL): it runs a cell once,
// and CI's margin is worth more there than its minutes.
func parallelFlag(fs *flag.FlagSet) *int {
	return fs.Int("parallel", 3, "cells run at once (each on servers and workers of its own); 1 runs them one after another")
}

// topologyFlag is -topology NAME: the servers' topology (`bench list` names
// them); the default is the single-server one. A bad name is a usage error
// at parse time, before any work.
func topologyFlag(fs *flag.FlagSet) *string {
	s := new(string)
	*s = topology.SingleName
	fs.Func("topology", "the servers' topology (see `bench list`; default single)", func(v string) error {
		t, err := topology.Lookup(v)
		if err != nil {
			return err
		}
		*s = t.Name
		return nil
	})
	return s
}

// topologiesFlag is -topology for the long commands: a comma-separated list
// of topologies to run (default: every one). Bad names are a usage error.
func topologiesFlag(fs *flag.FlagSet) *[]string {
	s := new([]string)
	fs.Func("topology", "comma-separated topologies (see `bench list`; default: every one)", func(v string) error {
		names, err := splitNames(v, topology.NamedNames(), func(n string) error { _, err := topology.Lookup(n); return err })
		if err != nil {
			return err
		}
		*s = names
		return nil
	})
	return s
}

// onTopologies keeps the cells on the chosen topologies (every cell when
// none was chosen).
func onTopologies(cells []scenarios.Cell, chosen []string) []scenarios.Cell {
	if len(chosen) == 0 {
		return cells
	}
	return slices.DeleteFunc(cells, func(c scenarios.Cell) bool { return !slices.Contains(chosen, topology.Or(c.Topology)) })
}

// profilesFlag is -profile: the comma-separated timeout profiles
// (topology.Profile) a command's cells run under; fast by default, today's
// settings. A bad name is a usage error at parse time, before any work.
func profilesFlag(fs *flag.FlagSet) *[]string {
	s := &[]string{topology.FastName}
	fs.Func("profile", "comma-separated timeout profiles: "+strings.Join(topology.ProfileNames(), ", ")+
		" (default fast; production runs only on the topologies where a ratio of timeouts decides a verdict; see docs)", func(v string) error {
		names, err := splitNames(v, nil, func(n string) error { _, err := topology.LookupProfile(n); return err })
		if err != nil {
			return err
		}
		if len(names) == 0 {
			return fmt.Errorf("no profile named")
		}
		*s = slices.Compact(names)
		return nil
	})
	return s
}

// ttlFor is the TTL a profile's cells run with: -ttl when it was given,
// else the profile's own, checked against the profile's least.
func ttlFor(p topology.Profile, ttl time.Duration, given bool) (time.Duration, error) {
	if !given {
		return p.TTL, nil
	}
	if err := p.CheckTTL(ttl); err != nil {
		return 0, err
	}
	return ttl, nil
}

// flagGiven reports whether the command line set the flag called name.
func flagGiven(fs *flag.FlagSet, name string) bool {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == name })
	return given
}
