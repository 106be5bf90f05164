package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/cluster/leftovers"
)

// TestMatrixCutByAnInterruptSaysSo: a matrix whose context ends while its
// cells start their servers (Ctrl-C ends it before the handler stops the
// servers) prints each cut cell as interrupted, never as a cell that could
// not run or a lock whose acquires failed, writes nothing, and leaves no
// temp dir and no server.
func TestMatrixCutByAnInterruptSaysSo(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	out := filepath.Join(t.TempDir(), "out")
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	go func() {
		// Once a cell is starting its servers.
		for ctx.Err() == nil {
			if entries, _ := os.ReadDir(tmp); hasServerDir(entries) {
				cancel(fmt.Errorf("%w by SIGINT", cluster.ErrInterrupted))
				return
			}
			time.Sleep(100 * time.Microsecond)
		}
	}()
	var buf bytes.Buffer
	err := run(ctx, []string{"matrix", "-topology", "single", "-impl", "redis-setnx-px",
		"-scenario", "contention,holder-crash", "-runs", "1", "-parallel", "2", "-out", out}, &buf, &buf)
	if !errors.Is(err, cluster.ErrInterrupted) {
		t.Fatalf("got %v, want the interrupt\n%s", err, buf.String())
	}
	if !strings.Contains(buf.String(), "interrupted by SIGINT") {
		t.Errorf("no cell says it was interrupted:\n%s", buf.String())
	}
	for _, bad := range []string{"could not run", "acquires failed"} {
		if strings.Contains(buf.String(), bad) {
			t.Errorf("a cut cell is reported as %q:\n%s", bad, buf.String())
		}
	}
	if _, serr := os.Stat(out); !os.IsNotExist(serr) {
		t.Errorf("the interrupted run wrote %s", out)
	}
	if entries, _ := os.ReadDir(tmp); len(entries) > 0 {
		for _, e := range entries {
			t.Errorf("%s is left in the run's temp dir", e.Name())
		}
	}
	if pids := cluster.LivePIDs(); len(pids) > 0 {
		t.Errorf("servers still run: %v", pids)
	}
}

// hasServerDir reports whether entries hold a lab dir of a server (not the
// matrix's staging dir or a run's).
func hasServerDir(entries []os.DirEntry) bool {
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), leftovers.DirPrefix+"redis-") || strings.HasPrefix(e.Name(), leftovers.DirPrefix+"resource") {
			return true
		}
	}
	return false
}
