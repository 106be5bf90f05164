package benchmark

import (
	"testing"

	"github.com/locklab/locklab/record"
)

func TestCPUPart(t *testing.T) {
	for _, tt := range []struct {
		name  string
		stack []string // innermost first, as a profile's locations are
		want  string
	}{
		{"a write to the server", []string{"internal/runtime/syscall.Syscall6", "syscall.write", "internal/poll.(*FD).Write", "net.(*conn).Write", "github.com/redis/go-redis/v9/internal/pool.(*Conn).WithWriter", "github.com/locklab/locklab/impls/redislock.(*Locker).TryAcquire"}, record.PartSyscalls},
		{"the poller", []string{"runtime.netpoll", "runtime.findRunnable", "runtime.schedule"}, record.PartSyscalls},
		{"a reply parsed", []string{"runtime.mallocgc", "github.com/redis/go-redis/v9/internal/proto.(*Reader).ReadReply", "github.com/locklab/locklab/impls/redisson.(*Locker).try"}, record.PartLibrary},
		{"our script's arguments", []string{"strconv.FormatInt", "github.com/locklab/locklab/impls/redisson.(*Locker).try", "github.com/locklab/locklab/benchmark.(*session).window.func1"}, record.PartLock},
		{"a peer library's own code", []string{"github.com/bsm/redislock.(*Client).obtain", "github.com/locklab/locklab/impls/peers.(*redislockLocker).TryAcquire"}, record.PartLock},
		{"etcd's mutex", []string{"go.etcd.io/etcd/client/v3/concurrency.(*Mutex).Lock"}, record.PartLock},
		{"etcd's client", []string{"go.etcd.io/etcd/client/v3.(*kv).Do", "go.etcd.io/etcd/client/v3/concurrency.(*Mutex).Lock"}, record.PartLibrary},
		{"the harness", []string{"time.Now", "github.com/locklab/locklab/benchmark.(*session).window.func1"}, record.PartHarness},
		{"the garbage collector", []string{"runtime.scanobject", "runtime.gcDrain", "runtime.gcBgMarkWorker"}, record.PartRuntime},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := cpuPart(tt.stack); got != tt.want {
				t.Errorf("cpuPart(%q) = %q, want %q", tt.stack, got, tt.want)
			}
		})
	}
}

func TestPackageOf(t *testing.T) {
	for fn, want := range map[string]string{
		"github.com/redis/go-redis/v9.(*Client).Process":      "github.com/redis/go-redis/v9",
		"github.com/locklab/locklab/impls/redisson.lockKey":   "github.com/locklab/locklab/impls/redisson",
		"go.etcd.io/etcd/client/v3/concurrency.(*Mutex).Lock": "go.etcd.io/etcd/client/v3/concurrency",
		"runtime.mallocgc":                                  "runtime",
		"internal/poll.(*FD).Write":                         "internal/poll",
		"github.com/go-zookeeper/zk.(*Conn).sendLoop.func1": "github.com/go-zookeeper/zk",
	} {
		if got := packageOf(fn); got != want {
			t.Errorf("packageOf(%q) = %q, want %q", fn, got, want)
		}
	}
}
