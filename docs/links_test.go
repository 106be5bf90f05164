package docs

import (
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

var (
	// mdLinkRe finds a markdown link or image target: [text](target) or
	// ![alt](target), the target without spaces (an optional "title"
	// after it is not part of it).
	mdLinkRe = regexp.MustCompile(`\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	// htmlLinkRe finds the targets of the HTML the pages embed (<a href>,
	// <img src>).
	htmlLinkRe = regexp.MustCompile(`(?:href|src)="([^"]+)"`)
	fenceRe    = regexp.MustCompile("(?ms)^ *```.*?^ *```[^\n]*$")
	codeSpanRe = regexp.MustCompile("`[^`\n]*`")
	headingRe  = regexp.MustCompile(`(?m)^#{1,6} +(.+?) *#*$`)
	anchorRe   = regexp.MustCompile(`<a (?:id|name)="([^"]+)"`)
	schemeRe   = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)
)

// links returns the relative link targets of a markdown page, leaving out
// those inside code (a command's output or an example is not a link) and
// those with a scheme (https:, mailto:), which no file answers.
func links(page string) []string {
	text := fenceRe.ReplaceAllString(page, "")
	// A code span inside a link's text ([`etcd-lock`](…)) must keep the
	// link, so a span becomes a placeholder rather than nothing.
	text = codeSpanRe.ReplaceAllString(text, "code")
	var out []string
	for _, re := range []*regexp.Regexp{mdLinkRe, htmlLinkRe} {
		for _, m := range re.FindAllStringSubmatch(text, -1) {
			if schemeRe.MatchString(m[1]) {
				continue
			}
			out = append(out, m[1])
		}
	}
	return out
}

// slug is the anchor GitHub gives a heading: lower case, punctuation
// dropped but for hyphens and underscores, spaces as hyphens.
func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r > 127:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// anchors returns every fragment a page answers: its headings' slugs (a
// repeated heading's gets -1, -2…, as GitHub numbers them) and its explicit
// <a id> anchors.
func anchors(page string) map[string]bool {
	out := map[string]bool{}
	text := fenceRe.ReplaceAllString(page, "")
	for _, m := range headingRe.FindAllStringSubmatch(text, -1) {
		s := slug(m[1])
		for n, try := 1, s; ; n++ {
			if !out[try] {
				out[try] = true
				break
			}
			try = s + "-" + strconv.Itoa(n)
		}
	}
	for _, m := range anchorRe.FindAllStringSubmatch(page, -1) {
		out[m[1]] = true
	}
	return out
}

// problem says what is wrong with one link of the page at path, or ""
// when it reaches an existing file (and, into a markdown page, an
// existing heading or anchor).
func problem(path, target string, read func(string) ([]byte, error)) string {
	ref, frag, _ := strings.Cut(target, "#")
	ref, _, _ = strings.Cut(ref, "?")
	file := path
	if ref != "" {
		p, err := url.PathUnescape(ref)
		if err != nil {
			return "unreadable link " + target
		}
		file = filepath.Join(filepath.Dir(path), filepath.FromSlash(p))
		if _, err := os.Stat(file); err != nil {
			return "links " + target + ", which does not exist"
		}
	}
	if frag == "" || !strings.HasSuffix(file, ".md") {
		return ""
	}
	b, err := read(file)
	if err != nil {
		return "links " + target + ": " + err.Error()
	}
	if !anchors(string(b))[frag] {
		return "links " + target + ", but " + filepath.Base(file) + " has no heading or anchor #" + frag
	}
	return ""
}

// TestLinksResolve: every relative link of README.md and of every page
// under docs/ reaches a file that exists, and a link to a heading reaches
// one. The reference moved out of README.md into docs/ in one go; a page
// renamed or a heading reworded later would otherwise leave dead links
// that nothing reports.
func TestLinksResolve(t *testing.T) {
	pages := []string{filepath.Join("..", "README.md")}
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".md") {
			pages = append(pages, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, p := range pages {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range links(string(b)) {
			checked++
			if msg := problem(p, l, os.ReadFile); msg != "" {
				t.Errorf("%s %s", p, msg)
			}
		}
	}
	// A reader that found no links would pass every page.
	if checked < len(pages) {
		t.Fatalf("found %d links in %d pages: the link reader is broken", checked, len(pages))
	}
	t.Logf("%d links in %d pages", checked, len(pages))
}

// TestReadmeLinksEveryPage: each reference page in docs/ is reached from
// README.md, the one page a newcomer starts from; a page no one links is
// lost reference.
func TestReadmeLinksEveryPage(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	linked := map[string]bool{}
	for _, l := range links(string(b)) {
		ref, _, _ := strings.Cut(l, "#")
		linked[path.Clean(ref)] = true
	}
	pages, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	if len(pages) == 0 {
		t.Fatal("no reference pages in docs/")
	}
	for _, p := range pages {
		if !linked["docs/"+p] {
			t.Errorf("README.md does not link docs/%s", p)
		}
	}
}
