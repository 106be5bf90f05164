package benchmark

import (
	"bufio"
	"context"
	"fmt"
	"maps"
	"os"
	"runtime"
	"strings"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/record"
	"github.com/locklab/locklab/topology"
)

func describeMachine(placement string) record.Machine {
	m := record.Machine{Cores: runtime.NumCPU(), OS: runtime.GOOS + "/" + runtime.GOARCH, Go: runtime.Version(), Placement: placement}
	m.CPU = procField("/proc/cpuinfo", "model name")
	if kb := procField("/proc/meminfo", "MemTotal"); kb != "" {
		var n float64
		if _, err := fmt.Sscanf(kb, "%f kB", &n); err == nil {
			m.MemoryGiB = fmt.Sprintf("%.1f", n/1024/1024)
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	for _, f := range []*string{&m.CPU, &m.MemoryGiB, &m.Kernel} {
		if *f == "" {
			*f = "unknown"
		}
	}
	return m
}

// procField returns the first "key : value" of a /proc file.
func procField(path, key string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// describeServers asks each backend in use for its version and the
// settings that decide what a lock costs (persistence, fsync): its server
// kind's Describe.
func (b *bench) describeServers(ctx context.Context, backends []string) ([]record.Server, error) {
	var out []record.Server
	for _, be := range backends {
		k, err := cluster.KindOf(topology.Kind(be))
		if err != nil {
			continue
		}
		d, err := k.Describe(ctx, b.topo.Endpoints()[k.Kind()])
		if err != nil {
			return nil, fmt.Errorf("describe the %s servers: %w", be, err)
		}
		s := record.Server{Backend: be, Version: d.Version, Settings: d.Settings, Started: "by the lab"}
		if len(b.opts.External.Lock.Addrs(k.Kind())) > 0 {
			s.Started = "external"
		} else {
			maps.Copy(s.Settings, d.LabSettings)
		}
		out = append(out, s)
	}
	return out, nil
}
