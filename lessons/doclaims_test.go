package lessons

import (
	"os"
	"path/filepath"
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
