package report

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// tree writes files (path -> content; a path ending in / is a dir) under root.
func tree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for p, content := range files {
		full := filepath.Join(root, p)
		if strings.HasSuffix(p, "/") {
			if err := os.MkdirAll(full, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// read lists every file under root (relative path -> content).
func read(t *testing.T, root string) map[string]string {
	t.Helper()
	got := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(root, p)
		got[rel] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func TestPublish(t *testing.T) {
	tests := []struct {
		name          string
		stage, before map[string]string
		owned         []string
		want          map[string]string
		published     []string
	}{
		{
			name:      "into a missing dir",
			stage:     map[string]string{"bench.md": "new", "bench.json": "new"},
			owned:     []string{"bench.md", "bench.json"},
			want:      map[string]string{"bench.md": "new", "bench.json": "new"},
			published: []string{"bench.json", "bench.md"},
		},
		{
			name:      "files and a dir replace the old ones",
			stage:     map[string]string{"correctness.md": "new", "counterexamples/a.html": "new"},
			before:    map[string]string{"correctness.md": "old", "counterexamples/a.html": "old", "counterexamples/b.html": "old"},
			owned:     []string{"correctness.md", "counterexamples"},
			want:      map[string]string{"correctness.md": "new", "counterexamples/a.html": "new"},
			published: []string{"correctness.md", "counterexamples"},
		},
		{
			name:      "an owned entry the new results lack goes",
			stage:     map[string]string{"correctness.md": "new"},
			before:    map[string]string{"correctness.md": "old", "counterexamples/a.html": "old"},
			owned:     []string{"correctness.md", "correctness.json", "counterexamples"},
			want:      map[string]string{"correctness.md": "new"},
			published: []string{"correctness.md"},
		},
		{
			name:  "patterns: stale matches go, the user's files and the stage's others stay",
			stage: map[string]string{"README.md": "new", "k-seed1.schedule.json": "new", "n-seed1.html": "new", ".locklab-owner": "1:2", "without/x.html": "scratch"},
			before: map[string]string{"README.md": "old", "o-seed1.schedule.json": "old", "o-seed1.html": "old",
				"k-seed1.schedule.json": "old", "notes.txt": "mine"},
			owned:     []string{"README.md", "explore.json", "*.schedule.json", "*.history.jsonl", "*.html"},
			want:      map[string]string{"README.md": "new", "k-seed1.schedule.json": "new", "n-seed1.html": "new", "notes.txt": "mine"},
			published: []string{"README.md", "k-seed1.schedule.json", "n-seed1.html"},
		},
		{
			name:      "a dir replaces a file of its name",
			stage:     map[string]string{"counterexamples/a.html": "new"},
			before:    map[string]string{"counterexamples": "a file"},
			owned:     []string{"counterexamples"},
			want:      map[string]string{"counterexamples/a.html": "new"},
			published: []string{"counterexamples"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			stage, dir := t.TempDir(), filepath.Join(t.TempDir(), "results")
			tree(t, stage, tc.stage)
			if tc.before != nil {
				tree(t, dir, tc.before)
			}
			got, err := Publish(stage, dir, tc.owned)
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			for _, p := range tc.published {
				want = append(want, filepath.Join(dir, p))
			}
			if !slices.Equal(got, want) {
				t.Errorf("published %v, want %v", got, want)
			}
			if files := read(t, dir); !maps.Equal(files, tc.want) {
				t.Errorf("dir holds %v, want %v", files, tc.want)
			}
		})
	}
}

// TestPublishAcrossFileSystems: a stage in a tmpfs $TMPDIR publishes into
// a dir on disk by copying.
func TestPublishAcrossFileSystems(t *testing.T) {
	var shm, tmp syscall.Stat_t
	dir := t.TempDir()
	if syscall.Stat("/dev/shm", &shm) != nil || syscall.Stat(dir, &tmp) != nil || shm.Dev == tmp.Dev {
		t.Skip("no second file system (/dev/shm) to stage in")
	}
	stage, err := os.MkdirTemp("/dev/shm", "locklab-publish-test-")
	if err != nil {
		t.Skip(err)
	}
	defer os.RemoveAll(stage)
	tree(t, stage, map[string]string{"mutants.md": "new", "counterexamples/a.html": "new"})
	tree(t, dir, map[string]string{"mutants.md": "old", "counterexamples/b.html": "old"})
	if _, err := Publish(stage, dir, []string{"mutants.md", "counterexamples"}); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"mutants.md": "new", "counterexamples/a.html": "new"}
	if files := read(t, dir); !maps.Equal(files, want) {
		t.Errorf("dir holds %v, want %v", files, want)
	}
}
