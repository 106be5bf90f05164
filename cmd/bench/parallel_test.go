package main

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// TestForEachParallel holds the matrix's scheduler to its promises: never
// more than n cells at once, a cell marked alone with no other beside it,
// every cell run once, and the first error returned.
func TestForEachParallel(t *testing.T) {
	boom := errors.New("boom")
	for _, tc := range []struct {
		name    string
		items   int
		n       int
		alone   map[int]bool
		failAt  int // -1: none
		wantErr error
	}{
		{name: "one at a time", items: 6, n: 1, failAt: -1},
		{name: "two at a time", items: 8, n: 2, failAt: -1},
		{name: "alone among others", items: 9, n: 3, alone: map[int]bool{2: true, 3: true, 7: true}, failAt: -1},
		{name: "first error", items: 8, n: 2, failAt: 3, wantErr: boom},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var (
				mu                 sync.Mutex
				running, most      int
				aloneRunning       bool
				overlapAlone, runs int
			)
			items := make([]int, tc.items)
			for i := range items {
				items[i] = i
			}
			err := forEachParallel(context.Background(), items, tc.n, func(i int) bool { return tc.alone[i] },
				func(ctx context.Context, i int) error {
					mu.Lock()
					running++
					runs++
					most = max(most, running)
					if aloneRunning || (tc.alone[i] && running > 1) {
						overlapAlone++
					}
					if tc.alone[i] {
						aloneRunning = true
					}
					mu.Unlock()
					time.Sleep(5 * time.Millisecond)
					mu.Lock()
					running--
					if tc.alone[i] {
						aloneRunning = false
					}
					mu.Unlock()
					if i == tc.failAt {
						return boom
					}
					return nil
				})
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("error %v, want %v", err, tc.wantErr)
			}
			if most > tc.n {
				t.Errorf("%d ran at once, limit %d", most, tc.n)
			}
			if tc.n > 1 && tc.failAt < 0 && len(tc.alone) == 0 && most < 2 {
				t.Errorf("never more than one at once with a limit of %d", tc.n)
			}
			if overlapAlone != 0 {
				t.Errorf("a cell marked alone ran beside another %d times", overlapAlone)
			}
			if tc.failAt < 0 && runs != tc.items {
				t.Errorf("%d calls, want %d", runs, tc.items)
			}
		})
	}
}
