package site_test

import (
	"bytes"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// TestSiteLinks follows every link of every page of the site from its
// front page, as a reader would, without a browser: each must reach a
// file that is there, none may leave the machine, and every page written
// must be reached. The pages are static HTML (no script writes a link),
// so reading the markup finds what a browser would; the browser test
// then renders a sample of the pages, which is the part that needs one.
func TestSiteLinks(t *testing.T) {
	out, _, pages := renderCommitted(t)
	seen, links, errs := crawl(out)
	for _, e := range errs {
		t.Error(e)
	}
	for _, pg := range pages {
		if !seen[filepath.Join(out, filepath.FromSlash(pg))] {
			t.Errorf("%s is written but no link reaches it", pg)
		}
	}
	if len(seen) < len(pages) || links == 0 {
		t.Fatalf("%d pages reached and %d links followed of a site of %d pages", len(seen), links, len(pages))
	}
	t.Logf("%d pages reached, %d links followed", len(seen), links)
}

// crawl walks the site under out from index.html, breadth first, and
// returns the pages reached, the links followed and what was wrong.
func crawl(out string) (seen map[string]bool, links int, errs []string) {
	seen = map[string]bool{}
	queue := []string{filepath.Join(out, "index.html")}
	seen[queue[0]] = true
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		refs, err := pageLinks(p)
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		rel, _ := filepath.Rel(out, p)
		for _, ref := range refs {
			links++
			target, err := resolve(p, ref)
			if err != nil {
				errs = append(errs, fmt.Sprintf("%s links %q: %v", rel, ref, err))
				continue
			}
			if target == "" {
				continue // a place on the same page
			}
			if _, err := os.Stat(target); err != nil {
				errs = append(errs, fmt.Sprintf("%s: broken link %s", rel, ref))
				continue
			}
			if strings.HasPrefix(target, out+string(filepath.Separator)) && strings.HasSuffix(target, ".html") && !seen[target] {
				seen[target] = true
				queue = append(queue, target)
			}
		}
	}
	return seen, links, errs
}

// pageLinks returns what a page links or loads: a[href], img[src] and
// iframe[src], as the browser test's inspection reads them.
func pageLinks(page string) ([]string, error) {
	b, err := os.ReadFile(page)
	if err != nil {
		return nil, err
	}
	var refs []string
	z := html.NewTokenizer(bytes.NewReader(b))
	for {
		switch z.Next() {
		case html.ErrorToken:
			if z.Err().Error() == "EOF" {
				return refs, nil
			}
			return nil, fmt.Errorf("%s: %w", page, z.Err())
		case html.StartTagToken, html.SelfClosingTagToken:
			tok := z.Token()
			want := map[string]string{"a": "href", "img": "src", "iframe": "src"}[tok.Data]
			for _, a := range tok.Attr {
				if want != "" && a.Key == want {
					refs = append(refs, a.Val)
				}
			}
		}
	}
}

// resolve turns a link on page into the file it names, or "" for a
// fragment of the page itself; a link with a scheme leaves the site.
func resolve(page, ref string) (string, error) {
	u, err := url.Parse(ref)
	if err != nil {
		return "", err
	}
	if u.Scheme != "" || u.Host != "" {
		return "", fmt.Errorf("the site must link only its own and the results' files")
	}
	if u.Path == "" {
		return "", nil
	}
	return filepath.Join(filepath.Dir(page), filepath.FromSlash(u.Path)), nil
}

// The crawl's reading of a link: a fragment stays on the page, a relative
// path is a file beside it, and anything with a scheme or a host leaves
// the site.
func TestResolve(t *testing.T) {
	page := filepath.FromSlash("/site/locks/a.html")
	tests := []struct {
		ref, want string
		leaves    bool
	}{
		{"#runs", "", false},
		{"../cells/a--contention.html#timeline", filepath.FromSlash("/site/cells/a--contention.html"), false},
		{"guest%3Aredis-py.html", filepath.FromSlash("/site/locks/guest:redis-py.html"), false},
		{"https://example.org/", "", true},
		{"//example.org/x.html", "", true},
	}
	for _, tt := range tests {
		got, err := resolve(page, tt.ref)
		if (err != nil) != tt.leaves || got != tt.want {
			t.Errorf("resolve(%q) = %q, %v; want %q, leaves the site: %v", tt.ref, got, err, tt.want, tt.leaves)
		}
	}
}
