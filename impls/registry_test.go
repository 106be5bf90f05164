package impls_test

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/locklab/locklab/impls"
	_ "github.com/locklab/locklab/impls/all"
	"github.com/locklab/locklab/impls/guest"
	"github.com/locklab/locklab/topology"
)

// root is the repository, from this package's folder.
const root = ".."

// readBack are the server kinds whose state the conformance suite reads
// back (impls/conformance's ServerSideShape): a lock of ours on one of
// them declares its Footprint. etcd has no read-back yet.
var readBack = map[topology.Kind]bool{
	topology.Redis: true, topology.ZooKeeper: true, topology.Postgres: true, topology.MySQL: true,
}

// serverBacked: the lock talks to servers, so it has round trips to count.
func serverBacked(s impls.Spec) bool { return s.Backend.Kind != "" && !s.Backend.InProcess }

// TestEveryLockDeclaresItsFacts lists what a new lock must provide in its
// impls.Spec, beside its code: adding a lock is its package, its
// registration (with these facts) and its expectation rows. A missing fact
// fails by the lock's name and the fact's, not as a silent gap in a table
// elsewhere (the benchmark's round trips, the suite's read-back, the
// lessons' links, the scenarios' failpoints all read them from here).
func TestEveryLockDeclaresItsFacts(t *testing.T) {
	if guest.LoadErr != nil {
		t.Fatalf("a guest's manifest did not load, so its lock is not registered: %v", guest.LoadErr)
	}
	failpoints := failpointConstants(t)
	facts := []struct {
		name string
		// applies says which locks must have the fact.
		applies func(impls.Spec) bool
		check   func(impls.Spec) error
	}{
		{"summary", all, func(s impls.Spec) error {
			if strings.TrimSpace(s.Summary) == "" {
				return errors.New("no Summary: one line for `bench list`")
			}
			return nil
		}},
		{"source", all, func(s impls.Spec) error {
			if s.Source == "" {
				return errors.New("no Source: the file (or a guest's folder) a reader should open")
			}
			if _, err := os.Stat(filepath.Join(root, s.Source)); err != nil {
				return fmt.Errorf("Source %s: %w", s.Source, err)
			}
			return nil
		}},
		{"failpoints", all, func(s impls.Spec) error {
			return failpointsHit(s, failpoints)
		}},
		{"round trips", serverBacked, func(s impls.Spec) error {
			rt := s.RoundTrips
			switch {
			case rt.N <= 0 || rt.Note == "":
				return fmt.Errorf("RoundTrips %+v: declare the round trips of an uncontended acquire-release pair and the requests they are", rt)
			case rt.CountedAs < 0:
				return fmt.Errorf("RoundTrips.CountedAs %d < 0", rt.CountedAs)
			}
			return nil
		}},
		{"footprint", func(s impls.Spec) bool { return !s.Guest && readBack[s.Backend.Kind] }, func(s impls.Spec) error {
			if !s.Footprint.Declared() {
				return fmt.Errorf("no Footprint: declare what it keeps on %s while it holds a key", s.Backend.Kind)
			}
			return nil
		}},
		{"footprint's kind", func(s impls.Spec) bool { return s.Footprint.Declared() }, func(s impls.Spec) error {
			return footprintOnItsKind(s)
		}},
		{"page", func(s impls.Spec) bool { return !s.Guest }, func(s impls.Spec) error {
			if !strings.HasPrefix(s.Page, "docs/lessons/") {
				return fmt.Errorf("Page %q: declare the lesson under docs/lessons/ that covers it", s.Page)
			}
			if _, err := os.Stat(filepath.Join(root, s.Page)); err != nil {
				return fmt.Errorf("Page %s: %w", s.Page, err)
			}
			return nil
		}},
	}
	for _, s := range impls.All() {
		t.Run(s.Name, func(t *testing.T) {
			for _, f := range facts {
				if !f.applies(s) {
					continue
				}
				if err := f.check(s); err != nil {
					t.Errorf("%s: %v", f.name, err)
				}
			}
		})
	}
}

func all(impls.Spec) bool { return true }

// footprintOnItsKind: a footprint names state on the lock's own server
// kind only (the suite reads back every kind the topology has), and its
// ZooKeeper child pattern compiles.
func footprintOnItsKind(s impls.Spec) error {
	f := s.Footprint
	on := map[topology.Kind]bool{
		topology.Redis:     len(f.Redis) > 0,
		topology.ZooKeeper: f.ZKDir != "" || f.ZKChild != "",
		topology.Postgres:  f.PGTable != "" || f.PGAdvisory || f.PGRowLocked || f.PGVersionIsToken,
		topology.MySQL:     f.MySQLTable != "" || f.MySQLGetLock || f.MySQLVersionIsToken,
	}
	for kind, declared := range on {
		if declared && kind != s.Backend.Kind {
			return fmt.Errorf("Footprint names %s state, but the lock runs on %q", kind, s.Backend.Kind)
		}
	}
	if f.ZKDir != "" {
		if _, err := regexp.Compile(f.ZKChild); err != nil || f.ZKChild == "" {
			return fmt.Errorf("Footprint.ZKChild %q: a regular expression for each contender's node name: %v", f.ZKChild, err)
		}
	}
	return nil
}

// failpointConstants reads faults/failpoint's constants: value -> Go name.
func failpointConstants(t *testing.T) map[string]string {
	t.Helper()
	path := filepath.Join(root, "faults", "failpoint", "failpoint.go")
	file, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
	if err != nil {
		t.Fatalf("read the failpoints: %v", err)
	}
	out := map[string]string{}
	for _, d := range file.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, spec := range g.Specs {
			v := spec.(*ast.ValueSpec)
			for i, name := range v.Names {
				if i >= len(v.Values) {
					continue
				}
				if lit, ok := v.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
					if val, err := strconv.Unquote(lit.Value); err == nil {
						out[val] = name.Name
					}
				}
			}
		}
	}
	if len(out) == 0 {
		t.Fatalf("no failpoint constants in %s", path)
	}
	return out
}

// failpointsHit: each failpoint the lock declares is a constant of
// faults/failpoint that its Source file hits (cfg.Hit, or a hit function
// it was handed), so a scenario that names it can land on it.
func failpointsHit(s impls.Spec, constants map[string]string) error {
	if len(s.Failpoints) == 0 {
		return nil
	}
	src, err := os.ReadFile(filepath.Join(root, s.Source))
	if err != nil {
		return fmt.Errorf("read Source to find its failpoints: %w", err)
	}
	for _, fp := range s.Failpoints {
		name, ok := constants[fp]
		if !ok {
			return fmt.Errorf("failpoint %q is no constant of faults/failpoint", fp)
		}
		hit := regexp.MustCompile(`(?i)\bhit\(failpoint\.` + name + `\)`)
		if !hit.Match(src) {
			return fmt.Errorf("failpoint %q (failpoint.%s) is declared, but %s never hits it", fp, name, s.Source)
		}
	}
	return nil
}
