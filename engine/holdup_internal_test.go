package engine

import (
	"testing"
	"time"

	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/nemesis"
)

// TestHoldUp: a held-up holder waits half a TTL, so that a lease's holder
// writes within its lease, except a lock with no expiry after a fault
// that makes the clients reconnect: it waits as long as reconnecting
// takes, or a lost lock would never be granted to anyone before it wrote.
func TestHoldUp(t *testing.T) {
	promotion, err := nemesis.Lookup(nemesis.PrimaryPromotion)
	if err != nil {
		t.Fatal(err)
	}
	kill, err := nemesis.Lookup(nemesis.ServerKill)
	if err != nil {
		t.Fatal(err)
	}
	reconnect := promotion.(nemesis.Reconnecting).Reconnect()
	const ttl = time.Second
	for _, tc := range []struct {
		name   string
		kind   nemesis.Kind
		expiry bool
		want   time.Duration
	}{
		{"no expiry, promotion", promotion, false, reconnect},
		{"lease, promotion", promotion, true, ttl / 2},
		{"no expiry, server kill", kill, false, ttl / 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := &Env{Options: Options{TTL: ttl, Impl: impls.Spec{Caps: impls.Capabilities{Expiry: tc.expiry}}}}
			if got := holdUp(env, tc.kind); got != tc.want {
				t.Fatalf("holdUp = %v, want %v", got, tc.want)
			}
		})
	}
	if reconnect <= ttl/2 {
		t.Fatalf("a promotion's reconnection bound %v is no longer than half the lab's TTL (%v): the hold-up would not change", reconnect, ttl/2)
	}
}

// TestSettlersOf: a schedule settles once per settling kind and target,
// and not at all without one.
func TestSettlersOf(t *testing.T) {
	for _, tc := range []struct {
		name  string
		steps []nemesis.Step
		want  int
	}{
		{"promotion", []nemesis.Step{{Kind: nemesis.PrimaryPromotion, Target: "postgres"}}, 1},
		{"twice the same", []nemesis.Step{{Kind: nemesis.PrimaryPromotion, Target: "postgres"}, {Kind: nemesis.PrimaryPromotion, Target: "postgres"}}, 1},
		{"no settler", []nemesis.Step{{Kind: nemesis.ServerKill, Target: "postgres"}}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := settlersOf(nemesis.Schedule{Faults: tc.steps})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != tc.want {
				t.Fatalf("settlers: %d, want %d", len(got), tc.want)
			}
		})
	}
}
