package site

import (
	"fmt"

	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/record"
)

// lockPageData is a lock's page: what it is, the capabilities it declares
// (each proven by the conformance suite), every cell of it, its speed
// beside the locks on the same backend, and its lesson.
type lockPageData struct {
	page
	Impl       string
	Known      bool // registered in this build (impls); false: the results name a lock the code no longer has
	Summary    string
	Broken     string
	Peer       bool
	Backend    string
	Source     string
	SourceHref string
	Caps       []capability
	Lesson     string
	LessonHref string
	Cells      []gridEntry
	Bench      bool // bench.json was there
	Speed      []speedRow
	Overhead   []overheadRow // the guest protocol's cost, for a guest that wraps a lock of ours and that lock
	Explore    *exploreView
	Mutants    []mutantRow
}

type capability struct {
	Name string
	Has  bool
	What string
}

type speedRow struct {
	Name, Href, Uncontended, Contended, HandoffP50, Independent, Peer string
	// CPU per contended pair, µs: the clients' and the lock servers' ("–"
	// where not measured).
	ClientCPU, ServerCPU string
	Self                 bool
}

func capabilities(c impls.Capabilities) []capability {
	return []capability{
		{"fencing", c.Fencing, "issues fencing tokens"},
		{"reentrant", c.Reentrant, "the holder may acquire again without blocking"},
		{"renewal", c.Renewal, "renews its lease by itself while the holder lives"},
		{"lost-notify", c.LostNotify, "tells the holder when the lock is lost"},
		{"no-polling", c.NoPolling, "waiters are woken by a notification, not by polling"},
		{"expiry", c.Expiry, "a crashed holder's lock frees itself after a time"},
		{"validity", c.Validity, "a lease knows until when it is valid"},
		{"queued", c.Queued, "waiters are served in turn on the server, so one dead in line can hold up the rest"},
	}
}

func backendName(b impls.Backend) string {
	switch {
	case b.InProcess || b.Kind == "":
		return "in-process (no server)"
	case b.Nodes > 1:
		return fmt.Sprintf("%d independent %s nodes", b.Nodes, b.Kind.Title())
	}
	return b.Kind.Title()
}

func buildLock(r *Results, l links, p page, impl string, specs map[string]impls.Spec, o Options) lockPageData {
	d := lockPageData{page: p, Impl: impl}
	if s, ok := specs[impl]; ok {
		d.Known, d.Summary, d.Broken, d.Peer = true, s.Summary, s.Broken, s.Peer
		d.Backend, d.Caps = backendName(s.Backend), capabilities(s.Caps)
		if s.Source != "" {
			d.Source, d.SourceHref = s.Source, l.repoFile(p.Path, s.Source)
		}
	}
	if f := lessonFor(o, impl); f != "" {
		d.Lesson, d.LessonHref = f, l.repoFile(p.Path, "docs/lessons/"+f)
	}
	for _, c := range r.Matrix {
		if c.Impl == impl {
			d.Cells = append(d.Cells, newGridEntry(r, l, p.Path, c))
		}
	}
	if r.Bench != nil {
		d.Bench = true
		d.Speed = speed(r.Bench, l, p.Path, impl)
		d.Overhead = overheadRows(r.Bench, l, p.Path, impl)
	}
	if r.Explore != nil {
		x := buildExplore(r.Explore, l, p.Path, impl)
		if len(x.Rows) > 0 {
			d.Explore = &x
		}
	}
	d.Mutants = buildMutants(r.Mutants, l, p.Path, impl)
	return d
}

// speed is the lock's figures beside every lock measured on the same
// backend, this one first.
func speed(b *record.Bench, l links, from, impl string) []speedRow {
	var self *record.BenchResult
	for i := range b.Impls {
		if b.Impls[i].Name == impl {
			self = &b.Impls[i]
		}
	}
	if self == nil {
		return nil
	}
	var out []speedRow
	for _, r := range b.Impls {
		if r.Backend != self.Backend {
			continue
		}
		row := speedRow{Name: r.Name, Href: l.page(from, lockPage(r.Name)), Self: r.Name == impl, Peer: r.ClosestPeer,
			ClientCPU: "–", ServerCPU: "–"}
		if r.Uncontended != nil {
			row.Uncontended = stat(r.Uncontended.PairsPerSec)
		}
		if r.Contended != nil {
			row.Contended = stat(r.Contended.PairsPerSec)
			row.HandoffP50 = stat(r.Contended.HandoffP50)
			if c := r.Contended.CPU; c != nil {
				row.ClientCPU = stat(c.Clients)
				if c.Servers != nil {
					row.ServerCPU = stat(*c.Servers)
				}
			}
		}
		if r.Independent != nil {
			row.Independent = stat(r.Independent.PairsPerSec)
		}
		if row.Self {
			out = append([]speedRow{row}, out...)
		} else {
			out = append(out, row)
		}
	}
	return out
}

// lessonFor is o.LessonFor's page for impl, or "" when the site was given
// no lessons.
func lessonFor(o Options, impl string) string {
	if o.LessonFor == nil {
		return ""
	}
	return o.LessonFor(impl)
}
