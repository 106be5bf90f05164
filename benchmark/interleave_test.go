package benchmark

import (
	"testing"
	"time"
)

// A run of interleaved slices counts a hand-off only inside a slice: the
// gap between one slice's last release and the next slice's first grant is
// other locks' turns, not this lock's hand-off.
func TestRunAddKeepsSlicesApart(t *testing.T) {
	t0 := time.Now()
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	slice := func(from int) *run {
		// Client 0 holds, client 1 takes over 1 ms after 0 began to release.
		return &run{duration: 100 * time.Millisecond, windows: []int{0}, granted: 2, pairs: []pair{
			{client: 0, start: at(from), acquired: at(from + 1), releaseStart: at(from + 2), released: at(from + 3)},
			{client: 1, start: at(from), acquired: at(from + 3), releaseStart: at(from + 4), released: at(from + 5)},
		}}
	}
	r := &run{}
	for _, from := range []int{0, 500, 1000} {
		r.add(slice(from))
	}
	hand, same, overlaps := r.handoffs()
	if len(hand) != 3 || same != 0 || overlaps != 0 {
		t.Fatalf("hand-offs %v, same %d, overlaps %d; want one of 1ms per slice", hand, same, overlaps)
	}
	for _, h := range hand {
		if h != time.Millisecond {
			t.Errorf("a hand-off of %v: counted across two slices", h)
		}
	}
	if r.duration != 300*time.Millisecond || r.granted != 6 || r.rate() != 20 {
		t.Errorf("duration %v, granted %d, rate %v; want the slices' sums (300ms, 6, 20/s)", r.duration, r.granted, r.rate())
	}
}

func TestSliceOf(t *testing.T) {
	for _, c := range []struct {
		d      time.Duration
		slices int
		want   time.Duration
	}{
		{500 * time.Millisecond, 5, 100 * time.Millisecond},
		{500 * time.Millisecond, 1, 500 * time.Millisecond},
		{500 * time.Millisecond, 0, 500 * time.Millisecond},
	} {
		if got := sliceOf(c.d, c.slices); got != c.want {
			t.Errorf("sliceOf(%v, %d) = %v, want %v", c.d, c.slices, got, c.want)
		}
	}
}
