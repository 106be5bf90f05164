package lessons

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPagesCiteSourcesRight: every lesson page cites the source documents
// by file name, for what the reviewed table says each says.
func TestPagesCiteSourcesRight(t *testing.T) {
	dir := filepath.Join("..", "docs", "lessons")
	pages, err := filepath.Glob(filepath.Join(dir, "*.md"))
	if err != nil || len(pages) == 0 {
		t.Fatalf("no pages in %s (%v)", dir, err)
	}
	for _, p := range pages {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, msg := range SourceProblems(string(b)) {
			t.Errorf("%s: %s", filepath.Base(p), msg)
		}
	}
}

// TestSourceProblems plants each kind of misreport: the three the pages
// once made, a citation with no file name, a claim the table lacks, a file
// that is no source; and the corrected sentences pass.
func TestSourceProblems(t *testing.T) {
	const s000, s003, s004 = "`000_4c93f78eaeec54ee.txt`", "`003_a6064ed1f179a5a2.txt`", "`004_84007c392b46b35c.txt`"
	tests := []struct {
		name, page string
		want       string // a substring of the one problem expected; "" for none
	}{
		{"lesson 4's old GET-then-DEL", s000 + " gives GET then DEL, presented as the careful version.", "misreads 000 (get-then-del)"},
		{"lesson 4 put right", s000 + " gives `GET` then `DEL` as its second wrong release.", ""},
		{"lesson 7's old fail-over", s004 + " mentions the fail-over risk in passing.", "misreads 004 (failover)"},
		{"lesson 7 put right", s004 + " gives the fail-over a section of its own, with a diagram.", ""},
		{"lesson 10's old three ways", s003 + " lists three ways to lock in a database.", "misreads 003 (database-two)"},
		{"the advisory lock is the lab's", s003 + " lists the advisory lock among its database locks.", "misreads 003 (database-two)"},
		{"lesson 10 put right", s003 + " lists two database locks: a lock table and a version number.", ""},
		{"no file named", "The source documents say so.", "without naming one by its file name"},
		{"a claim the table lacks", s003 + " recommends etcd leases.", "attributes to 003 what the table"},
		{"a claim of another document", s000 + " tells a coupon story.", "attributes to 000 what the table"},
		{"not a source", "`002_0123456789abcdef.txt` says so.", "not a source document"},
		{"in a generated block: not the prose's", "<!-- generated:locks -->\nthe source documents' lock table\n<!-- /generated -->", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := SourceProblems(tc.page)
			switch {
			case tc.want == "" && len(got) > 0:
				t.Errorf("found %q", got)
			case tc.want != "" && (len(got) != 1 || !strings.Contains(got[0], tc.want)):
				t.Errorf("got %q, want one problem containing %q", got, tc.want)
			}
		})
	}
}

// TestSourcesTableIsWhole: every claim has an id, a reviewed statement and
// a pattern; a misreading says why; the file names are the citation form.
func TestSourcesTableIsWhole(t *testing.T) {
	for _, s := range Sources {
		if !sourceFileRe.MatchString(s.File) || !strings.HasPrefix(s.File, s.Short+"_") {
			t.Errorf("%s: not a citable file name (or its short form %s is not its number)", s.File, s.Short)
		}
		ids := map[string]bool{}
		for _, c := range s.Claims {
			if c.ID == "" || c.Says == "" || c.About == nil || ids[c.ID] {
				t.Errorf("%s: claim %q lacks an id, a statement or a pattern, or repeats an id", s.Short, c.ID)
			}
			ids[c.ID] = true
			if (c.Misread == nil) != (c.Why == "") {
				t.Errorf("%s/%s: a misreading and its reason go together", s.Short, c.ID)
			}
		}
	}
}
