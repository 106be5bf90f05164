package docs

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestLinks(t *testing.T) {
	tests := []struct {
		name string
		page string
		want []string
	}{
		{"a link and an image", "See [the matrix](matrix.md) and ![chart](../results/pairs.svg).", []string{"matrix.md", "../results/pairs.svg"}},
		{"code in the link text keeps the link", "[`etcd-lock`](lessons/14-quorums.md)", []string{"lessons/14-quorums.md"}},
		{"a link inside a code span is none", "run `[x](nowhere.md)` as is", nil},
		{"a link inside a fenced block is none", "```sh\necho [x](nowhere.md)\n```\n", nil},
		{"a scheme is no file", "[porcupine](https://github.com/anishathalye/porcupine) [m](mailto:a@b)", nil},
		{"an anchor in the page", "[up](#setup)", []string{"#setup"}},
		{"embedded html", `<img src="img/a.svg"> <a href="runs/x.html">x</a>`, []string{"img/a.svg", "runs/x.html"}},
		{"a title after the target", `[x](a.md "the title")`, []string{"a.md"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := links(tt.page)
			slices.Sort(got)
			want := slices.Clone(tt.want)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("links = %q, want %q", got, want)
			}
		})
	}
}

func TestSlug(t *testing.T) {
	tests := []struct{ heading, want string }{
		{"Where a cell's time goes", "where-a-cells-time-goes"},
		{"Redis Sentinel: its own fail-over, and what the mitigations buy", "redis-sentinel-its-own-fail-over-and-what-the-mitigations-buy"},
		{"Results: what `results/` holds", "results-what-results-holds"},
		{"The benchmark: `make bench`", "the-benchmark-make-bench"},
	}
	for _, tt := range tests {
		if got := slug(tt.heading); got != tt.want {
			t.Errorf("slug(%q) = %q, want %q", tt.heading, got, tt.want)
		}
	}
}

// TestProblem plants each kind of link in a page of a scratch directory.
func TestProblem(t *testing.T) {
	dir := t.TempDir()
	page := filepath.Join(dir, "page.md")
	files := map[string]string{
		"page.md":  "# Page\n\n## Setup\n\n## Setup\n\n<a id=\"custom\"></a>\n",
		"other.md": "# Other\n\n## Where a cell's time goes\n",
		"run.html": "<html></html>",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		target string
		want   string // a part of the problem; "" for none
	}{
		{"other.md", ""},
		{"other.md#where-a-cells-time-goes", ""},
		{"other.md#nowhere", "has no heading or anchor #nowhere"},
		{"#setup", ""},
		{"#setup-1", ""},
		{"#setup-2", "has no heading or anchor"},
		{"#custom", ""},
		{"run.html#anything", ""},
		{"missing.md", "does not exist"},
		{"sub/missing.svg", "does not exist"},
		{"other%2Emd", ""},
	}
	for _, tt := range tests {
		got := problem(page, tt.target, os.ReadFile)
		if tt.want == "" && got != "" || tt.want != "" && !strings.Contains(got, tt.want) {
			t.Errorf("problem(%q) = %q, want %q", tt.target, got, tt.want)
		}
	}
}
