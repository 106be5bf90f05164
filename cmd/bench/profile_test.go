package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
