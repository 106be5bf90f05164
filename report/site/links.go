package site

import (
	"fmt"
	"path"
	"path/filepath"
	"strings"
)

// links turns a file into an href relative to the page that links it, so
// the site works from file:// and from any server rooted above it, and
// links the results' own files where they are instead of copying them.
type links struct {
	out, results, repo string // absolute
}

func newLinks(out, results, repo string) (links, error) {
	var l links
	for _, p := range []struct {
		dst *string
		dir string
	}{{&l.out, out}, {&l.results, results}, {&l.repo, repo}} {
		abs, err := filepath.Abs(p.dir)
		if err != nil {
			return links{}, fmt.Errorf("site: %w", err)
		}
		*p.dst = abs
	}
	return l, nil
}

// from is the href from a page (a slash path in the site: "index.html",
// "cells/x.html") to the absolute file target.
func (l links) from(page, target string) string {
	dir := filepath.Join(l.out, filepath.FromSlash(path.Dir(page)))
	rel, err := filepath.Rel(dir, target)
	if err != nil {
		return target // another volume: an absolute path still opens
	}
	return escapePath(filepath.ToSlash(rel))
}

// result links a file the results name (relative to the results dir).
func (l links) result(page, name string) string {
	return l.from(page, filepath.Join(l.results, filepath.FromSlash(name)))
}

// repoFile links a file of the repository (docs/lessons/x.md, a lock's source).
func (l links) repoFile(page, name string) string {
	return l.from(page, filepath.Join(l.repo, filepath.FromSlash(name)))
}

// page links another page of the site.
func (l links) page(from, to string) string {
	return l.from(from, filepath.Join(l.out, filepath.FromSlash(to)))
}

// escapePath escapes each segment, so a name with '#' or '?' stays a path,
// and one with ':' (a guest's lock, "guest:redis-py") is not read as a URL
// scheme when it is the first segment of a link to the same folder.
func escapePath(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = strings.NewReplacer("%", "%25", "#", "%23", "?", "%3F", " ", "%20", ":", "%3A").Replace(s)
	}
	return strings.Join(segs, "/")
}
