package site

import (
	"net/url"
	"testing"
)

// A link stays a relative path whatever the lock's name: '#', '?', ' ' and
// a guest's ':' ("guest:redis-py", which a browser would read as a URL
// scheme when it leads the link) are escaped.
func TestEscapePath(t *testing.T) {
	for _, name := range []string{"guest:redis-py.html", "a#b?.html", "with space.html", "locks/guest:x.html"} {
		href := escapePath(name)
		u, err := url.Parse(href)
		if err != nil {
			t.Fatalf("%q: %v", href, err)
		}
		if u.Scheme != "" || u.Fragment != "" || u.RawQuery != "" {
			t.Errorf("%q escaped as %q reads as scheme %q, fragment %q, query %q", name, href, u.Scheme, u.Fragment, u.RawQuery)
		}
		if back, _ := url.PathUnescape(href); back != name {
			t.Errorf("%q escaped as %q comes back as %q", name, href, back)
		}
	}
}
