package engine_test

import (
	"context"
	"testing"
	"time"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/engine"
	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/workload/takeover"
)

// A race's verdict is the checker's worst over every clock setting's
// rounds, and names the round that gave it.
func TestJudgeTakeover(t *testing.T) {
	won := takeover.Round{Winners: 1}
	tests := []struct {
		name    string
		results []takeover.Result
		want    checker.Verdict
	}{
		{"no race", nil, checker.Inconclusive},
		{"one winner each round", []takeover.Result{{Rounds: []takeover.Round{won}}, {Rounds: []takeover.Round{won, {Winners: 1, Overwritten: true, RefreshRefused: true}}}}, checker.Safe},
		{"two winners on the second clock", []takeover.Result{{Rounds: []takeover.Round{won}}, {ClockSpread: "5ms", Rounds: []takeover.Round{won, {Winners: 2}}}}, checker.Unsafe},
		{"a clock setting with no round", []takeover.Result{{Rounds: []takeover.Round{won}}, {ClockSpread: "5ms"}}, checker.Inconclusive},
		{"no winner", []takeover.Result{{Rounds: []takeover.Round{{}}}}, checker.Stuck},
		{"refresh accepted on an overwritten key", []takeover.Result{{Rounds: []takeover.Round{{Winners: 1, Overwritten: true}}}}, checker.Inconclusive},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if v, detail := engine.JudgeTakeover(tt.results); v != tt.want || (checker.Survived(v) != (detail == "")) {
				t.Fatalf("JudgeTakeover = %s (%q), want %s, with a detail unless safe", v, detail, tt.want)
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
	if len(got) != len(spreads) {
		t.Fatalf("%d results, want one per clock setting (%d)", len(got), len(spreads))
	}
	for i, r := range got {
		if r.ClockSpread != spreads[i].String() || len(r.Rounds) != 3 || r.Clients != 3 {
			t.Errorf("result %d: clocks ±%s, %d rounds, %d clients; want ±%s, 3 rounds, 3 clients", i, r.ClockSpread, len(r.Rounds), r.Clients, spreads[i])
		}
	}
}
