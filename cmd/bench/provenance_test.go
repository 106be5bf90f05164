package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestProvenance: the footer names the last commit that changed the
// results, not HEAD, and says the results are not committed only while
// they differ from it; the site's own pages never count as results.
func TestProvenance(t *testing.T) {
	repo := t.TempDir()
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", repo, "-c", "user.name=lab", "-c", "user.email=lab@example.org",
			"-c", "commit.gpgsign=false"}, args...)...)
		b, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v: %s", args, err, b)
		}
		return strings.TrimSpace(string(b))
	}
	write := func(name, text string) {
		t.Helper()
		p := filepath.Join(repo, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	commit := func(msg string) string {
		git("add", "-A")
		git("commit", "-q", "-m", msg)
		return git("rev-parse", "--short=12", "HEAD")
	}
	git("init", "-q")
	write("main.go", "package main")
	code := commit("code")
	results := filepath.Join(repo, "results")

	steps := []struct {
		name   string
		change func() (want string)
	}{
		{"results not committed yet", func() string {
			write("results/correctness.json", "[1]")
			return code + notCommitted
		}},
		{"results committed", func() string { return commit("results") }},
		{"a later commit of code alone", func() string {
			at := git("rev-parse", "--short=12", "HEAD")
			write("main.go", "package main // changed")
			commit("more code")
			return at
		}},
		{"the site rendered and committed", func() string {
			at := git("log", "-1", "--format=%h", "--abbrev=12", "--", "results")
			write("results/site/index.html", "<html>")
			commit("site")
			write("results/site/index.html", "<html>again")
			return at
		}},
		{"results changed again", func() string {
			at := git("log", "-1", "--format=%h", "--abbrev=12", "--", "results", ":(exclude)results/site")
			write("results/correctness.json", "[2]")
			return at + notCommitted
		}},
		{"and committed", func() string { return commit("results again") }},
	}
	for _, st := range steps {
		want := st.change()
		top, got := provenance(results)
		if got != want {
			t.Errorf("%s: the footer names %q, want %q", st.name, got, want)
		}
		if real, _ := filepath.EvalSymlinks(repo); top != real && top != repo {
			t.Errorf("%s: repository %q, want %q", st.name, top, repo)
		}
	}
}

// TestCommittedSiteNamesItsResults: the committed site's footer names the
// commit its results were last changed in, and never says they are not
// committed once they are: a site rendered before its results were
// committed is rendered again from the committed results.
func TestCommittedSiteNamesItsResults(t *testing.T) {
	results := filepath.Join("..", "..", "results")
	b, err := os.ReadFile(filepath.Join(results, "site", "index.html"))
	if err != nil {
		t.Skipf("no committed site: %v", err)
	}
	_, commit := provenance(results)
	switch {
	case commit == "":
		t.Skip("not a git checkout: the results' commit cannot be told")
	case strings.HasSuffix(commit, notCommitted):
		t.Skipf("the results in this checkout differ from their last commit (%s): the test judges committed ones", commit)
	}
	if want := "at commit <code>" + commit + "</code>"; !strings.Contains(string(b), want) {
		t.Errorf("results/site/index.html's footer does not say %q: the results were last committed at %s; "+
			"run `go run ./cmd/bench report` and commit results/site", want, commit)
	}
}
