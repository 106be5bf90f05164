package benchmark_test

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/benchmark"
	"github.com/locklab/locklab/cluster"
	_ "github.com/locklab/locklab/impls/all"
)

func TestMain(m *testing.M) {
	code := m.Run()
	cluster.StopAll()
	os.Exit(code)
}

// A tiny run of two locks (the in-process reference and the Redis lock)
// must produce a complete, well-formed report: every implementation in
// every table, every figure a finite number, charts that parse, and a
// bench.json that decodes. Timings are not asserted: benchmarks are not tests.
func TestShortRunWritesCompleteReport(t *testing.T) {
	specs, err := benchmark.ParseImpls("local-mutex,redis-setnx-px")
	if err != nil {
		t.Fatal(err)
	}
	opts := benchmark.Defaults(true)
	opts.Impls = specs
	opts.Duration = 60 * time.Millisecond
	opts.Sweep = []int{1, 2, 4}
	opts.Clients = 4
	opts.TTL = time.Second
	opts.Trials = 3
	opts.Workloads = benchmark.Workloads // recovery included
	opts.RecoverySections = 40
	opts.Command = "go test ./benchmark"
	var progress bytes.Buffer
	opts.Progress = &progress
	rep, err := benchmark.Run(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "results")
	files, err := benchmark.Write(rep, dir)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(progress.String(), "redis-setnx-px") {
		t.Errorf("the progress bar never named the implementation:\n%s", progress.String())
	}

	// bench.json decodes, names both locks, and holds only finite numbers.
	raw, err := os.ReadFile(filepath.Join(dir, "bench.json"))
	if err != nil {
		t.Fatal(err)
	}
	var got benchmark.Report
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatalf("bench.json: %v", err)
	}
	var generic any
	if err := json.Unmarshal(raw, &generic); err != nil {
		t.Fatal(err)
	}
	if n := checkFinite(t, "bench.json", generic); n < 100 {
		t.Errorf("bench.json holds only %d numbers", n)
	}
	if len(got.Impls) != 2 {
		t.Fatalf("bench.json has %d implementations, want 2", len(got.Impls))
	}
	for _, r := range got.Impls {
		if r.Uncontended == nil || r.Contended == nil || r.Independent == nil || r.Recovery == nil || len(r.Sweep) != 3 {
			t.Errorf("%s: a workload is missing: %+v", r.Name, r)
			continue
		}
		if len(r.Uncontended.PairsPerSec.Trials) != 3 || r.Uncontended.PairsPerSec.Median <= 0 || r.Contended.PairsPerSec.Median <= 0 {
			t.Errorf("%s: want 3 trials of positive pairs/s, got %+v", r.Name, r.Uncontended.PairsPerSec)
		}
		if r.Contended.Overlaps.Max != 0 {
			t.Errorf("%s: a correct lock showed %v overlapping grants", r.Name, r.Contended.Overlaps.Max)
		}
		if r.Recovery.Seconds == nil && r.Recovery.Note == "" {
			t.Errorf("%s: recovery has neither a figure nor a reason", r.Name)
		}
	}
	redis := got.Impls[1]
	if redis.Name != "redis-setnx-px" || redis.Uncontended.FractionOfBound == nil || redis.Contended.CostPerAcquisition == nil {
		t.Errorf("redis-setnx-px lacks its bound or its cost: %+v", redis)
	} else if f := *redis.Uncontended.FractionOfBound; f <= 0 || math.IsNaN(f) || math.IsInf(f, 0) {
		// Only that it is a figure: how it compares with the bound is a
		// measurement of a shared, noisy machine, reported, never asserted.
		t.Errorf("redis-setnx-px's fraction of its bound is %v, want a positive number", f)
	}
	if len(got.Limits) != 1 || got.Limits[0].Backend != "redis" {
		t.Errorf("limits: %+v, want the Redis round trip", got.Limits)
	}

	// bench.md names every lock in every table and links every chart.
	md, err := os.ReadFile(filepath.Join(dir, "bench.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"NaN", "Inf"} {
		if strings.Contains(string(md), bad) {
			t.Errorf("bench.md contains %s", bad)
		}
	}
	sections := strings.Split(string(md), "\n## ")
	tables := 0
	for _, sec := range sections {
		if !strings.Contains(sec, "| implementation |") {
			continue
		}
		tables++
		for _, name := range []string{"`local-mutex`", "`redis-setnx-px`"} {
			if !strings.Contains(sec, name) {
				t.Errorf("section %q lacks %s", strings.SplitN(sec, "\n", 2)[0], name)
			}
		}
	}
	if tables < 8 {
		t.Errorf("bench.md has %d implementation tables, want one per workload (8)", tables)
	}

	// Every chart is linked and parses as SVG.
	if len(got.Charts) != 4 {
		t.Errorf("charts %v, want 4", got.Charts)
	}
	for _, c := range got.Charts {
		if !strings.Contains(string(md), "("+c+")") {
			t.Errorf("bench.md does not link %s", c)
		}
		checkSVG(t, filepath.Join(dir, c))
	}
	if len(files) != 2+len(got.Charts) {
		t.Errorf("wrote %v", files)
	}
	// Nothing but the report is left beside it (the temp dir is gone).
	entries, _ := os.ReadDir(filepath.Dir(dir))
	if len(entries) != 1 {
		t.Errorf("left behind: %v", entries)
	}
}

func checkFinite(t *testing.T, path string, v any) int {
	t.Helper()
	switch x := v.(type) {
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			t.Errorf("%s: %v is not a finite number", path, x)
		}
		return 1
	case map[string]any:
		n := 0
		for k, e := range x {
			n += checkFinite(t, path+"."+k, e)
		}
		return n
	case []any:
		n := 0
		for _, e := range x {
			n += checkFinite(t, path+"[]", e)
		}
		return n
	}
	return 0
}

func checkSVG(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := xml.NewDecoder(bytes.NewReader(b))
	root := ""
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Errorf("%s is not well-formed XML: %v", path, err)
			return
		}
		if se, ok := tok.(xml.StartElement); ok && root == "" {
			root = se.Name.Local
		}
	}
	if root != "svg" {
		t.Errorf("%s: root element %q, want svg", path, root)
	}
}

// Names are checked before anything runs: an unknown one is an error that
// lists the valid ones.
func TestUnknownNamesListValidOnes(t *testing.T) {
	tests := []struct {
		impls, workloads string
		want             string
	}{
		{"nope", "", "redis-setnx-px"},
		{"none", "", "local-mutex"}, // the no-lock control is not measured
		{"", "nope", "uncontended"},
	}
	for _, tt := range tests {
		t.Run(tt.impls+tt.workloads, func(t *testing.T) {
			_, err1 := benchmark.ParseImpls(tt.impls)
			_, err2 := benchmark.ParseWorkloads(tt.workloads, benchmark.Workloads)
			err := errors.Join(err1, err2)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want an error listing %q", err, tt.want)
			}
		})
	}
}
