// Package clockjump moves one server's wall clock at run time. The server is
// started with the clockshift library preloaded (see shim/clockshift.c for why it
// is not libfaketime); Set then writes the offset the library reads.
package clockjump

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"time"
)

//go:embed shim/clockshift.c
var source []byte

var (
	buildOnce sync.Once
	libPath   string
	buildErr  error
)

// Library returns the path of the compiled shim, building it with gcc into
// the user's cache dir the first time (keyed by the source's hash).
func Library() (string, error) {
	buildOnce.Do(func() {
		sum := sha256.Sum256(source)
		dir, err := os.UserCacheDir()
		if err != nil {
			dir = os.TempDir()
		}
		dir = filepath.Join(dir, "locklab")
		libPath = filepath.Join(dir, "clockshift-"+hex.EncodeToString(sum[:6])+".so")
		if _, err := os.Stat(libPath); err == nil {
			return
		}
		gcc, err := exec.LookPath("gcc")
		if err != nil {
			buildErr = errors.New("gcc not found: the clock-jump scenarios compile a small LD_PRELOAD library; install the gcc package (apt-get install -y gcc)")
			return
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			buildErr = fmt.Errorf("make cache dir: %w", err)
			return
		}
		src := filepath.Join(dir, "clockshift.c")
		if err := os.WriteFile(src, source, 0o644); err != nil {
			buildErr = fmt.Errorf("write clockshift.c: %w", err)
			return
		}
		tmp := libPath + ".tmp"
		if out, err := exec.Command(gcc, "-shared", "-fPIC", "-O2", "-o", tmp, src).CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("compile clockshift.c: %w\n%s", err, out)
			return
		}
		buildErr = os.Rename(tmp, libPath)
	})
	return libPath, buildErr
}

// Env returns the environment that preloads the shim reading offsetFile,
// and creates offsetFile with a zero offset.
func Env(offsetFile string) ([]string, error) {
	lib, err := Library()
	if err != nil {
		return nil, err
	}
	if err := Set(offsetFile, 0); err != nil {
		return nil, err
	}
	return []string{"LD_PRELOAD=" + lib, "LOCKLAB_CLOCK_OFFSET_FILE=" + offsetFile}, nil
}

// Set moves the clock of every process reading offsetFile to true time + d.
// The shim picks it up within 5ms. The file is replaced atomically.
func Set(offsetFile string, d time.Duration) error {
	tmp := offsetFile + ".tmp"
	if err := os.WriteFile(tmp, []byte(strconv.FormatInt(d.Milliseconds(), 10)+"\n"), 0o644); err != nil {
		return fmt.Errorf("write clock offset: %w", err)
	}
	if err := os.Rename(tmp, offsetFile); err != nil {
		return fmt.Errorf("write clock offset: %w", err)
	}
	return nil
}
