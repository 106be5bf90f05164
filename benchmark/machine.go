package benchmark

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"runtime"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/record"
	"github.com/locklab/locklab/topology"
	"github.com/redis/go-redis/v9"
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
// settings that decide what a lock costs (persistence, fsync).
func (b *bench) describeServers(ctx context.Context, backends []string) ([]record.Server, error) {
	var out []record.Server
	for _, be := range backends {
		s := record.Server{Backend: be, Settings: map[string]string{}, Started: "by the lab"}
		switch be {
		case BackendRedis:
			if len(b.opts.External.Lock.Addrs(topology.Redis)) > 0 {
				s.Started = "external"
			}
			rdb := redis.NewClient(&redis.Options{Addr: b.redisNodes[0], MaxRetries: -1, PoolSize: 1})
			info, err := rdb.Info(ctx, "server").Result()
			if err == nil {
				s.Version = infoField(info, "redis_version")
				for _, k := range []string{"appendonly", "appendfsync", "save"} {
					v, err2 := rdb.ConfigGet(ctx, k).Result()
					if err2 == nil {
						s.Settings[k] = fmt.Sprintf("%q", v[k])
					}
				}
			}
			rdb.Close()
			if err != nil {
				return nil, fmt.Errorf("INFO server: %w", err)
			}
			s.Settings["lock nodes"] = fmt.Sprint(len(b.redisNodes))
		case BackendZooKeeper:
			if len(b.opts.External.Lock.Addrs(topology.ZooKeeper)) > 0 {
				s.Started = "external"
			}
			m, err := cluster.FourLetterWord(ctx, nil, b.topo.Endpoints().Addrs(topology.ZooKeeper)[0], "srvr")
			if err != nil {
				return nil, err
			}
			s.Version = m["Zookeeper version"]
			s.Settings["mode"] = m["Mode"]
			if s.Started == "by the lab" {
				// Not reported by any four-letter word; set in cluster/zookeeper.go.
				s.Settings["forceSync"] = "no (cluster/zookeeper.go)"
				s.Settings["tickTime"] = "100ms (cluster/zookeeper.go)"
			}
		case BackendPostgres:
			if b.opts.External.Lock.First(topology.Postgres) != "" {
				s.Started = "external"
			}
			conn, err := pgx.Connect(ctx, b.topo.Endpoints().First(topology.Postgres))
			if err != nil {
				return nil, fmt.Errorf("connect to PostgreSQL: %w", err)
			}
			err = conn.QueryRow(ctx, "SELECT version()").Scan(&s.Version)
			for _, k := range []string{"fsync", "synchronous_commit", "full_page_writes", "max_connections"} {
				var v string
				if conn.QueryRow(ctx, "SELECT current_setting($1)", k).Scan(&v) == nil {
					s.Settings[k] = v
				}
			}
			conn.Close(context.Background())
			if err != nil {
				return nil, fmt.Errorf("SELECT version(): %w", err)
			}
		default:
			continue
		}
		out = append(out, s)
	}
	return out, nil
}

func infoField(info, key string) string {
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), key+":"); ok {
			return v
		}
	}
	return ""
}
