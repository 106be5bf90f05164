package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/record"
	"github.com/locklab/locklab/scenarios"
	"github.com/locklab/locklab/shard"
)

// coversOnce asserts the split's property on one real list of cell keys,
// for every shard count up to 16: each key lands in exactly one shard, the
// shards' cells in list order are the whole list, and a key added to the
// list moves no other.
func coversOnce(t *testing.T, what string, keys []string) {
	t.Helper()
	if len(keys) == 0 {
		t.Fatalf("%s: no cells", what)
	}
	// A key is a cell's identity: the split (shard.Of) takes nothing
	// else, not the list nor a position in it, so a cell added or removed
	// moves no other. Two cells of one key would be one cell to the merge.
	seen := map[string]bool{}
	for _, k := range keys {
		if seen[k] {
			t.Errorf("%s: two cells are named %s", what, k)
		}
		seen[k] = true
	}
	for n := 1; n <= 16; n++ {
		var shards [][]string
		for i := 0; i < n; i++ {
			var mine []string
			s := shard.Shard{Index: i, Count: n}
			for _, k := range keys {
				if s.Owns(k) {
					mine = append(mine, k)
				}
			}
			shards = append(shards, mine)
		}
		owners := map[string]int{}
		for _, mine := range shards {
			for _, k := range mine {
				owners[k]++
			}
		}
		for _, k := range keys {
			if owners[k] != 1 {
				t.Errorf("%s, %d shards: %s is in %d shards", what, n, k, owners[k])
			}
		}
		// Put back in the list's order, the shards are the list.
		var merged []string
		for _, k := range keys {
			if slices.Contains(shards[shard.Of(k, n)], k) {
				merged = append(merged, k)
			}
		}
		if !slices.Equal(merged, keys) {
			t.Errorf("%s, %d shards: the shards put together are not the list", what, n)
		}
		if n == 4 {
			var sizes []int
			for _, mine := range shards {
				sizes = append(sizes, len(mine))
			}
			t.Logf("%s: %d cells over 4 shards: %v", what, len(keys), sizes)
		}
	}
}

// The real cell lists: every matrix cell and every lock explore -impl all
// runs (the mutants' list is in sharding_mutants_test.go, which needs the
// tag).
func TestShardsCoverEveryCellOnce(t *testing.T) {
	cells, err := scenarios.Cells(impls.All(), scenarios.Names())
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, c := range cells {
		keys = append(keys, c.Name())
	}
	coversOnce(t, "matrix", keys)
	coversOnce(t, "explore", impls.Names())
}

// benchRun runs bench in this process and fails the test on an error.
func benchRun(t *testing.T, args ...string) string {
	t.Helper()
	var out bytes.Buffer
	if err := run(context.Background(), args, &out, &out); err != nil {
		t.Fatalf("bench %s: %v\n%s", strings.Join(args, " "), err, out.String())
	}
	return out.String()
}

// A bad -shard is a usage error before any work, and writes nothing.
func TestShardFlagRefused(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"matrix", "-shard", "2/2", "-seed", "1"}, "index must be from 0 to 1"},
		{[]string{"matrix", "-shard", "-1/2", "-seed", "1"}, "index must be from 0 to 1"},
		{[]string{"matrix", "-shard", "0/0", "-seed", "1"}, "count must be at least 1"},
		{[]string{"matrix", "-shard", "1", "-seed", "1"}, "want i/n"},
		{[]string{"matrix", "-shard", "a/2", "-seed", "1"}, "not a number"},
		{[]string{"matrix", "-shard", "0/2"}, "-shard needs -seed"},
		{[]string{"explore", "-impl", "all", "-shard", "5/4", "-seed", "1"}, "index must be from 0 to 3"},
		{[]string{"explore", "-impl", "all", "-shard", "0/4"}, "-shard needs -seed"},
		{[]string{"explore", "-impl", "none", "-shard", "0/4", "-seed", "1"}, "one lock's exploration is one cell"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			out := t.TempDir()
			var buf bytes.Buffer
			err := run(context.Background(), append([]string{tt.args[0], "-out", out}, tt.args[1:]...), &buf, &buf)
			if !errors.Is(err, errUsage) {
				t.Fatalf("got %v, want a usage error", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %q does not mention %q", err, tt.want)
			}
			if entries, _ := os.ReadDir(out); len(entries) != 0 {
				t.Fatalf("a refused shard wrote files: %v", entries)
			}
		})
	}
}

// bench merge refuses every set of partials that is not each shard of one
// run, once, naming what is wrong, and writes nothing. The partials are
// real ones, written by sharded runs of a one-cell matrix (none under
// contention, shard 1 of 2; the other shards own no cell and run nothing).
func TestMergeRefuses(t *testing.T) {
	dir := t.TempDir()
	mk := func(name string, args ...string) string {
		d := filepath.Join(dir, name)
		benchRun(t, append(args, "-out", d)...)
		files, err := filepath.Glob(filepath.Join(d, "*.shard-*.json"))
		if err != nil || len(files) != 1 {
			t.Fatalf("%s: want one partial, got %v (%v)", name, files, err)
		}
		return files[0]
	}
	matrixArgs := func(s string, extra ...string) []string {
		return append([]string{"matrix", "-impl", "none", "-scenario", "contention", "-runs", "1", "-seed", "5", "-shard", s}, extra...)
	}
	if shard.Of("none/contention", 2) != 1 || shard.Of("none/contention", 3) == 0 || shard.Of("local-mutex", 2) != 0 {
		t.Fatal("the test assumes none/contention is shard 1/2 and not 0/3, and local-mutex shard 0/2")
	}
	base0 := mk("base0", matrixArgs("0/2")...)
	base1 := mk("base1", matrixArgs("1/2")...)
	dup1 := mk("dup1", matrixArgs("1/2")...)
	ttl0 := mk("ttl0", matrixArgs("0/2", "-ttl", "2s")...)
	three0 := mk("three0", matrixArgs("0/3")...)
	explore0 := mk("explore0", "explore", "-impl", "local-mutex,none", "-seed", "5", "-shard", "0/2")
	commit := buildCommit
	buildCommit = func() (string, error) { return "0123456789abcdef0123456789abcdef01234567", nil }
	other0 := mk("other0", matrixArgs("0/2")...)
	buildCommit = commit

	// The set that is whole merges: the baseline of every refusal below.
	good := filepath.Join(dir, "good")
	benchRun(t, "merge", "-out", good, base0, base1)
	var cells []record.Cell
	data, err := os.ReadFile(filepath.Join(good, "correctness.json"))
	if err == nil {
		err = json.Unmarshal(data, &cells)
	}
	if err != nil || len(cells) != 1 || cells[0].Impl != "none" {
		t.Fatalf("merged correctness.json: %v, %+v", err, cells)
	}
	empty := filepath.Join(dir, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name  string
		paths []string
		want  string
	}{
		{"nothing given", nil, "needs the shards' partial results"},
		{"missing shard", []string{base0}, "missing shard 1/2 (given: 0/2)"},
		{"shard given twice", []string{base0, base1, dup1}, "shard 1/2 is given twice"},
		{"another commit", []string{base1, other0}, "at commit 0123456789abcdef"},
		{"other options", []string{base1, ttl0}, `different options (ttl: "1s" / "2s")`},
		{"another count", []string{base1, three0}, "split the same cells the same number of ways"},
		{"a mix of commands", []string{base1, explore0}, "a shard of bench matrix but"},
		{"a directory without partials", []string{empty}, "holds no partial result"},
		{"not a partial", []string{filepath.Join(good, "correctness.json")}, "is not a partial result"},
		{"no such file", []string{filepath.Join(dir, "nope.json")}, "no such file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			var buf bytes.Buffer
			err := run(context.Background(), append([]string{"merge", "-out", out}, tt.paths...), &buf, &buf)
			if !errors.Is(err, errUsage) {
				t.Fatalf("got %v, want a refusal (usage error, exit 2)", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %q does not mention %q", err, tt.want)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Fatalf("a refused merge wrote %s", out)
			}
		})
	}
}

// A matrix run in two shards and merged is the matrix run unsharded: the
// same cells in the same order, each with the same seeds and the same
// verdict (and so the same grid, counterexample links and all).
func TestShardedMatrixMergesToUnsharded(t *testing.T) {
	dir := t.TempDir()
	args := []string{"matrix", "-impl", "none,local-mutex,redis-setnx-px", "-scenario", "contention", "-runs", "1", "-seed", "11"}
	whole, parts, merged := filepath.Join(dir, "whole"), filepath.Join(dir, "parts"), filepath.Join(dir, "merged")
	benchRun(t, append(args, "-out", whole)...)
	for _, s := range []string{"0/2", "1/2"} {
		benchRun(t, append(args, "-shard", s, "-out", parts)...)
	}
	benchRun(t, "merge", "-out", merged, parts)

	sameMatrix(t, whole, merged)
}

// sameMatrix asserts that the matrix in merged (put together from shards)
// is the one in whole (run unsharded): the same cells in the same order,
// each with the same seeds and the same verdict, and the same report below
// its header, every counterexample it links present.
func sameMatrix(t *testing.T, whole, merged string) {
	t.Helper()
	read := func(dir string) ([]record.Cell, string) {
		var cells []record.Cell
		data, err := os.ReadFile(filepath.Join(dir, "correctness.json"))
		if err == nil {
			err = json.Unmarshal(data, &cells)
		}
		if err != nil {
			t.Fatal(err)
		}
		md, err := os.ReadFile(filepath.Join(dir, "correctness.md"))
		if err != nil {
			t.Fatal(err)
		}
		return cells, string(md)
	}
	want, wantMD := read(whole)
	got, gotMD := read(merged)
	if len(got) != len(want) {
		t.Fatalf("merged %d cells, unsharded %d", len(got), len(want))
	}
	for i := range want {
		w, g := want[i], got[i]
		name := w.Impl + "/" + w.Scenario
		if g.Impl != w.Impl || g.Scenario != w.Scenario || g.Fencing != w.Fencing {
			t.Fatalf("cell %d: merged %s/%s, unsharded %s", i, g.Impl, g.Scenario, name)
		}
		if !slices.Equal(g.Seeds, w.Seeds) {
			t.Errorf("%s: merged seeds %v, unsharded %v", name, g.Seeds, w.Seeds)
		}
		// The verdicts the checker decides from each one's runs, and as
		// the reviewed table judges them.
		wv, gv := checker.CellVerdict(w.RunVerdicts), checker.CellVerdict(g.RunVerdicts)
		if gv != wv || g.Verdict != gv || w.Verdict != wv {
			t.Errorf("%s: merged %s (runs %v), unsharded %s (runs %v)", name, g.Verdict, g.RunVerdicts, w.Verdict, w.RunVerdicts)
		}
		if checker.Agrees(g.Expected, gv) != checker.Agrees(w.Expected, wv) {
			t.Errorf("%s: merged and unsharded disagree on agreeing with the expectation %s", name, w.Expected)
		}
	}
	// Everything below the header (which names the command line, the
	// date and the time taken) is the same text.
	body := func(md string) string { _, b, _ := strings.Cut(md, "\n\nVerdicts:"); return b }
	if body(gotMD) != body(wantMD) {
		t.Errorf("the merged correctness.md differs from the unsharded one:\n%s\n---\n%s", body(gotMD), body(wantMD))
	}
	links := regexp.MustCompile(`\]\((counterexamples/[^)]+)\)`).FindAllStringSubmatch(gotMD, -1)
	if len(links) == 0 {
		t.Fatal("no counterexample linked: none/contention should have one")
	}
	for _, l := range links {
		if _, err := os.Stat(filepath.Join(merged, l[1])); err != nil {
			t.Errorf("merged report links %s: %v", l[1], err)
		}
	}
}
