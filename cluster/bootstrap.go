package cluster

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"

	"github.com/locklab/locklab/cluster/leftovers"
)

// A database server's empty data dir is the same every time it is made:
// initdb and mariadb-install-db write the same catalogs for the same
// arguments. Making one took 1 to 5 s on the lab's 2 cores (MariaDB's about
// 3 s even when idle), paid again by every PostgreSQL and MySQL cell, run
// and server restart. So each process bootstraps a data dir once per kind
// of server and arguments, and every server after that starts on a copy of
// it (about 0.1 s): a fresh server process on a fresh, never-used data dir,
// exactly as before, only not made from scratch each time.
var bootstraps = struct {
	sync.Mutex
	dirs map[string]string // key → the bootstrapped data dir
}{dirs: map[string]string{}}

// copyOfBootstrap fills data (which must not exist) with a copy of the data
// dir bootstrap makes, running bootstrap into a dir of its own the first
// time key is asked for. marker is a file every complete data dir has: a
// bootstrap whose dir is gone (StopAll removes every lab dir) is made again.
// The copy keeps owners and modes, so a server that refuses a data dir
// not its own, or readable by others (PostgreSQL), starts on it. The dir
// bootstrap writes into is owned by cred (the server's user; nil: ours).
func copyOfBootstrap(key, marker, data string, cred *syscall.Credential, bootstrap func(into string) error) error {
	src, err := bootstrapped(key, marker, cred, bootstrap)
	if err != nil {
		return err
	}
	if out, err := exec.Command("cp", "-a", src, data).CombinedOutput(); err != nil {
		return fmt.Errorf("copy the bootstrapped data dir %s: %w\n%s", src, err, out)
	}
	return nil
}

// bootstrapped returns key's data dir, making it once. The lock is held
// through a bootstrap, so cells started at once make it once between them.
func bootstrapped(key, marker string, cred *syscall.Credential, bootstrap func(into string) error) (string, error) {
	bootstraps.Lock()
	defer bootstraps.Unlock()
	if d, ok := bootstraps.dirs[key]; ok {
		if _, err := os.Stat(filepath.Join(d, marker)); err == nil {
			return d, nil
		}
		delete(bootstraps.dirs, key)
	}
	// A lab dir of its own: removed with the run's others at every exit
	// that runs code, and by the next run's sweep after a SIGKILL.
	dir, err := leftovers.MakeDir("bootstrap")
	if err != nil {
		return "", err
	}
	if cred != nil {
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			_ = os.RemoveAll(dir)
			return "", fmt.Errorf("bootstrap %s: %w", key, err)
		}
	}
	data := filepath.Join(dir, "data")
	if err := bootstrap(data); err != nil {
		_ = os.RemoveAll(dir)
		return "", err
	}
	bootstraps.dirs[key] = data
	return data, nil
}
