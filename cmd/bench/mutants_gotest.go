//go:build mutants

package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/locklab/locklab/impls/mutant"
)

// runTestCatcher runs the Go test that is a mutant's designed catcher
// (mutant.Mutant.Test) with the mutant live and, if it failed, again
// without it: the test catches the mutant when it fails with it and passes
// without. It runs the test as `go test` in the module's root, where `bench
// mutants` runs (make mutants and go run both start there), with the same
// server backend (LOCKLAB_SERVERS is inherited). A pass or a fail of a Go
// test is no verdict, so the row's verdict columns stay empty and its
// detail says what each run did.
func runTestCatcher(ctx context.Context, m mutant.Mutant) (MutantCell, error) {
	pkg, test, _ := m.Test()
	mc := MutantCell{Cell: m.Catcher}
	start := time.Now()
	failed, tail, err := goTest(ctx, pkg, test, m.Name)
	if err != nil {
		return mc, err
	}
	mc.Seconds = time.Since(start).Seconds()
	if !failed {
		mc.Detail = "the test passed with the mutant live"
		return mc, nil
	}
	unmutatedFailed, unmutatedTail, err := goTest(ctx, pkg, test, "")
	if err != nil {
		return mc, err
	}
	mc.Caught = !unmutatedFailed
	mc.Detail = "with the mutant: FAIL (" + tail + ")"
	if unmutatedFailed {
		mc.Detail += "; without it: FAIL too (" + unmutatedTail + "), so the test, not the mutant, failed"
	} else {
		mc.Detail += "; without it: ok"
	}
	return mc, nil
}

// goTest runs one top-level test of pkg with the mutants tag and the named
// mutant live ("" for none), and says whether it failed and the first line
// that says why. An error is a test that could not be run at all (no go
// tool, a build failure).
func goTest(ctx context.Context, pkg, test, live string) (failed bool, why string, err error) {
	cmd := exec.CommandContext(ctx, "go", "test", "-tags", mutant.Tag, "-count=1", "-p", "1", "-v", "-run", "^"+test+"$", pkg)
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, mutant.EnvVar+"=") {
			env = append(env, kv)
		}
	}
	if live != "" {
		env = append(env, mutant.EnvVar+"="+live)
	}
	cmd.Env = env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	runErr := cmd.Run()
	if ctx.Err() != nil {
		return false, "", ctx.Err()
	}
	text := out.String()
	lines := strings.Split(text, "\n")
	// A skip passes: a test that cannot start its servers in this
	// backend (a Redis Cluster in containers) would count as a survivor's
	// pass, or an unmutated pass, so it is no run at all.
	for i, line := range lines {
		if strings.HasPrefix(line, "--- SKIP: "+test+" ") {
			reason := ""
			if i > 0 {
				reason = strings.TrimSpace(lines[i-1])
			}
			return false, "", fmt.Errorf("go test %s -run %s skipped: %s", pkg, test, reason)
		}
	}
	if runErr == nil {
		if strings.Contains(text, "no tests to run") {
			return false, "", fmt.Errorf("go test %s -run %s ran no test: the catcher names no test of the package", pkg, test)
		}
		return false, "", nil
	}
	if strings.Contains(text, "[build failed]") || strings.Contains(text, "[setup failed]") {
		return false, "", fmt.Errorf("go test %s -run %s did not build: %s", pkg, test, firstLines(text, 5))
	}
	// Why it failed: the test's last message before the first failure is
	// reported (-v interleaves its logs, and a Fatal is the last word).
	why = firstLines(text, 1)
	for _, line := range lines {
		l := strings.TrimSpace(line)
		if strings.HasPrefix(l, "--- FAIL") {
			break
		}
		if strings.Contains(l, "_test.go:") {
			why = l
		}
	}
	return true, why, nil
}

// firstLines is the first n lines of s, joined by " / ".
func firstLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, " / ")
}
