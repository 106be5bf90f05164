package engine

import (
	"testing"

	"github.com/locklab/locklab/faults/netproxy"
)

// TestLinksBeforeClients: a standing fault strikes a client's links
// before any client has started, when a slot is known only by its first
// client's id (the slot itself); a slot the run does not have is an error.
func TestLinksBeforeClients(t *testing.T) {
	x := &system{net: netproxy.New(), next: 2}
	defer x.net.Close()
	for _, c := range []int{0, 1} {
		for _, s := range []string{"redis-1", "redis-2"} {
			// Nothing listens upstream: a link dials it only when a
			// client connects.
			if _, err := x.net.Link(c, s, "127.0.0.1:1"); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, tc := range []struct {
		slot   int
		server string
		want   int // links; -1: an error
	}{
		{0, "redis-2", 1},
		{1, "", 2},
		{-1, "redis-1", 2},
		{2, "redis-1", -1},
	} {
		links, err := x.Links(tc.slot, tc.server)
		switch {
		case tc.want < 0 && err == nil:
			t.Errorf("Links(%d, %q): %d links, want an error", tc.slot, tc.server, len(links))
		case tc.want >= 0 && err != nil:
			t.Errorf("Links(%d, %q): %v", tc.slot, tc.server, err)
		case tc.want >= 0 && len(links) != tc.want:
			t.Errorf("Links(%d, %q): %d links, want %d", tc.slot, tc.server, len(links), tc.want)
		}
	}
}
