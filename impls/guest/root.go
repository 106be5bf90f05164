package guest

import (
	"bufio"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// module is the lab's module path: the folder whose go.mod names it is
// the repository's root, where guests/ lives.
const module = "github.com/locklab/locklab"

// RootEnv overrides where the lab looks for guests/ (a checkout elsewhere).
const RootEnv = "LOCKLAB_ROOT"

// Root finds the repository's root: $LOCKLAB_ROOT, else the nearest folder
// at or above the working directory whose go.mod is the lab's (tests run in
// package folders, commands from the root or below it), else the folder this
// file was compiled from (a binary built here and run from elsewhere, such as
// a worker re-executed from go run's temporary folder). "" if none.
func Root() string {
	if r := os.Getenv(RootEnv); r != "" {
		return r
	}
	if wd, err := os.Getwd(); err == nil {
		for d := wd; ; d = filepath.Dir(d) {
			if isRoot(d) {
				return d
			}
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	if _, file, _, ok := runtime.Caller(0); ok {
		d := filepath.Join(filepath.Dir(file), "..", "..")
		if isRoot(d) {
			return filepath.Clean(d)
		}
	}
	return ""
}

func isRoot(dir string) bool {
	f, err := os.Open(filepath.Join(dir, "go.mod"))
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); strings.HasPrefix(line, "module ") {
			return strings.TrimSpace(strings.TrimPrefix(line, "module ")) == module
		}
	}
	return false
}
