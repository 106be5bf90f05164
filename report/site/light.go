package site

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	lin "github.com/locklab/locklab/linearizability"
)

// Results stay light: every rerun with new seeds adds its counterexamples
// to the repository's history for good, so the results dir keeps only the
// files its tables link, histories gzipped and timelines compact
// (lin.CompactTimeline), each still opening offline from disk.

// Excess is what a results dir holds beyond what its tables need, each a
// path relative to the dir in slash form.
type Excess struct {
	// Unlinked are histories, schedules and timelines no table links.
	Unlinked []string
	// Plain are linked histories not gzipped.
	Plain []string
	// Loose are linked timelines not compact.
	Loose []string
}

// Empty reports whether the dir holds nothing beyond what it needs.
func (x Excess) Empty() bool { return len(x.Unlinked)+len(x.Plain)+len(x.Loose) == 0 }

func (x Excess) String() string {
	return fmt.Sprintf("%d unlinked files, %d plain histories, %d timelines not compact", len(x.Unlinked), len(x.Plain), len(x.Loose))
}

// The names of the files a run keeps beside its tables.
const (
	plainHistorySuffix = ".history.jsonl"
	scheduleSuffix     = ".schedule.json"
)

// FindExcess loads the results in dir (an error, as for Load, when a table
// links a file that is not there) and lists what it holds beyond them.
func FindExcess(dir string) (Excess, error) {
	r, err := Load(dir)
	if err != nil {
		return Excess{}, err
	}
	linked := r.Linked()
	files, err := keptFiles(dir)
	if err != nil {
		return Excess{}, err
	}
	var x Excess
	for _, f := range files {
		switch {
		case linked[f] == "":
			x.Unlinked = append(x.Unlinked, f)
		case strings.HasSuffix(f, plainHistorySuffix):
			x.Plain = append(x.Plain, f)
		case strings.HasSuffix(f, ".html"):
			page, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f)))
			if err != nil {
				return Excess{}, fmt.Errorf("results: %w", err)
			}
			if !lin.IsCompactTimeline(page) {
				x.Loose = append(x.Loose, f)
			}
		}
	}
	return x, nil
}

// Lighten removes from dir every kept file its tables do not link, gzips
// the plain histories they link (and rewrites the links to them in every
// table, .json and .md, so they re-render unchanged but for the name),
// and compacts their timelines. It returns what it found, and leaves a dir
// Load accepts.
func Lighten(dir string) (Excess, error) {
	x, err := FindExcess(dir)
	if err != nil {
		return x, err
	}
	for _, f := range x.Unlinked {
		if err := os.Remove(filepath.Join(dir, filepath.FromSlash(f))); err != nil {
			return x, fmt.Errorf("results: remove unlinked: %w", err)
		}
	}
	renamed := map[string]string{}
	for _, f := range x.Plain {
		if err := gzipFile(filepath.Join(dir, filepath.FromSlash(f))); err != nil {
			return x, err
		}
		renamed[f] = f + lin.CompressedSuffix
	}
	// The tables are relinked before the plain files go: a failure
	// between leaves both forms, never a link to nothing.
	if err := relink(dir, renamed); err != nil {
		return x, err
	}
	for _, f := range x.Plain {
		if err := os.Remove(filepath.Join(dir, filepath.FromSlash(f))); err != nil {
			return x, fmt.Errorf("results: remove plain history: %w", err)
		}
	}
	for _, f := range x.Loose {
		if err := compactFile(filepath.Join(dir, filepath.FromSlash(f))); err != nil {
			return x, err
		}
	}
	if _, err := Load(dir); err != nil {
		return x, fmt.Errorf("results after lightening: %w", err)
	}
	return x, nil
}

// eachFile calls fn on every file below dir, leaving out hidden dirs (a
// publication's landing dir, a git dir), which hold nothing the tables link.
func eachFile(dir string, fn func(p string, d fs.DirEntry) error) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != dir && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			return nil
		}
		return fn(p, d)
	})
}

// keptFiles lists the files runs keep beside the tables in dir: histories
// (plain or gzipped), schedules and porcupine timelines, not the site's
// own pages nor a publication's hidden landing dir.
func keptFiles(dir string) ([]string, error) {
	var out []string
	err := eachFile(dir, func(p string, d fs.DirEntry) error {
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		name := d.Name()
		switch {
		case strings.HasSuffix(name, plainHistorySuffix), strings.HasSuffix(name, plainHistorySuffix+lin.CompressedSuffix),
			strings.HasSuffix(name, scheduleSuffix):
			out = append(out, filepath.ToSlash(rel))
		case strings.HasSuffix(name, ".html"):
			timeline, err := isTimelineFile(p)
			if err != nil {
				return err
			}
			if timeline {
				out = append(out, filepath.ToSlash(rel))
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("results: list kept files: %w", err)
	}
	return out, nil
}

// isTimelineFile reads the head of an HTML file, where porcupine's title
// is, rather than the whole of each of the site's pages.
func isTimelineFile(p string) (bool, error) {
	f, err := os.Open(p)
	if err != nil {
		return false, err
	}
	defer f.Close()
	head := make([]byte, 1024)
	n, err := io.ReadFull(f, head)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return false, err
	}
	return lin.IsTimeline(head[:n]), nil
}

// gzipFile writes p's bytes gzipped to p.gz, whole or not at all.
func gzipFile(p string) error {
	b, err := os.ReadFile(p)
	if err != nil {
		return fmt.Errorf("results: gzip history: %w", err)
	}
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	if _, err := zw.Write(b); err != nil {
		return fmt.Errorf("results: gzip %s: %w", p, err)
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("results: gzip %s: %w", p, err)
	}
	return writeWhole(p+lin.CompressedSuffix, z.Bytes())
}

// compactFile rewrites a timeline compact.
func compactFile(p string) error {
	page, err := os.ReadFile(p)
	if err != nil {
		return fmt.Errorf("results: compact timeline: %w", err)
	}
	compact, changed, err := lin.CompactTimeline(page)
	if err != nil {
		return fmt.Errorf("results: %s: %w", p, err)
	}
	if !changed {
		return nil
	}
	return writeWhole(p, compact)
}

// relink rewrites, in every table under dir (.json and .md), each link to
// a renamed file: the file's name relative to the table's own dir, as the
// tables write it, between quotes, parentheses or brackets.
func relink(dir string, renamed map[string]string) error {
	if len(renamed) == 0 {
		return nil
	}
	return eachFile(dir, func(p string, _ fs.DirEntry) error {
		if ext := filepath.Ext(p); (ext != ".json" && ext != ".md") || strings.HasSuffix(p, scheduleSuffix) {
			return nil
		}
		tableDir, err := filepath.Rel(dir, filepath.Dir(p))
		if err != nil {
			return err
		}
		from := map[string]string{} // as the table names them
		for old, now := range renamed {
			rel, ok := below(filepath.ToSlash(tableDir), old)
			if ok {
				from[rel] = path.Base(now)
			}
		}
		return rewriteLinks(p, from)
	})
}

// below is f relative to the dir d (both relative to the results dir),
// when f is inside d.
func below(d, f string) (string, bool) {
	if d == "." {
		return f, true
	}
	rel, ok := strings.CutPrefix(f, d+"/")
	return rel, ok
}

// rewriteLinks renames, in the table at p, every link whose target is a
// key of from to the file's new base name, leaving the rest of the table
// byte for byte.
func rewriteLinks(p string, from map[string]string) error {
	if len(from) == 0 {
		return nil
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return fmt.Errorf("results: relink: %w", err)
	}
	olds := make([]string, 0, len(from))
	for old := range from {
		olds = append(olds, regexp.QuoteMeta(old))
	}
	// Longest first, so a name is never matched by a shorter one it ends in.
	slices.SortFunc(olds, func(a, b string) int { return len(b) - len(a) })
	re := regexp.MustCompile(`(["(\[])(` + strings.Join(olds, "|") + `)(` + regexp.QuoteMeta(lin.CompressedSuffix) + `)?([")\]])`)
	out := re.ReplaceAllFunc(b, func(m []byte) []byte {
		sub := re.FindSubmatch(m)
		old := string(sub[2])
		now := path.Join(path.Dir(old), from[old])
		return []byte(string(sub[1]) + now + string(sub[4]))
	})
	if bytes.Equal(out, b) {
		return nil
	}
	return writeWhole(p, out)
}

// writeWhole replaces p with b in one rename, so an interrupted run leaves
// the old file or the new one, never half of it.
func writeWhole(p string, b []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(p), ".light-*")
	if err != nil {
		return fmt.Errorf("results: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return fmt.Errorf("results: write %s: %w", p, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("results: write %s: %w", p, err)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return fmt.Errorf("results: %w", err)
	}
	if err := os.Rename(tmp.Name(), p); err != nil {
		return fmt.Errorf("results: write %s: %w", p, err)
	}
	return nil
}
