package shard_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/locklab/locklab/shard"
)

func TestParse(t *testing.T) {
	tests := []struct {
		in   string
		want shard.Shard
		err  string
	}{
		{"0/1", shard.Shard{Index: 0, Count: 1}, ""},
		{"3/4", shard.Shard{Index: 3, Count: 4}, ""},
		{" 1/2 ", shard.Shard{Index: 1, Count: 2}, ""},
		{"4/4", shard.Shard{}, "the index must be from 0 to 3"},
		{"-1/4", shard.Shard{}, "the index must be from 0 to 3"},
		{"0/0", shard.Shard{}, "the count must be at least 1"},
		{"0/-2", shard.Shard{}, "the count must be at least 1"},
		{"2", shard.Shard{}, "want i/n"},
		{"", shard.Shard{}, "want i/n"},
		{"a/2", shard.Shard{}, `index "a" is not a number`},
		{"1/b", shard.Shard{}, `count "b" is not a number`},
	}
	for _, tt := range tests {
		got, err := shard.Parse(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("Parse(%q): error %v, want one saying %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("Parse(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

func TestNoShardOwnsEverything(t *testing.T) {
	var whole shard.Shard
	if whole.Sharded() || !whole.Owns("anything") || whole.String() != "" {
		t.Fatalf("the zero Shard is not the whole run: %+v", whole)
	}
}

// Each cell goes to the shard its name hashes to, whatever else the run
// holds: every machine that runs shard 1 of 3 runs the same cells.
func Example() {
	s, err := shard.Parse("1/3")
	if err != nil {
		panic(err)
	}
	for _, cell := range []string{"none/contention", "redis-setnx-px/contention", "zookeeper/holder-crash"} {
		fmt.Printf("%-28s shard %d/3, mine: %v\n", cell, shard.Of(cell, 3), s.Owns(cell))
	}
	// Output:
	// none/contention              shard 1/3, mine: true
	// redis-setnx-px/contention    shard 2/3, mine: false
	// zookeeper/holder-crash       shard 2/3, mine: false
}
