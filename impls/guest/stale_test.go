package guest_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/impls/guest"
)

// A guest built or installed before a change to what it is built from is
// refused at start with the command that brings it up to date, not run
// stale: the Go guest (run.sh against build/sources, go.mod and go.sum)
// and the Node.js guests (lib-node/installed.js against package-lock.json,
// npm-install.sh's own test). Each case is a copy in a temporary folder
// whose files' times the case sets.
func TestStaleGuestRefused(t *testing.T) {
	root := guest.Root()
	if root == "" {
		t.Fatal("no repository root")
	}
	old, fresh := time.Now().Add(-time.Hour), time.Now()
	t.Run("lab-redis-setnx-px", func(t *testing.T) {
		runSh, err := os.ReadFile(filepath.Join(root, "guests/lab-redis-setnx-px/run.sh"))
		if err != nil {
			t.Fatal(err)
		}
		tests := []struct {
			name  string
			built bool
			newer string // a file touched after the build ("" none)
			want  string // "" to start, else the refusal's text
		}{
			{"built, nothing changed since", true, "", ""},
			{"a source of the lock changed", true, "impls/lock.go", "built before a change to impls/lock.go: run scripts/setup.sh (or guests/lab-redis-setnx-px/install.sh)"},
			{"the adapter changed", true, "guests/lab-redis-setnx-px/main.go", "built before a change to guests/lab-redis-setnx-px/main.go"},
			{"go.sum changed", true, "go.sum", "built before a change to go.sum"},
			{"a test file changed", true, "impls/lock_test.go", ""},
			{"not built", false, "", "not built: run scripts/setup.sh"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				dir := t.TempDir()
				g := filepath.Join(dir, "guests/lab-redis-setnx-px")
				files := map[string]string{
					"go.mod": "module x\n", "go.sum": "", "impls/lock.go": "package impls\n", "impls/lock_test.go": "package impls\n",
					"guests/lab-redis-setnx-px/main.go": "package main\n", "guests/lab-redis-setnx-px/run.sh": string(runSh),
				}
				if tt.built {
					files["guests/lab-redis-setnx-px/build/lab-redis-setnx-px"] = "#!/bin/sh\necho started\n"
					files["guests/lab-redis-setnx-px/build/sources"] = filepath.Join(dir, "impls") + "\n" + g + "\n"
				}
				for name, body := range files {
					writeAt(t, filepath.Join(dir, name), body, old)
				}
				if tt.built {
					writeAt(t, filepath.Join(g, "build/lab-redis-setnx-px"), files["guests/lab-redis-setnx-px/build/lab-redis-setnx-px"], old.Add(time.Minute))
				}
				if tt.newer != "" {
					if err := os.Chtimes(filepath.Join(dir, tt.newer), fresh, fresh); err != nil {
						t.Fatal(err)
					}
				}
				out, err := exec.Command("bash", filepath.Join(g, "run.sh")).CombinedOutput()
				judgeStart(t, string(out), err, tt.want)
			})
		}
	})
	t.Run("node", func(t *testing.T) {
		if _, err := exec.LookPath("node"); err != nil {
			t.Fatal("node is missing (Debian: nodejs; scripts/setup.sh installs it)")
		}
		installed := filepath.Join(root, "guests/lib-node/installed.js")
		tests := []struct {
			name  string
			stamp *time.Time // node_modules/.locklab-installed's time; nil: none
			lock  time.Time  // package-lock.json's
			want  string
		}{
			{"installed after the lock file", &fresh, old, ""},
			{"lock file changed since", &old, fresh, "guest node-x: its package-lock.json changed after its npm packages were installed: run scripts/setup.sh (or guests/node-x/install.sh)"},
			{"never installed", nil, old, "guest node-x: its npm packages are not installed: run scripts/setup.sh"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				dir := filepath.Join(t.TempDir(), "node-x")
				writeAt(t, filepath.Join(dir, "package-lock.json"), "{}\n", tt.lock)
				if tt.stamp != nil {
					writeAt(t, filepath.Join(dir, "node_modules/.locklab-installed"), "", *tt.stamp)
				}
				script := "require(process.argv[1]).orExit(process.argv[2]); console.log('started')"
				out, err := exec.Command("node", "-e", script, installed, dir).CombinedOutput()
				judgeStart(t, string(out), err, tt.want)
			})
		}
	})
}

// writeAt writes a file (made executable) and sets its times to at.
func writeAt(t *testing.T, path, body string, at time.Time) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, at, at); err != nil {
		t.Fatal(err)
	}
}

// judgeStart checks a guest's start: it started ("started", no error) when
// want is "", else it failed saying want.
func judgeStart(t *testing.T, out string, err error, want string) {
	t.Helper()
	if want == "" {
		if err != nil || !strings.Contains(out, "started") {
			t.Errorf("a current guest did not start: %v\n%s", err, out)
		}
		return
	}
	if err == nil || strings.Contains(out, "started") {
		t.Errorf("a stale guest started (%v):\n%s", err, out)
	}
	if !strings.Contains(out, want) {
		t.Errorf("the refusal says %q, want it to say %q", strings.TrimSpace(out), want)
	}
}
