package lessons

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/locklab/locklab/cluster"
)

// generatedAt is the footer a regeneration stamps on each block; it is the
// only text a rewrite from the same records may change.
var generatedAt = regexp.MustCompile(`Generated \d{4}-\d\d-\d\d \d\d:\d\d UTC`)

// TestPagesAreFresh: the committed pages are what their committed records
// and results give. A run two pages share updates one record; a page left
// unregenerated after it would show the old run's figures beside a
// record that says otherwise, and no other test reads the page against
// the record it was written from.
func TestPagesAreFresh(t *testing.T) {
	// The pages are regenerated from records of local-mode runs (some on
	// the lab's hosts or a Sentinel group, which container mode has not),
	// and no server starts (NoRun), so they are judged as there, as
	// TestPagesAreRunnable judges them: a container-mode make test would
	// otherwise find every such run not applicable and the page stale.
	t.Setenv(cluster.ServersEnv, cluster.ServersLocal)
	// The copy keeps the repository's layout, so the README's links to
	// the pages come out as they are committed.
	root := t.TempDir()
	dir := filepath.Join(root, "docs", "lessons")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join("..", "docs", "lessons")
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() {
			// Timelines and counterexamples are read, never written, by
			// a rewrite from records.
			abs, err := filepath.Abs(filepath.Join(src, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(abs, filepath.Join(dir, e.Name())); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := copyFile(filepath.Join(src, e.Name()), filepath.Join(dir, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	readme := filepath.Join(root, "README.md")
	if err := copyFile(filepath.Join("..", "README.md"), readme); err != nil {
		t.Fatal(err)
	}
	if err := Generate(context.Background(), Options{Dir: dir, Results: filepath.Join("..", "results"), Readme: readme, NoRun: true}); err != nil {
		t.Fatalf("regenerating the pages from their records: %v", err)
	}
	pairs := map[string]string{readme: filepath.Join("..", "README.md")}
	for _, e := range entries {
		if filepath.Ext(e.Name()) == ".md" {
			pairs[filepath.Join(dir, e.Name())] = filepath.Join(src, e.Name())
		}
	}
	for fresh, committed := range pairs {
		a, err := os.ReadFile(fresh)
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(committed)
		if err != nil {
			t.Fatal(err)
		}
		if generatedAt.ReplaceAllString(string(a), "") != generatedAt.ReplaceAllString(string(b), "") {
			t.Errorf("%s is not what its records give: run `go run ./cmd/bench lessons -no-run` and commit the pages", committed)
		}
	}
}
