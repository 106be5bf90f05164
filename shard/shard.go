package shard

import (
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
)

// Shard is shard Index of Count (0 <= Index < Count). The zero value is
// no sharding: the whole run, as one machine does it.
type Shard struct {
	Index int `json:"index"`
	Count int `json:"count"`
}

// Parse reads "i/n", as the -shard flag takes it.
func Parse(s string) (Shard, error) {
	i, n, ok := strings.Cut(strings.TrimSpace(s), "/")
	if !ok {
		return Shard{}, fmt.Errorf("shard %q: want i/n, e.g. 0/4 (shard 0 of 4)", s)
	}
	index, err := strconv.Atoi(i)
	if err != nil {
		return Shard{}, fmt.Errorf("shard %q: index %q is not a number", s, i)
	}
	count, err := strconv.Atoi(n)
	if err != nil {
		return Shard{}, fmt.Errorf("shard %q: count %q is not a number", s, n)
	}
	if count < 1 {
		return Shard{}, fmt.Errorf("shard %q: the count must be at least 1", s)
	}
	if index < 0 || index >= count {
		return Shard{}, fmt.Errorf("shard %q: the index must be from 0 to %d", s, count-1)
	}
	return Shard{Index: index, Count: count}, nil
}

// Sharded reports whether s is a part of a run rather than the whole.
func (s Shard) Sharded() bool { return s.Count > 0 }

// String is "i/n", or "" for no sharding.
func (s Shard) String() string {
	if !s.Sharded() {
		return ""
	}
	return fmt.Sprintf("%d/%d", s.Index, s.Count)
}

// Owns reports whether the cell of this key is this shard's to run; with
// no sharding every cell is.
func (s Shard) Owns(key string) bool {
	return !s.Sharded() || Of(key, s.Count) == s.Index
}

// Of is the shard, of n, that the cell of this key belongs to: a hash of
// the key alone, not its position in a list, so adding or removing a cell
// moves no other.
func Of(key string, n int) int {
	h := fnv.New64a()
	h.Write([]byte(key))
	return int(h.Sum64() % uint64(n))
}
