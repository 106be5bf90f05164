package quorum_test

import (
	"fmt"
	"testing"

	"github.com/locklab/locklab/quorum"
)

func ExampleMajority() {
	for _, n := range []int{1, 3, 5} {
		fmt.Printf("%d of %d\n", quorum.Majority(n), n)
	}
	// Output:
	// 1 of 1
	// 2 of 3
	// 3 of 5
}

func TestMajority(t *testing.T) {
	tests := []struct{ n, want int }{
		{0, 1}, {1, 1}, {2, 2}, {3, 2}, {4, 3}, {5, 3}, {6, 4}, {7, 4},
	}
	for _, tt := range tests {
		got := quorum.Majority(tt.n)
		if got != tt.want {
			t.Errorf("Majority(%d) = %d, want %d", tt.n, got, tt.want)
		}
		// The property the count exists for: two majorities of n overlap.
		if tt.n > 0 && 2*got <= tt.n {
			t.Errorf("Majority(%d) = %d: two such sets need not share a node", tt.n, got)
		}
	}
}
