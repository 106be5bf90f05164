package lessons

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/scenarios"
)

// TestGlossary: every page links each term's first use to its entry; the
// glossary has an entry for every anchor, every figure name the runs and
// the matrix record, and every table heading the pages print.
func TestGlossary(t *testing.T) {
	dir := filepath.Join("..", "docs", "lessons")
	g, err := os.ReadFile(filepath.Join(dir, "glossary.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, term := range Glossary {
		if !strings.Contains(string(g), `<a id="`+term.Anchor+`"></a>`) {
			t.Errorf("glossary.md has no entry %q", term.Anchor)
		}
		for _, n := range term.Names {
			if !strings.Contains(string(g), n) {
				t.Errorf("glossary.md#%s does not name %q", term.Anchor, n)
			}
		}
	}
	pages, err := filepath.Glob(filepath.Join(dir, "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pages {
		if filepath.Base(p) == "glossary.md" {
			continue // the definitions themselves
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, msg := range GlossaryLinkProblems(string(b)) {
			t.Errorf("%s: %s", filepath.Base(p), msg)
		}
		for _, msg := range undefinedNames(string(b)) {
			t.Errorf("%s: %s", filepath.Base(p), msg)
		}
	}
	for _, v := range checker.Verdicts() {
		if glossaryEntry(string(v)) == "" {
			t.Errorf("the checker's verdict %q has no glossary entry (lessons.Glossary)", v)
		}
	}
	m, err := LoadMatrix(filepath.Join("..", "results"))
	if err != nil {
		t.Fatal(err)
	}
	recs, err := loadRecords(dir)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, c := range m {
		for k := range c.Figures {
			names[k] = true
		}
	}
	for _, r := range recs {
		for k := range r.Figures {
			names[k] = true
		}
	}
	for n := range names {
		if glossaryEntry(n) == "" {
			t.Errorf("figure %q is printed by the pages but glossary.md defines no such name (lessons.Glossary)", n)
		}
	}
}

// undefinedNames lists the table headings of a page's generated blocks that
// no glossary entry defines and that name no row (a scenario's column in a
// verdict table names a row's verdict, not a figure).
func undefinedNames(page string) []string {
	scs := set(scenarios.Names())
	var out []string
	for _, h := range tableHeadings(page) {
		if notFigures[h] || scs[h] || glossaryEntry(h) != "" || familyHeading(h) {
			continue
		}
		out = append(out, "table heading "+h+" is defined by no glossary entry (lessons.Glossary)")
	}
	for _, w := range tableVerdicts(page) {
		if glossaryEntry(w) == "" {
			out = append(out, "verdict "+w+" in a table is defined by no glossary entry (lessons.Glossary)")
		}
	}
	return out
}

func TestGlossaryLinkProblems(t *testing.T) {
	tests := []struct {
		name, page, want string
	}{
		{"linked first use", "[Porcupine](glossary.md#porcupine) checked it. Porcupine again.", ""},
		{"first use unlinked, a later one linked", "Porcupine checked it. [porcupine](glossary.md#porcupine).", `first use of "Porcupine"`},
		{"linked to the wrong entry", "[porcupine](glossary.md#linearizable) checked it.", "glossary.md#porcupine"},
		{"a figure name unlinked", "Figures: fault-ms 3006.", `first use of "fault-ms"`},
		{"the -1 figure unlinked", "other-read-during-fault-ms -1", `first use of "other-read-during-fault-ms"`},
		{"in a code block: no use", "```sh\nporcupine\n```", ""},
		{"recovery-ms is not recovery", "[recovery-ms](glossary.md#recovery-ms) 976", ""},
		// A coupon run's figures name held-before-fault-ms, linked to the
		// lease-left-ms entry, where a page may not have used "lease" yet.
		{"lease-left-ms is not lease", "[fault-ms](glossary.md#fault-ms) 3011, [held-before-fault-ms](glossary.md#lease-left-ms) 15, [lease-left-ms](glossary.md#lease-left-ms) 984", ""},
		{"lease after a figure", "[lease-left-ms](glossary.md#lease-left-ms) 984 of the lease.", "not a link to glossary.md#lease"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := strings.Join(GlossaryLinkProblems(tc.page), "\n")
			if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
	// A figure name no entry defines fails, as a heading and as a figure.
	page := "<!-- generated:figures -->\n| implementation | frobs per s |\n|---|---|\n| x | 1 |\n<!-- /generated -->"
	if got := undefinedNames(page); len(got) != 1 || !regexp.MustCompile(`frobs per s`).MatchString(got[0]) {
		t.Errorf("an undefined heading passed: %q", got)
	}
	verdicts := "<!-- generated:figures -->\n| implementation | fencing tokens | verdict | holder crash |\n|---|---|---|---|\n| x | yes | [unsafe](a.html) | frobbed <sub>y</sub><br>fenced: safe |\n<!-- /generated -->"
	if got := undefinedNames(verdicts); len(got) != 1 || !strings.Contains(got[0], "verdict frobbed") {
		t.Errorf("an undefined verdict word passed: %q", got)
	}
	if glossaryEntry("frob-ms") != "" {
		t.Errorf("an undefined figure name has an entry")
	}
}
