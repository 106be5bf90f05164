package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/cluster/leftovers"
	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/lessons"
	"github.com/locklab/locklab/nemesis"
	"github.com/locklab/locklab/record"
	"github.com/locklab/locklab/report"
	"github.com/locklab/locklab/report/site"
	"github.com/locklab/locklab/scenarios"
)

// matrixTTL is the TTL `bench matrix` runs its cells with by default; the
// site's reproduce commands and declared schedules use it.
const matrixTTL = time.Second

// reportCmd renders the results into the static site (package site) and,
// with -serve, serves it on 127.0.0.1 for a browser.
func reportCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	results := fs.String("results", "results", "results dir to render (correctness.json, bench.json, explore/, mutants.json)")
	out := outFlag(fs, filepath.Join("results", "site"), "the site (index.html, locks/, cells/)")
	serve := fs.Bool("serve", false, "serve the site on 127.0.0.1 after writing it, until interrupted")
	port := fs.Int("port", 0, "port for -serve (default: a free one)")
	if err := parse(fs, args, stderr); err != nil {
		return err
	}
	if err := checkSiteOut(*out, *results); err != nil {
		return err
	}
	if err := checkOutDir("out", *out); err != nil {
		return err
	}
	// The results go light before they are rendered, as a step of the
	// report and not a command of its own: every command that writes
	// results is followed by this one (make matrix, explore, bench), so no
	// rerun leaves a file its tables do not link or a history uncompressed.
	x, err := site.Lighten(*results)
	if err != nil {
		return fmt.Errorf("%w: -results %s: %v", errUsage, *results, err)
	}
	if !x.Empty() {
		fmt.Fprintf(stdout, "results: removed %d files no table links, gzipped %d histories, compacted %d timelines\n",
			len(x.Unlinked), len(x.Plain), len(x.Loose))
	}
	r, err := site.Load(*results)
	if err != nil {
		return fmt.Errorf("%w: -results %s: %v", errUsage, *results, err)
	}
	repo, commit := provenance(*results)
	var root string
	if *serve {
		// Checked before anything is written, as every bad input is.
		if root, err = serveRoot(*out, *results, repo); err != nil {
			return err
		}
	}
	// The site is written into a stage and swapped in whole: a failed
	// render leaves the old site, and pages of cells no longer in the
	// results go with it.
	stage, err := leftovers.MakeDir("report")
	if err != nil {
		return err
	}
	defer os.RemoveAll(stage)
	name := filepath.Base(filepath.Clean(*out))
	pages, err := site.Write(filepath.Join(stage, name), r, site.Options{
		Out: *out, Repo: repo, Commit: commit, MatrixTTL: matrixTTL, Locks: impls.All(),
		KeyScenarios: lessons.KeyScenarios, LessonFor: lessons.PageFor, Describe: describeScenario})
	if err != nil {
		return err
	}
	if _, err := report.Publish(stage, filepath.Dir(filepath.Clean(*out)), []string{name}); err != nil {
		return err
	}
	index := filepath.Join(*out, "index.html")
	fmt.Fprintf(stdout, "site: %s (%d pages)\n", index, len(pages))
	if !*serve {
		return nil
	}
	return serveSite(ctx, *port, root, index, stdout)
}

// checkSiteOut refuses an -out whose publication would replace more than
// a site: the results dir itself or one above it, or a dir of other files.
func checkSiteOut(out, results string) error {
	o, err := filepath.Abs(out)
	if err != nil {
		return fmt.Errorf("%w: -out %s: %v", errUsage, out, err)
	}
	r, err := filepath.Abs(results)
	if err != nil {
		return fmt.Errorf("%w: -results %s: %v", errUsage, results, err)
	}
	if o == r || strings.HasPrefix(r, o+string(filepath.Separator)) || filepath.Dir(o) == o {
		return fmt.Errorf("%w: -out %s would replace the results it renders: give the site a dir of its own (default results/site)", errUsage, out)
	}
	entries, err := os.ReadDir(o)
	if err != nil {
		return nil // missing (checkOutDir judges the rest)
	}
	if _, err := os.Stat(filepath.Join(o, "index.html")); len(entries) > 0 && err != nil {
		return fmt.Errorf("%w: -out %s holds files and no index.html: it is not a site this command wrote, and writing the site replaces the whole dir", errUsage, out)
	}
	return nil
}

// serveSite serves the nearest dir holding the site, the results and the
// repository (the site links all three by relative paths) on 127.0.0.1
// only, until ctx ends or the process is interrupted.
func serveSite(ctx context.Context, port int, root, index string, stdout io.Writer) error {
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	abs, _ := filepath.Abs(index)
	rel, err := filepath.Rel(root, abs)
	if err != nil {
		ln.Close()
		return fmt.Errorf("serve: %w", err)
	}
	fmt.Fprintf(stdout, "serving %s on http://%s/%s (Ctrl-C stops)\n", root, ln.Addr(), filepath.ToSlash(rel))
	srv := &http.Server{Handler: http.FileServer(http.Dir(root)), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	return nil
}

// serveRoot is the dir -serve serves: the deepest one holding the site,
// the results and the repository, since the site links all three by
// relative paths. It refuses the file system's root.
func serveRoot(out, results, repo string) (string, error) {
	root, err := commonDir([]string{out, results, repo})
	if err != nil {
		return "", err
	}
	if filepath.Dir(root) == root {
		// Serving / would hand the whole file system to any local process.
		return "", fmt.Errorf("%w: -serve serves the dir that holds the site, the results and the lessons, and here that is %s: keep -out inside the repository (default results/site)", errUsage, root)
	}
	return root, nil
}

// commonDir is the deepest dir holding every one of dirs.
func commonDir(dirs []string) (string, error) {
	var root string
	for i, d := range dirs {
		abs, err := filepath.Abs(d)
		if err != nil {
			return "", err
		}
		if i == 0 {
			root = abs
			continue
		}
		for root != filepath.Dir(root) && abs != root && !strings.HasPrefix(abs, root+string(filepath.Separator)) {
			root = filepath.Dir(root)
		}
	}
	return root, nil
}

// describeScenario is what a cell's page says of its scenario, from the
// scenario registry: its summary and, for a fixed schedule, the steps it
// declares for the cell's lock at ttl.
func describeScenario(c record.Cell, ttl time.Duration) (site.Scenario, bool) {
	sc, err := scenarios.Lookup(c.Scenario)
	if err != nil {
		return site.Scenario{}, false
	}
	d := site.Scenario{Summary: sc.Summary, Risk: sc.Risk}
	build, ok := nemesis.Fixed[sc.Schedule]
	if sc.Schedule == "" || !ok {
		d.Scripted = true
		return d, true
	}
	for _, st := range build(c.Impl, c.Fencing, ttl, checker.Bound(ttl)).Faults {
		d.Steps = append(d.Steps, site.Step{At: time.Duration(st.At).String(), Kind: st.Kind, Target: st.Target,
			Duration: time.Duration(st.Duration).String(), After: st.After, Holder: st.Holder})
	}
	return d, true
}
