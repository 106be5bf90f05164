package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/locklab/locklab/cluster"
)

// TestMatrixGoesOnPastACellThatCannotRun: a cell whose server cannot start
// does not stop the others; the run names every such cell, exits with an
// error that is not a usage error, and writes nothing.
func TestMatrixGoesOnPastACellThatCannotRun(t *testing.T) {
	// Every Redis cell fails at its start, as a cell whose server or guest
	// cannot start does, in either server mode: in local mode no
	// redis-server is on PATH; in container mode the Redis image's base
	// is one no engine has or can pull, so the image cannot be built.
	t.Setenv("PATH", t.TempDir())
	t.Setenv("LOCKLAB_BASE_IMAGE", "locklab/no-such-base:none")
	cause := "redis-server"
	if cluster.ContainerMode() {
		cause = "docker/redis"
	}
	out := filepath.Join(t.TempDir(), "out")
	var buf bytes.Buffer
	err := run(context.Background(), []string{"matrix", "-topology", "single", "-impl", "redis-setnx-px",
		"-scenario", "contention,holder-crash", "-runs", "1", "-out", out}, &buf, &buf)
	if err == nil || errors.Is(err, errUsage) {
		t.Fatalf("got %v, want a run error\n%s", err, buf.String())
	}
	for _, want := range []string{"3 of 3 cells could not run", "redis-setnx-px/contention:", "redis-setnx-px/holder-crash:", "redis-setnx-px/holder-crash/fenced:", cause} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %q:\n%v", want, err)
		}
	}
	if strings.Count(buf.String(), "could not run") != 3 {
		t.Errorf("the progress does not show every cell that could not run:\n%s", buf.String())
	}
	if _, serr := os.Stat(out); !os.IsNotExist(serr) {
		t.Errorf("the failed run wrote %s", out)
	}
	if pids := cluster.LivePIDs(); len(pids) > 0 {
		t.Errorf("servers running after the run: %v", pids)
	}
}
