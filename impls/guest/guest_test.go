package guest

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/topology"
)

// fake is a manifest for testdata/fake.py in one of its modes.
func fake(t *testing.T, mode string) (Manifest, string) {
	t.Helper()
	dir, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	pidfile := filepath.Join(t.TempDir(), "pid")
	t.Setenv("FAKE_PIDFILE", pidfile)
	return Manifest{Name: "fake", Command: []string{"/usr/bin/python3", "fake.py", mode}, Kind: topology.Redis,
		Summary: "fake", Capabilities: Capabilities{Expiry: true}, StartTimeoutMS: 10000, Dir: dir}, pidfile
}

var fakeCfg = impls.Config{Servers: topology.At(topology.Redis, "127.0.0.1:1"), TTL: time.Second, ClientID: "t"}

// gone fails the test unless the process whose id is in pidfile has
// ended and been reaped.
func gone(t *testing.T, pidfile string) {
	t.Helper()
	b, err := os.ReadFile(pidfile)
	if err != nil {
		t.Fatalf("the fake guest wrote no pid: %v", err)
	}
	pid, _ := strconv.Atoi(string(b))
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Fatalf("guest process %d still exists after the lab stopped it (kill 0: %v)", pid, err)
	}
}

// A guest that breaks the protocol fails the run with an error saying
// which breach it was, and is not left running.
func TestBreaches(t *testing.T) {
	tests := []struct {
		mode   string
		breach Breach
		// atStart: Start itself fails; otherwise a TryAcquire does.
		atStart bool
		detail  string // a piece of the error's text
	}{
		{"crash", BreachCrashAtStart, true, "cannot load its library"},
		{"silent-hello", BreachSilentAtStart, true, "no answer to hello"},
		{"version", BreachVersion, true, "speaks protocol 2"},
		{"caps", BreachCapabilities, true, "fencing"},
		{"badjson", BreachBadJSON, false, `"lock granted!"`},
		{"nothing", BreachAnswerToNothing, false, "which no request awaits"},
		{"die", BreachCrash, false, "exit status 7"},
		{"refuse", BreachProtocolAnswer, false, "no such op try-acquire"},
		{"silent", BreachSilence, false, "no answer to try-acquire"},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			m, pidfile := fake(t, tt.mode)
			if tt.mode == "silent-hello" {
				m.StartTimeoutMS = 2000
			}
			l, err := Start(m, fakeCfg, Options{Grace: 200 * time.Millisecond})
			if !tt.atStart {
				if err != nil {
					t.Fatalf("start: %v", err)
				}
				ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
				_, err = l.TryAcquire(ctx, "k")
				cancel()
				if tt.mode == "silent" {
					// The caller's deadline ends first; the silence is found
					// a grace later and fails every later request.
					<-l.c.deadCh
					_, err = l.TryAcquire(context.Background(), "k")
				}
				if !errors.Is(err, impls.ErrUnknown) {
					t.Errorf("a broken guest's try-acquire: %v, want ErrUnknown (the request may have reached a server)", err)
				}
				l.Close()
			}
			var pe *ProtocolError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v (%T), want a *ProtocolError", err, err)
			}
			if pe.Breach != tt.breach {
				t.Errorf("breach %q, want %q (%v)", pe.Breach, tt.breach, err)
			}
			if !strings.Contains(err.Error(), tt.detail) {
				t.Errorf("error %q does not say %q", err, tt.detail)
			}
			gone(t, pidfile)
		})
	}
}

// The protocol's ordinary exchanges map to impls' leases and errors.
func TestExchanges(t *testing.T) {
	ctx := context.Background()
	start := func(t *testing.T, mode string) (*Locker, string) {
		m, pidfile := fake(t, mode)
		l, err := Start(m, fakeCfg, Options{})
		if err != nil {
			t.Fatal(err)
		}
		return l, pidfile
	}
	t.Run("grant, held, refresh, release, released", func(t *testing.T) {
		l, pidfile := start(t, "good")
		if l.Name != "fake" || l.Version != "0" {
			t.Errorf("hello: %q %q", l.Name, l.Version)
		}
		lease, err := l.TryAcquire(ctx, "k")
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := lease.Token(); ok {
			t.Error("a grant without a token has one")
		}
		if _, err := l.TryAcquire(ctx, "k"); !errors.Is(err, impls.ErrHeld) {
			t.Errorf("second try: %v, want ErrHeld", err)
		}
		if err := lease.Refresh(ctx); err != nil {
			t.Errorf("refresh: %v", err)
		}
		if err := lease.Release(ctx); err != nil {
			t.Errorf("release: %v", err)
		}
		if err := lease.Release(ctx); !errors.Is(err, impls.ErrNotHeld) {
			t.Errorf("second release: %v, want ErrNotHeld", err)
		}
		if err := l.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
		gone(t, pidfile)
	})
	t.Run("an abandoned acquire is cancelled and leaves the key free", func(t *testing.T) {
		l, _ := start(t, "good")
		defer l.Close()
		first, err := l.TryAcquire(ctx, "k")
		if err != nil {
			t.Fatal(err)
		}
		cctx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() {
			_, err := l.Acquire(cctx, "k")
			done <- err
		}()
		time.Sleep(50 * time.Millisecond)
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled acquire: %v, want context.Canceled", err)
		}
		if err := first.Release(ctx); err != nil {
			t.Fatal(err)
		}
		again, err := l.TryAcquire(ctx, "k")
		if err != nil {
			t.Fatalf("after the abandoned wait: %v, want the key free", err)
		}
		again.Release(ctx)
		if err := l.c.deadErr(); err != nil {
			t.Errorf("the guest was stopped: %v", err)
		}
	})
	t.Run("a bounded acquire times out", func(t *testing.T) {
		l, _ := start(t, "good")
		defer l.Close()
		if _, err := l.TryAcquire(ctx, "k"); err != nil {
			t.Fatal(err)
		}
		tctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		defer cancel()
		if _, err := l.Acquire(tctx, "k"); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("acquire of a held key: %v, want DeadlineExceeded", err)
		}
	})
	t.Run("a lost event closes the lease's Lost", func(t *testing.T) {
		l, _ := start(t, "lose")
		defer l.Close()
		lease, err := l.TryAcquire(ctx, "k")
		if err != nil {
			t.Fatal(err)
		}
		select {
		case <-lease.Lost():
		case <-time.After(10 * time.Second):
			t.Fatal("Lost not closed after the guest's lost event")
		}
	})
	t.Run("a crash closes every lease's Lost", func(t *testing.T) {
		l, pidfile := start(t, "good")
		lease, err := l.TryAcquire(ctx, "k")
		if err != nil {
			t.Fatal(err)
		}
		l.c.cmd.Process.Kill()
		select {
		case <-lease.Lost():
		case <-time.After(10 * time.Second):
			t.Fatal("Lost not closed after the guest died")
		}
		var pe *ProtocolError
		if err := lease.Refresh(ctx); !errors.As(err, &pe) || pe.Breach != BreachCrash {
			t.Errorf("refresh after the crash: %v, want the crash", err)
		}
		l.Close()
		gone(t, pidfile)
	})
}
