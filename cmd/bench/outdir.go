package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// checkOutDir refuses an output directory the run could not write its
// results into, before any server starts: a bad -out found only at the end
// would throw away the whole run. dir need not exist yet; then its nearest
// existing ancestor must be a directory the run can create it in. Nothing
// is left behind: the probe file is removed at once and a missing dir is
// not created. The error is a usage error naming flag.
func checkOutDir(flag, dir string) error {
	if dir == "" {
		return fmt.Errorf("%w: -%s is empty", errUsage, flag)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("%w: -%s %s: %v", errUsage, flag, dir, err)
	}
	// The nearest existing ancestor is where the first write happens.
	probeDir := abs
	for {
		info, err := os.Stat(probeDir)
		if err == nil {
			if !info.IsDir() {
				return fmt.Errorf("%w: -%s %s: %s is not a directory", errUsage, flag, dir, probeDir)
			}
			break
		}
		// ENOTDIR: a file on the way, which the next round names.
		if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
			return fmt.Errorf("%w: -%s %s: %v", errUsage, flag, dir, err)
		}
		parent := filepath.Dir(probeDir)
		if parent == probeDir {
			return fmt.Errorf("%w: -%s %s: no part of the path exists", errUsage, flag, dir)
		}
		probeDir = parent
	}
	// Permission bits do not tell (root ignores them; a read-only mount
	// or a full file system does not show in them): write a file.
	f, err := os.CreateTemp(probeDir, ".locklab-write-probe-")
	if err != nil {
		return fmt.Errorf("%w: -%s %s: cannot write in %s: %v", errUsage, flag, dir, probeDir, err)
	}
	name := f.Name()
	f.Close()
	if err := os.Remove(name); err != nil {
		return fmt.Errorf("-%s %s: remove probe file: %w", flag, dir, err)
	}
	return nil
}

// counterexampleDir is where check writes a counterexample: -out, or the
// engine's default when -out is not given (scenarios' Env.outDir).
func counterexampleDir(out string) string {
	if out != "" {
		return out
	}
	return filepath.Join(os.TempDir(), "locklab")
}
