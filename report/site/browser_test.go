package site_test

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/impls"
	_ "github.com/locklab/locklab/impls/all"
	"github.com/locklab/locklab/record"
	"github.com/locklab/locklab/report/site"
)

// chromiumPackage is Debian's package of the browser the test drives
// (scripts/setup.sh installs it).
const chromiumPackage = "chromium"

// renderCommitted renders the site from the committed results into a
// temp dir, as `bench report` would: the test judges this code on the
// results a reader has, and does not depend on results/site having been
// regenerated since the last change to the renderer.
func renderCommitted(t *testing.T) (out string, r *site.Results, pages []string) {
	t.Helper()
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	r, err = site.Load(filepath.Join(repo, "results"))
	if err != nil {
		t.Fatal(err)
	}
	out = filepath.Join(t.TempDir(), "site")
	pages, err = site.Write(out, r, site.Options{Out: out, Repo: repo, Commit: "test", MatrixTTL: time.Second, Locks: impls.All()})
	if err != nil {
		t.Fatal(err)
	}
	return out, r, pages
}

// pageInfo is what the browser reports of a loaded page.
type pageInfo struct {
	Title  string   `json:"title"`
	H1     string   `json:"h1"`
	Text   int      `json:"text"`
	Links  []string `json:"links"`  // a[href], img[src], iframe[src], resolved
	Broken []string `json:"broken"` // images that did not load
	// Timeline: inside the iframe#timeline, porcupine's drawing (an svg in
	// #canvas) and whether it has the faults row.
	Timeline struct {
		Frame  bool `json:"frame"`
		Drawn  bool `json:"drawn"`
		Faults bool `json:"faults"`
	} `json:"timeline"`
}

const inspect = `(() => {
  const q = s => Array.from(document.querySelectorAll(s));
  const info = {
    title: document.title,
    h1: (document.querySelector('h1') || {}).textContent || '',
    text: (document.body ? document.body.innerText.trim().length : 0),
    links: q('a[href]').map(a => a.href).concat(q('img[src], iframe[src]').map(e => e.src)),
    broken: q('img').filter(i => !i.complete || i.naturalWidth === 0).map(i => i.src),
    timeline: {frame: false, drawn: false, faults: false},
  };
  const f = document.getElementById('timeline');
  if (f) {
    info.timeline.frame = true;
    const d = f.contentDocument;
    const svg = d && d.querySelector('#canvas svg');
    info.timeline.drawn = !!svg && svg.querySelectorAll('rect').length > 0;
    info.timeline.faults = !!svg && Array.from(svg.querySelectorAll('text')).some(t => t.textContent.trim() === 'faults');
  }
  return info;
})()`

// TestSiteInBrowser opens the site in headless Chromium, visits every page
// of it but the cell pages and a sample of those (the first each other
// page links), checks the links it meets (each must reach a file that is
// there; none may leave the machine), fails on a blank page or a script error, checks
// that an unsafe cell's page shows porcupine's timeline with the faults
// row, and keeps screenshots of the front page and that cell's page.
//
// chromedp drives the browser: it speaks the DevTools protocol from Go with
// no Node or driver binary, runs the system's Chromium, and kills it (and
// its child processes) when the test ends, even on a panic or a killed
// test (Pdeathsig).
func TestSiteInBrowser(t *testing.T) {
	bin, err := exec.LookPath(chromiumPackage)
	if err != nil {
		t.Fatalf("no headless Chromium to open the site in: install Debian's %q package (apt-get install %s; scripts/setup.sh does): %v",
			chromiumPackage, chromiumPackage, err)
	}
	start := time.Now()
	out, r, pages := renderCommitted(t)

	// A deadline on the allocator bounds the whole browser's life.
	allocCtx, cancelAlloc := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancelAlloc()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(bin), chromedp.WindowSize(1400, 1000),
		// The browser runs as root in CI, where its sandbox cannot start.
		chromedp.NoSandbox,
		// Lets the test read porcupine's drawing inside the cell page's
		// iframe: file:// pages are otherwise each an origin of their own.
		chromedp.Flag("allow-file-access-from-files", true))
	allocCtx, cancelExec := chromedp.NewExecAllocator(allocCtx, opts...)
	defer cancelExec()
	ctx, cancel := chromedp.NewContext(allocCtx)
	defer cancel()

	var mu sync.Mutex
	var consoleErrors []string
	if err := chromedp.Listen(ctx, func(ev any) {
		var msg string
		switch e := ev.(type) {
		case *runtime.EventExceptionThrown:
			msg = "exception: " + e.ExceptionDetails.Text
			if e.ExceptionDetails.Exception != nil {
				msg += " " + e.ExceptionDetails.Exception.Description
			}
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.ConsoleAPICalledTypeError {
				msg = "console.error"
			}
		case *log.EventEntryAdded:
			if e.Entry.Level == log.EntryLevelError {
				msg = "log: " + e.Entry.Text + " " + e.Entry.URL
			}
		}
		if msg != "" {
			mu.Lock()
			consoleErrors = append(consoleErrors, msg)
			mu.Unlock()
		}
	}); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	// The first run starts the browser; it must not carry a per-page timeout.
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("start chromium: %v", err)
	}

	fileURL := func(p string) string { return (&url.URL{Scheme: "file", Path: filepath.ToSlash(p)}).String() }
	visit := func(p string) pageInfo {
		t.Helper()
		mu.Lock()
		consoleErrors = nil
		mu.Unlock()
		pctx, pcancel := context.WithTimeout(ctx, 30*time.Second)
		defer pcancel()
		if err := chromedp.Do(pctx, chromedp.Navigate(fileURL(p))); err != nil {
			t.Fatalf("open %s: %v", p, err)
		}
		info, err := chromedp.Run(pctx, chromedp.Evaluate[pageInfo](inspect))
		if err != nil {
			t.Fatalf("inspect %s: %v", p, err)
		}
		mu.Lock()
		errs := slices.Clone(consoleErrors)
		mu.Unlock()
		rel, _ := filepath.Rel(out, p)
		if len(errs) > 0 {
			t.Errorf("%s: script errors in the console: %s", rel, strings.Join(errs, "; "))
		}
		if info.Text < 100 || info.H1 == "" || info.Title == "" {
			t.Errorf("%s: blank page (title %q, heading %q, %d characters of text)", rel, info.Title, info.H1, info.Text)
		}
		for _, b := range info.Broken {
			t.Errorf("%s: image did not load: %s", rel, b)
		}
		return info
	}

	// Every page of the site but the cell pages, reached by links from the
	// front page, and the first cell page each of them links: the cell
	// pages (most of the site) are one template over different cells, and
	// TestSiteLinks follows every link of every page without a browser.
	seen := map[string]bool{}
	queue := []string{filepath.Join(out, "index.html")}
	seen[queue[0]] = true
	cellsDir := filepath.Join(out, "cells") + string(filepath.Separator)
	links := 0
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		info := visit(p)
		cellTaken := strings.HasPrefix(p, cellsDir)
		for _, link := range info.Links {
			links++
			u, err := url.Parse(link)
			if err != nil || u.Scheme != "file" {
				t.Errorf("%s links %q: the site must link only its own and the results' files", p, link)
				continue
			}
			target := filepath.FromSlash(u.Path)
			if _, err := os.Stat(target); err != nil {
				t.Errorf("%s: broken link %s", p, link)
				continue
			}
			if !strings.HasPrefix(target, out+string(filepath.Separator)) || !strings.HasSuffix(target, ".html") || seen[target] {
				continue
			}
			if strings.HasPrefix(target, cellsDir) {
				if cellTaken {
					continue
				}
				cellTaken = true
			}
			seen[target] = true
			queue = append(queue, target)
		}
	}
	for _, pg := range pages {
		if !strings.HasPrefix(pg, "cells/") && !seen[filepath.Join(out, filepath.FromSlash(pg))] {
			t.Errorf("%s is written but no link reaches it", pg)
		}
	}

	// The front page and one unsafe cell with a fault: screenshots, and
	// the cell's timeline must be porcupine's drawing with its faults row.
	shoot(t, ctx, fileURL(filepath.Join(out, "index.html")), "front.png")
	checkTabs(t, ctx, fileURL(filepath.Join(out, "index.html")))
	c, ok := unsafeCell(r)
	if !ok {
		t.Fatal("the committed matrix has no unsafe cell with a fault and a counterexample to show")
	}
	cellFile := filepath.Join(out, "cells", c.Impl+"--"+c.Scenario+fencedSuffix(c)+".html")
	info := visit(cellFile)
	// The frame loads lazily (a reader scrolls to it; the other pages'
	// visits skip porcupine's drawing, which is most of a cell's load):
	// scroll to it and wait for porcupine to draw.
	tctx, tcancel := context.WithTimeout(ctx, 30*time.Second)
	defer tcancel()
	if err := chromedp.Do(tctx, chromedp.Evaluate[chromedp.Void](`document.getElementById('timeline').scrollIntoView()`)); err != nil {
		t.Fatalf("%s: %v", cellFile, err)
	}
	for info.Timeline.Frame && !info.Timeline.Drawn && tctx.Err() == nil {
		time.Sleep(100 * time.Millisecond)
		if info, err = chromedp.Run(tctx, chromedp.Evaluate[pageInfo](inspect)); err != nil {
			t.Fatalf("inspect %s: %v", cellFile, err)
		}
	}
	mu.Lock()
	if len(consoleErrors) > 0 {
		t.Errorf("%s: script errors in the console with its timeline shown: %s", cellFile, strings.Join(consoleErrors, "; "))
	}
	mu.Unlock()
	switch {
	case !info.Timeline.Frame:
		t.Errorf("%s: no timeline frame", cellFile)
	case !info.Timeline.Drawn:
		t.Errorf("%s: the timeline frame shows no porcupine drawing", cellFile)
	case !info.Timeline.Faults:
		t.Errorf("%s: the timeline has no faults row", cellFile)
	}
	shoot(t, ctx, fileURL(cellFile), "unsafe-cell.png")
	t.Logf("%d pages visited, %d links followed, in %v; screenshots in %s", len(seen), links, time.Since(start).Round(time.Millisecond), t.ArtifactDir())
}

// panelShown is one topology's table on the front page, and whether the
// browser shows it.
type panelShown struct {
	ID    string `json:"id"`
	Shown bool   `json:"shown"`
}

const panelsShown = `Array.from(document.querySelectorAll('.panels > .panel')).map(p => ({id: p.id, shown: getComputedStyle(p).display !== 'none'}))`

// checkTabs: the front page shows one topology's table at a time, the
// first (the single servers) when the address names none, and the one
// the address names (its tab's link) otherwise; a screenshot keeps the
// last topology's.
func checkTabs(t *testing.T, ctx context.Context, index string) {
	t.Helper()
	shown := func(u string) []panelShown {
		t.Helper()
		pctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		if err := chromedp.Do(pctx, chromedp.Navigate(u)); err != nil {
			t.Fatalf("open %s: %v", u, err)
		}
		ps, err := chromedp.Run(pctx, chromedp.Evaluate[[]panelShown](panelsShown))
		if err != nil {
			t.Fatalf("%s: %v", u, err)
		}
		return ps
	}
	ps := shown(index)
	if len(ps) < 2 {
		t.Fatalf("the front page has %d topology tables, want one per topology of the matrix", len(ps))
	}
	last := ps[len(ps)-1].ID
	for _, tc := range []struct{ fragment, want string }{{"", ps[0].ID}, {"#" + last, last}} {
		var on []string
		for _, p := range shown(index + tc.fragment) {
			if p.Shown {
				on = append(on, p.ID)
			}
		}
		if len(on) != 1 || on[0] != tc.want {
			t.Errorf("index.html%s shows tables %q, want %s alone", tc.fragment, on, tc.want)
		}
	}
	shoot(t, ctx, index+"#"+last, "front-"+last+".png")
}

func fencedSuffix(c record.Cell) string {
	if c.Fencing {
		return "--fenced"
	}
	return ""
}

// unsafeCell picks an unsafe cell whose scenario injects a fault, so its
// timeline has a faults row to show: the correct single-node Redis lock
// paused past its TTL (lesson 5) when the matrix has it unsafe, else any
// lock's.
func unsafeCell(r *site.Results) (record.Cell, bool) {
	var found record.Cell
	ok := false
	for _, c := range r.Matrix {
		if checker.SafetyViolated(c.Verdict) && c.Counterexample != "" && c.Scenario == "pause-past-ttl" && !c.Fencing {
			if c.Impl == "redis-setnx-px" {
				return c, true
			}
			if !ok {
				found, ok = c, true
			}
		}
	}
	return found, ok
}

// shoot saves a full-page screenshot into the test's artifact dir and
// fails if it is one colour: a blank page.
func shoot(t *testing.T, ctx context.Context, u, name string) {
	t.Helper()
	pctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(pctx, chromedp.Navigate(u)); err != nil {
		t.Fatalf("open %s: %v", u, err)
	}
	shot, err := chromedp.Run(pctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", u, err)
	}
	if err := os.WriteFile(filepath.Join(t.ArtifactDir(), name), shot, 0o644); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	if colours(img) < 3 {
		t.Errorf("%s: the screenshot is blank", name)
	}
}

// colours counts the distinct colours of an image, up to 16.
func colours(img image.Image) int {
	seen := map[string]bool{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y && len(seen) < 16; y += 7 {
		for x := b.Min.X; x < b.Max.X && len(seen) < 16; x += 7 {
			r, g, bl, _ := img.At(x, y).RGBA()
			seen[fmt.Sprint(r, g, bl)] = true
		}
	}
	return len(seen)
}
