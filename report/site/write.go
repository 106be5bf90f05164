package site

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"os"
	"path"
	"path/filepath"
	"slices"
	"time"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/record"
)

//go:embed templates/*.html templates/style.css
var templates embed.FS

// Options say where the site will be read from and what produced it.
type Options struct {
	// Out is the dir the site is read from (not a staging dir it is
	// written into first): every link is relative to it.
	Out string
	// Repo is the repository root, where the lessons and the locks'
	// sources are linked.
	Repo string
	// Commit names what the results were generated at, for the footer.
	Commit string
	// MatrixTTL is the TTL the matrix ran its cells with: the reproduce
	// commands and the declared schedules use it.
	MatrixTTL time.Duration
	// Locks describe the locks the results name (impls.All()); a lock
	// missing here gets a page of its cells alone.
	Locks []impls.Spec
	// The rest say what only the packages that run cells know; the
	// command that writes the site gives them, so that the site, which
	// renders JSON, links none of the servers' clients those packages do.
	//
	// KeyScenarios are the grid's first columns, in order (the lessons'
	// summary tables' columns); the others follow in the matrix's order.
	KeyScenarios []string
	// LessonFor names the lesson page (under docs/lessons) that explains
	// a lock, or "" when none does.
	LessonFor func(impl string) string
	// Describe says what a cell's scenario does, its fixed schedule's
	// steps at the matrix's TTL among it; ok is false for a scenario the
	// registry does not know.
	Describe func(c record.Cell, ttl time.Duration) (d Scenario, ok bool)
}

// Scenario is what a cell's page says its scenario does.
type Scenario struct {
	Summary string
	// Steps are the fixed schedule the scenario runs; none for a
	// scripted one (Scripted).
	Steps    []Step
	Scripted bool
	// Risk is the scenario's rule for when its fault puts the lock at
	// risk (scenarios.Scenario.Risk): the front page groups its columns
	// into fault families by it.
	Risk checker.Risk
}

// Step is one declared step of a fixed schedule, as its page prints it.
type Step struct{ At, Kind, Target, Duration, After, Holder string }

// Command is the command that writes the site, as its footer says.
const Command = "go run ./cmd/bench report"

// Write renders the site for r into dir: index.html, locks/*.html and
// cells/*.html. It returns the pages written, as slash paths relative to
// dir. Nothing is written until every page has rendered.
func Write(dir string, r *Results, o Options) ([]string, error) {
	if o.MatrixTTL <= 0 {
		return nil, fmt.Errorf("site: MatrixTTL must be positive")
	}
	l, err := newLinks(o.Out, r.Dir, o.Repo)
	if err != nil {
		return nil, err
	}
	specs := map[string]impls.Spec{}
	for _, s := range o.Locks {
		specs[s.Name] = s
	}
	base, err := template.New("").ParseFS(templates, "templates/layout.html")
	if err != nil {
		return nil, fmt.Errorf("site: %w", err)
	}
	css, err := templates.ReadFile("templates/style.css")
	if err != nil {
		return nil, fmt.Errorf("site: %w", err)
	}
	pages := map[string][]byte{}
	render := func(tmpl, at string, data any) error {
		t, err := template.Must(base.Clone()).ParseFS(templates, "templates/"+tmpl)
		if err != nil {
			return fmt.Errorf("site: %w", err)
		}
		var b bytes.Buffer
		if err := t.ExecuteTemplate(&b, "layout", struct {
			CSS  template.CSS
			Page any
		}{template.CSS(css), data}); err != nil {
			return fmt.Errorf("site: render %s: %w", at, err)
		}
		pages[at] = b.Bytes()
		return nil
	}
	newPage := func(at, title string) page {
		return page{Path: at, Title: title, Home: l.page(at, indexPage), Footer: footer{Commit: o.Commit, Command: Command}}
	}
	if err := render("index.html", indexPage, buildFront(r, l, newPage(indexPage, "locklab: which lock survives what"), o)); err != nil {
		return nil, err
	}
	for _, impl := range pagedLocks(r) {
		at := lockPage(impl)
		if err := render("lock.html", at, buildLock(r, l, newPage(at, impl), impl, specs, o)); err != nil {
			return nil, err
		}
	}
	for _, c := range r.Matrix {
		at := cellPage(c)
		d, err := buildCell(r, l, newPage(at, cellName(c)), c, o)
		if err != nil {
			return nil, err
		}
		if err := render("cell.html", at, d); err != nil {
			return nil, err
		}
	}
	var written []string
	for at := range pages {
		written = append(written, at)
	}
	slices.Sort(written)
	for _, at := range written {
		p := filepath.Join(dir, filepath.FromSlash(at))
		if err := os.MkdirAll(filepath.Join(dir, filepath.FromSlash(path.Dir(at))), 0o755); err != nil {
			return nil, fmt.Errorf("site: %w", err)
		}
		if err := os.WriteFile(p, pages[at], 0o644); err != nil {
			return nil, fmt.Errorf("site: %w", err)
		}
	}
	return written, nil
}
