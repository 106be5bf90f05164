package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/record"
)

// A bad -profile is a usage error (exit status 2) that names the valid
// profiles or the rule broken, before any server starts or any file is
// written: an unknown name, a production run with one-second sessions, a
// production run where no topology of its own is chosen.
func TestBadProfile(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"matrix", "-profile", "slow", "-impl", "zookeeper", "-topology", "zk-ensemble"}, "valid names: fast, production"},
		{[]string{"matrix", "-profile", "fast,nope", "-impl", "zookeeper"}, "unknown profile \"nope\""},
		{[]string{"matrix", "-profile", "", "-impl", "zookeeper"}, "no profile named"},
		{[]string{"matrix", "-profile", "production", "-ttl", "1s", "-impl", "zookeeper", "-topology", "zk-ensemble"}, "10s or more"},
		{[]string{"matrix", "-profile", "production", "-impl", "redis-setnx-px", "-topology", "single"}, "production runs on etcd-cluster, mysql-replica-async"},
		{[]string{"check", "-profile", "slow", "-impl", "zookeeper", "-scenario", "holder-crash"}, "valid names: fast, production"},
		{[]string{"check", "-profile", "production", "-ttl", "2s", "-impl", "zookeeper", "-scenario", "holder-crash"}, "10s or more"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			dir := t.TempDir()
			// Point the output into dir, so a stray file would show there.
			args := append([]string{tt.args[0], "-out", filepath.Join(dir, "out")}, tt.args[1:]...)
			var out bytes.Buffer
			err := run(context.Background(), args, &out, &out)
			if !errors.Is(err, errUsage) {
				t.Fatalf("got %v, want a usage error", err)
			}
			if !strings.Contains(err.Error()+out.String(), tt.want) {
				t.Fatalf("error %q does not mention %q", err, tt.want)
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 0 {
				t.Fatalf("bad input wrote files: %v", entries)
			}
		})
	}
}

// The matrix's report says where a verdict differs between profiles, with
// the other profile's reason, and says nothing of profiles when it ran the
// fast one alone.
func TestProfileDifferences(t *testing.T) {
	fast := record.Cell{Impl: "guest:curator", Topology: "zk-ensemble", Scenario: "holder-server-cut", Verdict: checker.Unsafe, TTL: "1s", Runs: 2}
	prod := fast
	prod.Profile, prod.Verdict, prod.TTL, prod.Why, prod.ExercisedRuns = "production", checker.Safe, "10s", "the session outlasts the back-off", 2
	same := record.Cell{Impl: "zookeeper", Topology: "zk-ensemble", Scenario: "holder-server-cut", Verdict: checker.Safe, TTL: "1s"}
	sameProd := same
	sameProd.Profile, sameProd.TTL = "production", "10s"
	tests := []struct {
		name    string
		results []record.Cell
		want    []string
		ttl     string
	}{
		{"fast alone", []record.Cell{fast, same}, nil, "1s"},
		{"a verdict that differs", []record.Cell{fast, same, prod, sameProd},
			[]string{"Where the profile decides", "guest:curator @ zk-ensemble / holder-server-cut", "the session outlasts the back-off"},
			"1s under the fast profile, 10s under the production profile"},
		{"none differs", []record.Cell{same, sameProd}, nil, "1s under the fast profile, 10s under the production profile"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := profileDifferences(tt.results)
			if len(tt.want) == 0 && got != "" {
				t.Fatalf("a section where none belongs:\n%s", got)
			}
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("section lacks %q:\n%s", w, got)
				}
			}
			if strings.Contains(got, "zookeeper @") {
				t.Errorf("a cell whose verdict did not differ is listed:\n%s", got)
			}
			if ttl := ttlText(tt.results, time.Second); ttl != tt.ttl {
				t.Errorf("TTL %q, want %q", ttl, tt.ttl)
			}
		})
	}
}
