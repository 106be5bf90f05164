package report

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"
)

// Publish moves a finished set of results from stage into dir. A command
// writes everything into a staging dir while it runs and publishes only
// once all of it is written, so a failed or interrupted run leaves dir as
// it was, never half old and half new.
//
// owned names the entries of dir the publication is responsible for:
// names or filepath.Match patterns ("*.schedule.json"), files or
// directories, one level deep. Every entry of stage that matches is moved
// into dir, replacing the entry of that name; every entry of dir that
// matches and that stage lacks is removed, so a counterexample of an
// earlier run that the new report no longer links does not linger beside
// it. Entries of either that match nothing are left alone (a README of the
// user's in dir, a marker or a scratch subdir in stage).
//
// Each entry first lands in a hidden dir inside dir (copied, when stage is
// on another file system) and is then renamed into place: a file is
// replaced atomically; a directory is swapped with two renames. It returns
// the published paths in dir, sorted.
func Publish(stage, dir string, owned []string) ([]string, error) {
	matches := func(name string) bool {
		return slices.ContainsFunc(owned, func(p string) bool {
			ok, _ := filepath.Match(p, name)
			return ok
		})
	}
	entries, err := os.ReadDir(stage)
	if err != nil {
		return nil, fmt.Errorf("publish: read stage: %w", err)
	}
	var names []string
	for _, e := range entries {
		if matches(e.Name()) {
			names = append(names, e.Name())
		}
	}
	slices.Sort(names)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("publish: %w", err)
	}
	landing, err := os.MkdirTemp(dir, ".publish-")
	if err != nil {
		return nil, fmt.Errorf("publish: %w", err)
	}
	defer os.RemoveAll(landing)
	// Land everything before anything in dir changes: a copy that fails
	// half-way (a full disk) leaves dir untouched.
	for _, n := range names {
		if err := move(filepath.Join(stage, n), filepath.Join(landing, n)); err != nil {
			return nil, fmt.Errorf("publish %s: %w", n, err)
		}
	}
	var published []string
	for _, n := range names {
		dst := filepath.Join(dir, n)
		if err := swapIn(filepath.Join(landing, n), dst, filepath.Join(landing, ".old-"+n)); err != nil {
			return published, fmt.Errorf("publish %s: %w", n, err)
		}
		published = append(published, dst)
	}
	current, err := os.ReadDir(dir)
	if err != nil {
		return published, fmt.Errorf("publish: %w", err)
	}
	for _, e := range current {
		if e.Name() == filepath.Base(landing) {
			continue
		}
		if matches(e.Name()) && !slices.Contains(names, e.Name()) {
			if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
				return published, fmt.Errorf("publish: remove stale %s: %w", e.Name(), err)
			}
		}
	}
	return published, nil
}

// swapIn renames src to dst. A file replaces dst in one rename; a
// directory cannot be renamed over a non-empty one, so dst goes to old
// first and is removed once src is in place.
func swapIn(src, dst, old string) error {
	err := os.Rename(src, dst)
	if err == nil {
		return nil
	}
	info, serr := os.Lstat(dst)
	if serr != nil || (!info.IsDir() && !isDir(src)) {
		return err
	}
	if err := os.Rename(dst, old); err != nil {
		return err
	}
	if err := os.Rename(src, dst); err != nil {
		_ = os.Rename(old, dst) // put the old one back
		return err
	}
	return os.RemoveAll(old)
}

func isDir(p string) bool {
	info, err := os.Lstat(p)
	return err == nil && info.IsDir()
}

// move renames src to dst, copying then removing src when they are on
// different file systems (a staging dir in a tmpfs $TMPDIR).
func move(src, dst string) error {
	err := os.Rename(src, dst)
	if err == nil || !errors.Is(err, syscall.EXDEV) {
		return err
	}
	if err := copyTree(src, dst); err != nil {
		return err
	}
	return os.RemoveAll(src)
}

// copyTree copies a file, or a directory with everything below it.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("%s is not a regular file", p)
		}
		return copyFile(p, target)
	})
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
