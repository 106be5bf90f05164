package lessons

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestCommittedDocClaimsAgreeWithPage holds lesson 17 to docclaims.json:
// the measurement the page's sentences describe (DocClaimsProblems), and
// the page's tables as the record renders them, so a figure on the page is
// one the file holds. It reads the committed file; TestDocClaimsSmoke runs
// the measurements themselves, smaller.
func TestCommittedDocClaimsAgreeWithPage(t *testing.T) {
	dir := filepath.Join("..", "docs", "lessons")
	rec, err := loadDocClaims(dir)
	if err != nil {
		t.Fatal(err)
	}
	if rec == nil {
		t.Fatal("docs/lessons/docclaims.json is missing: run `go run ./cmd/bench lessons -page 17-the-documents-last-claims`")
	}
	for _, msg := range DocClaimsProblems(*rec) {
		t.Error(msg)
	}
	page, err := os.ReadFile(filepath.Join(dir, DocClaimsPage))
	if err != nil {
		t.Fatal(err)
	}
	// The generator links a glossary term's first use wherever it falls,
	// inside a block too; the figures are what is compared.
	unlinked := glossaryLinkRe.ReplaceAllStringFunc(string(page), func(l string) string { return l[1:strings.Index(l, "](")] })
	for name, want := range docClaimsBlocks(rec) {
		if !strings.Contains(unlinked, "<!-- generated:"+name+" -->\n"+want) {
			t.Errorf("%s: block %s is not what docclaims.json renders: run `go run ./cmd/bench lessons -page 17-the-documents-last-claims -no-run`", DocClaimsPage, name)
		}
	}
}

// DocClaimsProblems refuses a measurement where the lock broke its rule,
// as the checker judges it (a round nobody won, a grant without a
// majority, a refusal with one, nothing granted within the budget, a way
// of dying without a trial): each edit of the committed measurement
// yields a problem naming it.
func TestDocClaimsProblemsAskTheChecker(t *testing.T) {
	tests := []struct {
		name string
		edit func(r *DocClaimsRecord)
		want string
	}{
		{"a round nobody won", func(r *DocClaimsRecord) { r.Split[0].Rounds[0].GrantMS = -1 }, "no grant within"},
		{"a grant without a majority", func(r *DocClaimsRecord) {
			last := &r.Down.Rows[len(r.Down.Rows)-1]
			last.Acquire.N, last.Refused = 1, last.Refused-1
		}, "(unsafe)"},
		{"a refusal with a majority", func(r *DocClaimsRecord) { r.Down.Rows[1].Refused = 1 }, "1 of 5 stalled"},
		{"nothing granted within the budget", func(r *DocClaimsRecord) { r.Budget[0].Granted = 0 }, "nothing granted"},
		{"a way of dying without a trial", func(r *DocClaimsRecord) { r.Ephemeral[1].DeletedMS = nil }, "no trial"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Each case edits a fresh copy of the committed measurement.
			rec, err := loadDocClaims(filepath.Join("..", "docs", "lessons"))
			if err != nil || rec == nil {
				t.Fatalf("docs/lessons/docclaims.json: %v", err)
			}
			tt.edit(rec)
			msgs := DocClaimsProblems(*rec)
			if !slices.ContainsFunc(msgs, func(m string) bool { return strings.Contains(m, tt.want) }) {
				t.Errorf("problems %q, want one saying %q", msgs, tt.want)
			}
		})
	}
}
