package engine_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/engine"
	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/workload/takeover"
)

// A race's verdict is the checker's worst over every clock setting's
// rounds, and names the round that gave it, with its grants' times; a
// second winner asked after the first's lease ended is a late takeover,
// counted, not unsafe.
func TestJudgeTakeover(t *testing.T) {
	const ms = time.Millisecond
	won := takeover.Round{Winners: 1}
	first := takeover.Grant{Client: "client-0", Start: 0, Reply: 1 * ms, Lease: 100 * ms}
	late := takeover.Round{Winners: 2, Grants: []takeover.Grant{first, {Client: "client-5", Start: 112 * ms, Reply: 113 * ms, Lease: 100 * ms}}, RefreshReply: 114 * ms}
	overlapping := takeover.Round{Winners: 2, Grants: []takeover.Grant{first, {Client: "client-5", Start: 85 * ms, Reply: 86 * ms, Lease: 100 * ms}}}
	tests := []struct {
		name    string
		results []takeover.Result
		want    checker.Verdict
		late    int
		detail  string // in the detail, when not safe
	}{
		{"no race", nil, checker.Inconclusive, 0, "no race"},
		{"one winner each round", []takeover.Result{{Rounds: []takeover.Round{won}}, {Rounds: []takeover.Round{won, {Winners: 1, Overwritten: true, RefreshRefused: true}}}}, checker.Safe, 0, ""},
		{"two untimed winners on the second clock", []takeover.Result{{Rounds: []takeover.Round{won}}, {ClockSpread: "5ms", Rounds: []takeover.Round{won, {Winners: 2}}}}, checker.Unsafe, 0, "clocks ±5ms, round 2: 2 winners,"},
		{"a late takeover on each clock", []takeover.Result{{Rounds: []takeover.Round{won, late}}, {ClockSpread: "5ms", Rounds: []takeover.Round{late}}}, checker.Safe, 2, ""},
		{"the second granted inside the first's lease", []takeover.Result{{Rounds: []takeover.Round{late, overlapping}}}, checker.Unsafe, 1, "round 2: 2 winners (client-0 asked 0.0–1.0, lease to 100.0; client-5 asked 85.0–86.0, lease to 185.0"},
		{"a clock setting with no round", []takeover.Result{{Rounds: []takeover.Round{won}}, {ClockSpread: "5ms"}}, checker.Inconclusive, 0, "no round"},
		{"no winner", []takeover.Result{{Rounds: []takeover.Round{{}}}}, checker.Stuck, 0, "0 winners"},
		{"refresh accepted on an overwritten key", []takeover.Result{{Rounds: []takeover.Round{{Winners: 1, Overwritten: true}}}}, checker.Inconclusive, 0, "key overwritten true, the last winner's refresh refused false"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, detail := engine.JudgeTakeover(tt.results)
			if v != tt.want || (checker.Survived(v) != (detail == "")) {
				t.Fatalf("JudgeTakeover = %s (%q), want %s, with a detail unless safe", v, detail, tt.want)
			}
			if !strings.Contains(detail, tt.detail) {
				t.Errorf("detail %q, want it to say %q", detail, tt.detail)
			}
			if n := engine.LateTakeovers(tt.results); n != tt.late {
				t.Errorf("LateTakeovers = %d, want %d", n, tt.late)
			}
		})
	}
}

// TestTakeoverJob runs a small race as the engine runs lesson 3's: on the
// Redis redis-getset declares, started and stopped by engine.Run, one
// result per clock setting, and the checker's verdict safe (one winner a
// round, its refresh agreeing with the key). About 3 s.
func TestTakeoverJob(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Redis")
	}
	spec, err := impls.Lookup(takeover.Lock)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	defer assertNothingLeft(t)
	spreads := []time.Duration{0, 5 * time.Millisecond}
	var got []takeover.Result
	job := engine.TakeoverJob(takeover.Options{Clients: 3, Rounds: 3, TTL: 100 * time.Millisecond}, spreads, &got)
	out, err := engine.Run(ctx, job, engine.Options{Impl: spec, Seed: 1, TTL: 100 * time.Millisecond, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	if out.Verdict != checker.Safe {
		t.Errorf("verdict %s (%s), want safe", out.Verdict, out.Detail)
	}
	if late, ok := out.Figures["late-takeovers"]; !ok || late != float64(engine.LateTakeovers(got)) {
		t.Errorf("figure late-takeovers %v (recorded %v), want the count of the measured rounds, %d", late, ok, engine.LateTakeovers(got))
	}
	if len(got) != len(spreads) {
		t.Fatalf("%d results, want one per clock setting (%d)", len(got), len(spreads))
	}
	for i, r := range got {
		if r.ClockSpread != spreads[i].String() || len(r.Rounds) != 3 || r.Clients != 3 {
			t.Errorf("result %d: clocks ±%s, %d rounds, %d clients; want ±%s, 3 rounds, 3 clients", i, r.ClockSpread, len(r.Rounds), r.Clients, spreads[i])
		}
	}
}
