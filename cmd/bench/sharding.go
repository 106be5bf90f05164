package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/cluster/hosts"
	"github.com/locklab/locklab/shard"
)

// A sharded run (-shard i/n) runs only its cells and writes a partial
// result (package shard) in place of the command's results; `bench merge`
// puts the shards' partials back together and writes the results with the
// same writers as an unsharded run.

// buildCommit names the lab's commit this bench was built from. It is a
// variable so a test can make shards of another commit.
var buildCommit = commitOfBuild

// commitNamed is the commit a report names: the build's, or why it is
// unknown (a report is still written; a sharded run, which must match its
// shards by commit, refuses instead).
func commitNamed() string {
	c, err := buildCommit()
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	return c
}

// labCommit is the commit, when the build names it:
// `go build -ldflags "-X main.labCommit=$(git rev-parse HEAD)"`, for an
// image built from a tree without its .git (deploy/), or where
// GOFLAGS=-buildvcs=false keeps Go from stamping it.
var labCommit string

// commitOfBuild reads the commit from the build (labCommit, or the
// binary's VCS stamp: `go build` in a git checkout stamps it), or asks git
// in the working directory where there is none (a test binary, `go run`);
// "+modified" marks a tree with uncommitted changes.
func commitOfBuild() (string, error) {
	if labCommit != "" {
		return labCommit, nil
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		rev, modified := "", false
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
		if rev != "" {
			if modified {
				rev += "+modified"
			}
			return rev, nil
		}
	}
	out, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		return "", fmt.Errorf("a sharded run names its commit, and this bench cannot tell it (no -X main.labCommit and no VCS stamp in the binary; git rev-parse HEAD in the working directory: %v): build bench with `go build -ldflags \"-X main.labCommit=$(git rev-parse HEAD)\"`", err)
	}
	rev := strings.TrimSpace(string(out))
	if st, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(bytes.TrimSpace(st)) > 0 {
		rev += "+modified"
	}
	return rev, nil
}

// hostsAvailable says whether this machine can give the lab its own hosts
// (root, ip, iptables): where it cannot, the scenarios and fault kinds
// that need them do not apply, so the run holds other cells.
func hostsAvailable() bool { return hosts.Available() == nil }

// serversMode is where this run starts its servers, an option that
// decides verdicts like any other.
func serversMode() string {
	if cluster.ContainerMode() {
		return cluster.ServersContainers
	}
	return cluster.ServersLocal
}

// newPartial starts a shard's partial result, before any cell runs: a
// shard whose seed was left to the clock, or whose commit cannot be told,
// is refused at once rather than after its work.
func newPartial(command string, s shard.Shard, seed int64, args []string, options any, total int) (*shard.Partial, error) {
	if seed == 0 {
		return nil, fmt.Errorf("%w: -shard needs -seed: every shard must derive the same seeds as the unsharded run", errUsage)
	}
	commit, err := buildCommit()
	if err != nil {
		return nil, err
	}
	opts, err := json.Marshal(options)
	if err != nil {
		return nil, fmt.Errorf("encode options: %w", err)
	}
	return &shard.Partial{Command: command, Commit: commit, Options: opts, Args: unshardedArgs(args), Shard: s,
		Total: total, Cells: []shard.Cell{}, Files: map[string][]byte{}}, nil
}

// addCell adds a cell's result to the partial, at its position in the
// whole run.
func addCell(p *shard.Partial, key string, position int, result any) error {
	data, err := json.Marshal(result)
	if err != nil {
		return fmt.Errorf("encode %s: %w", key, err)
	}
	p.Cells = append(p.Cells, shard.Cell{Key: key, Position: position, Result: data})
	return nil
}

// addFiles adds every file of dir whose name matches one of patterns to
// the partial, under prefix (the path the results link it by).
func addFiles(p *shard.Partial, dir, prefix string, patterns []string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		if os.IsNotExist(err) {
			return nil
		}
		return err
	}
	for _, e := range entries {
		if e.IsDir() || !matchesAny(e.Name(), patterns) {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return err
		}
		p.Files[filepath.ToSlash(filepath.Join(prefix, e.Name()))] = data
	}
	return nil
}

func matchesAny(name string, patterns []string) bool {
	for _, p := range patterns {
		if ok, _ := filepath.Match(p, name); ok {
			return true
		}
	}
	return false
}

// writePartial writes the shard's partial into out and says so.
func writePartial(p *shard.Partial, out string, started time.Time, stdout io.Writer) error {
	p.Seconds = time.Since(started).Seconds()
	path, err := p.Write(out)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "shard %s: %d of %d cells\npartial: %s\n", p.Shard, len(p.Cells), p.Total, path)
	return nil
}

// unshardedArgs is a command line without its -shard and -out: the
// unsharded run's, which the merged results name (merge adds its own -out).
func unshardedArgs(args []string) []string {
	out := []string{}
	for i := 0; i < len(args); i++ {
		name := strings.TrimLeft(args[i], "-")
		if !strings.HasPrefix(args[i], "-") || args[i] == "--" {
			out = append(out, args[i])
			continue
		}
		if name == "shard" || name == "out" {
			i++ // the value is the next argument
			continue
		}
		if strings.HasPrefix(name, "shard=") || strings.HasPrefix(name, "out=") {
			continue
		}
		out = append(out, args[i])
	}
	return out
}

// writeFiles writes a merged run's files into dir.
func writeFiles(dir string, files map[string][]byte) error {
	for name, data := range files {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if !strings.HasPrefix(path, filepath.Clean(dir)+string(filepath.Separator)) {
			return fmt.Errorf("file %q lies outside the results", name)
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			return err
		}
	}
	return nil
}
