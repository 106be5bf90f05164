package cluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/locklab/locklab/cluster/hosts"
	"github.com/locklab/locklab/topology"
)

// PostgresOptions configures one PostgreSQL server.
type PostgresOptions struct {
	Name string // defaults to "postgres"
	// Host runs the server on a host of the lab's own, bound to its address.
	Host *hosts.Host
	// Port, when set, is the port to listen on (fixed by a group's start).
	Port int
	// Settings are the topology's declared server settings, each given to
	// postgres as -c name=value after the lab's own (so they win).
	Settings map[string]string
	// ReplicaOf makes the server a streaming replica of a PostgreSQL the
	// lab started: its data dir is a base backup of that server
	// (pg_basebackup -R: standby.signal and primary_conninfo), and it
	// follows the primary's WAL until promoted.
	ReplicaOf *Node
}

// postgresBinDir finds initdb and postgres: on PATH, else Debian's versioned dir.
func postgresBinDir() (string, error) {
	if p, err := exec.LookPath("postgres"); err == nil {
		return filepath.Dir(p), nil
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			if _, err := os.Stat(filepath.Join(filepath.Dir(real), "postgres")); err == nil {
				return filepath.Dir(real), nil
			}
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Strings(dirs)
	for i := len(dirs) - 1; i >= 0; i-- {
		if _, err := os.Stat(filepath.Join(dirs[i], "postgres")); err == nil {
			return dirs[i], nil
		}
	}
	return "", missing("postgres and initdb", "postgresql")
}

// unprivileged returns the credential to run PostgreSQL under when the lab
// runs as root (PostgreSQL refuses to run as root), or nil otherwise.
func unprivileged() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	for _, name := range []string{"postgres", "nobody"} {
		u, err := user.Lookup(name)
		if err != nil {
			continue
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), NoSetGroups: true}, nil
	}
	return nil, fmt.Errorf("running as root, and neither a postgres nor a nobody user exists to run PostgreSQL as")
}

// PostgresUser is the superuser initdb creates; the lab connects as it.
const PostgresUser = "locklab"

// DSN returns a connection string for a PostgreSQL node the lab started.
func (n *Node) DSN() string {
	host, port, _ := splitHostPort(n.Addr)
	return fmt.Sprintf("postgres://%s@%s:%s/postgres?sslmode=disable", PostgresUser, host, port)
}

// StartPostgres runs initdb into a temp dir and starts postgres on a free
// loopback port, waiting until SELECT 1 answers.
func StartPostgres(ctx context.Context, opts PostgresOptions) (*Node, error) {
	if ContainerMode() {
		if opts.ReplicaOf != nil {
			return nil, fmt.Errorf("%s: %w", opts.Name, postgresKind{}.Replicas())
		}
		return startPostgresContainer(ctx, opts)
	}
	bin, err := postgresBinDir()
	if err != nil {
		return nil, err
	}
	cred, err := unprivileged()
	if err != nil {
		return nil, err
	}
	if opts.Name == "" {
		opts.Name = "postgres"
	}
	bind, port, err := listenOn(opts.Host, opts.Port)
	if err != nil {
		return nil, err
	}
	dir, err := newNodeDir(opts.Name)
	if err != nil {
		return nil, err
	}
	n := &Node{Kind: KindPostgres, Name: opts.Name, Addr: net.JoinHostPort(bind, strconv.Itoa(port)), Dir: dir, Host: opts.Host}
	data := filepath.Join(dir, "data")
	asServerUser := func(cmd *exec.Cmd) {
		if cred != nil {
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		}
	}
	chown := func() error {
		if cred == nil {
			return nil
		}
		return filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
			if err != nil {
				return err
			}
			return os.Lchown(p, int(cred.Uid), int(cred.Gid))
		})
	}
	initdb := func() error {
		if _, err := os.Stat(filepath.Join(data, "PG_VERSION")); err == nil {
			return nil
		}
		if err := chown(); err != nil {
			return err
		}
		if opts.ReplicaOf != nil {
			return baseBackup(bin, data, opts, asServerUser)
		}
		err := copyOfBootstrap("postgres "+bin, "PG_VERSION", data, cred, func(into string) error {
			cmd := exec.Command(filepath.Join(bin, "initdb"), "-D", into, "-U", PostgresUser,
				"--auth=trust", "--encoding=UTF8", "--no-sync", "--no-instructions")
			asServerUser(cmd)
			if out, err := cmd.CombinedOutput(); err != nil {
				return fmt.Errorf("initdb: %w\n%s", err, out)
			}
			return nil
		})
		if err != nil {
			return err
		}
		if opts.Host != nil {
			// initdb trusts loopback only; on a host, clients and the lab
			// come from the hosts' subnet.
			f, err := os.OpenFile(filepath.Join(data, "pg_hba.conf"), os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				return fmt.Errorf("trust the hosts' subnet: %w", err)
			}
			defer f.Close()
			// A replica on a host of its own streams from there too.
			if _, err := fmt.Fprintf(f, "host all all %s trust\nhost replication all %s trust\n", hosts.Subnet, hosts.Subnet); err != nil {
				return fmt.Errorf("trust the hosts' subnet: %w", err)
			}
		}
		return nil
	}
	launch := func(ctx context.Context, n *Node) (*Process, error) {
		if err := initdb(); err != nil {
			return nil, err
		}
		cmd := exec.Command(filepath.Join(bin, "postgres"), postgresArgs(data, bind, port, n.Dir, opts.Settings)...)
		asServerUser(cmd)
		return n.spawnLogged(cmd)
	}
	n.ready = postgresReady
	wipe := func(n *Node) error { return os.RemoveAll(data) }
	if err := chown(); err != nil {
		n.Stop()
		return nil, fmt.Errorf("chown %s: %w", dir, err)
	}
	if err := n.startProcess(ctx, launch, wipe); err != nil {
		n.Stop()
		return nil, err
	}
	return n, nil
}

// postgresArgs is the server's command line after the binary, the same for
// a local process and a container: its data, where it listens, the lab's
// settings, and then the topology's, so that they win.
func postgresArgs(data, bind string, port int, socketDir string, settings map[string]string) []string {
	args := []string{"-D", data,
		"-p", strconv.Itoa(port),
		"-c", "listen_addresses=" + bind,
		"-c", "unix_socket_directories=" + socketDir,
		"-c", "max_connections=300",
		// The lab measures locking, not the disk: see results/ for the settings.
		"-c", "fsync=off",
		// The profile's (topology.Profile; settings below carry the run's).
		"-c", "synchronous_commit=" + topology.Setting(topology.Postgres, "synchronous_commit"),
		"-c", "full_page_writes=off",
		"-c", "shared_buffers=64MB"}
	for _, kv := range settingsArgs(settings, "", "=") {
		args = append(args, "-c", kv)
	}
	return args
}

// postgresReady is the readiness probe: SELECT 1 answers.
func postgresReady(ctx context.Context, n *Node) error {
	cfg, err := pgx.ParseConfig(n.DSN())
	if err != nil {
		return err
	}
	if dial := n.dialer(); dial != nil {
		cfg.DialFunc = dial
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	var one int
	return conn.QueryRow(ctx, "SELECT 1").Scan(&one)
}

// postgresKind is PostgreSQL's home.
type postgresKind struct{}

func init() { RegisterKind(postgresKind{}) }

func (postgresKind) Kind() topology.Kind { return topology.Postgres }
func (postgresKind) Package() string     { return "postgresql" }
func (postgresKind) Image() string       { return "postgres" }

// Replicas: the lab makes a replica with pg_basebackup into a data dir on
// this machine, and the fail-over moves the primary's address between the
// lab's hosts, which container mode does not have; so replicas start as
// local processes only.
func (postgresKind) Replicas() error {
	if ContainerMode() {
		return errPostgresReplicaInContainers
	}
	return nil
}

func (postgresKind) Start(ctx context.Context, members []Member) ([]*Node, error) {
	return startEach(members, func(m Member) (*Node, error) {
		return StartPostgres(ctx, PostgresOptions{Name: m.Name, Host: m.Host, Port: m.Port, Settings: m.Settings, ReplicaOf: m.ReplicaOf})
	})
}

// Endpoint gives clients the DSN of each node (a lock uses the first).
// Ensembles: the lab runs this kind as independent servers only.
func (postgresKind) Ensembles() error {
	return errors.New("the lab starts postgres as independent servers only")
}

func (postgresKind) Endpoint(nodes []*Node) topology.Endpoint {
	ep := topology.Endpoint{Kind: topology.Postgres}
	for _, n := range nodes {
		ep.Addrs = append(ep.Addrs, n.DSN())
	}
	return ep
}

// Role says whether the server is a primary or a replica in recovery.
func (postgresKind) Role(ctx context.Context, n *Node) (string, error) {
	cfg, err := pgx.ParseConfig(n.DSN())
	if err != nil {
		return "", err
	}
	if dial := n.dialer(); dial != nil {
		cfg.DialFunc = dial
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return "", fmt.Errorf("connect to %s: %w", n.Name, err)
	}
	defer conn.Close(context.Background())
	var replica bool
	if err := conn.QueryRow(ctx, "SELECT pg_is_in_recovery()").Scan(&replica); err != nil {
		return "", fmt.Errorf("pg_is_in_recovery on %s: %w", n.Name, err)
	}
	if replica {
		return "replica", nil
	}
	return "primary", nil
}

func (postgresKind) Cheapest() string { return "SELECT 1" }

func (postgresKind) OpenCheapest(ctx context.Context, ep topology.Endpoint) (func(context.Context) error, func(), error) {
	if len(ep.Addrs) == 0 {
		return nil, nil, errors.New("no PostgreSQL DSN to measure")
	}
	conn, err := pgx.Connect(ctx, ep.Addrs[0])
	if err != nil {
		return nil, nil, fmt.Errorf("connect to PostgreSQL: %w", err)
	}
	return func(ctx context.Context) error {
		var one int
		return conn.QueryRow(ctx, "SELECT 1").Scan(&one)
	}, func() { conn.Close(context.Background()) }, nil
}

func (postgresKind) CostUnit() string { return "PostgreSQL transactions" }

// ServedAtSessionEnd: a backend flushes its transaction counts when it
// exits (otherwise up to a second later).
func (postgresKind) ServedAtSessionEnd() bool { return true }

func (postgresKind) Served(ctx context.Context, ep topology.Endpoint, settle bool) (float64, error) {
	if len(ep.Addrs) == 0 {
		return 0, errors.New("no PostgreSQL DSN to count")
	}
	return pgTransactions(ctx, ep.Addrs[0], settle)
}

// pgTransactions reads the committed plus rolled-back transactions of the
// locks' database. It reads them from a connection to another database
// (template1), so that its own statements are not counted. With settle, it
// first waits (a little) for the lock clients' backends to exit: the lock
// clients are closed before the second reading, and a backend flushes its
// counts when it exits, otherwise up to a second later.
func pgTransactions(ctx context.Context, dsn string, settle bool) (float64, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return 0, fmt.Errorf("parse the PostgreSQL DSN: %w", err)
	}
	lockDB := cfg.Database
	cfg.Database = "template1"
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return 0, fmt.Errorf("connect to PostgreSQL's template1 (to count %s's transactions from outside it): %w", lockDB, err)
	}
	defer conn.Close(context.Background())
	for deadline := time.Now().Add(3 * time.Second); settle && time.Now().Before(deadline); {
		var others int
		err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE backend_type = 'client backend' AND datname = $1`, lockDB).Scan(&others)
		if err != nil || others == 0 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	var n float64
	err = conn.QueryRow(ctx, `SELECT (xact_commit + xact_rollback)::float8 FROM pg_stat_database WHERE datname = $1`, lockDB).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("read pg_stat_database: %w", err)
	}
	return n, nil
}

// Describe asks the server for version() and the settings that decide
// what a commit costs it.
func (postgresKind) Describe(ctx context.Context, ep topology.Endpoint) (Description, error) {
	if len(ep.Addrs) == 0 {
		return Description{}, errors.New("no PostgreSQL DSN")
	}
	conn, err := pgx.Connect(ctx, ep.Addrs[0])
	if err != nil {
		return Description{}, fmt.Errorf("connect to PostgreSQL: %w", err)
	}
	defer conn.Close(context.Background())
	d := Description{Settings: map[string]string{}}
	if err := conn.QueryRow(ctx, "SELECT version()").Scan(&d.Version); err != nil {
		return Description{}, fmt.Errorf("SELECT version(): %w", err)
	}
	for _, k := range []string{"fsync", "synchronous_commit", "full_page_writes", "max_connections"} {
		var v string
		if conn.QueryRow(ctx, "SELECT current_setting($1)", k).Scan(&v) == nil {
			d.Settings[k] = v
		}
	}
	return d, nil
}

// OwnServers: a user's PostgreSQL is one DSN.
func (postgresKind) OwnServers() OwnServers {
	return OwnServers{Flag: "pg", Env: "LOCKLAB_PG_DSN", Usage: "PostgreSQL DSN (default: start one)"}
}

// RoundTripCounter: a statement outside a transaction block is one
// transaction, and no lock here opens a block per pair.
func (postgresKind) RoundTripCounter() string {
	return "PostgreSQL pg_stat_database xact_commit + xact_rollback"
}

// ClockShift: PostgreSQL reads the clock in ways the shim does not cover.
func (postgresKind) ClockShift() error {
	return errors.New("PostgreSQL reads the clock in ways the clock shim does not cover")
}

// HolderPartition: a holder cut off its PostgreSQL server keeps a session
// the server ends only when its keepalives say so; the lab has shown and
// reviewed it.
func (postgresKind) HolderPartition(int) error { return nil }

// SilentClient: PostgreSQL ends a silent client's session when its
// connection is given up or an idle timeout ends it. The keep-alive
// (tcp_keepalives_*) gives up an idle connection only: one whose last
// reply is still unacknowledged (a cut a few milliseconds after it, before
// the client's delayed acknowledgement) is retransmitted for about 15
// minutes instead, unless tcp_user_timeout bounds that (pg-keepalives
// declares both; measured, topology/keepalives.go). idle_session_timeout
// and idle_in_transaction_session_timeout end a session that sent nothing,
// whatever its connection's state. A topology that declares neither pair
// leaves a partitioned holder's session, and its advisory and row locks,
// in place for longer than any cut the lab waits out.
func (postgresKind) SilentClient(settings map[string]string) error {
	if settings["tcp_keepalives_idle"] != "" && settings["tcp_user_timeout"] != "" {
		return nil
	}
	if settings["idle_session_timeout"] != "" && settings["idle_in_transaction_session_timeout"] != "" {
		return nil
	}
	return errors.New("PostgreSQL here runs without both a keep-alive and tcp_user_timeout (the kernel's keep-alive probes after two hours idle, " +
		"and a reply in flight is retransmitted for about 15 minutes) and without both idle timeouts, so a partitioned holder keeps its session " +
		"for longer than any cut the lab waits out (holder-partition shows it); pg-keepalives declares them")
}

// SingleServerFaults: the crash between an acquire's steps, the restart
// and the scripted fail-over the single-server scenarios aim at a lock's
// one server are shown and reviewed on a single Redis node's locks only
// (the lab's failpoints between acquire steps are in those locks).
func (postgresKind) SingleServerFaults(int) error {
	return errors.New("it faults the single Redis node a lock runs on")
}

// OneServerSession: a PostgreSQL session lives on its one server.
func (postgresKind) OneServerSession() error { return nil }

// Roles: nothing moves the primary role by itself; the lab promotes the
// replica by script (Promoter).
func (postgresKind) Roles() Roles { return Roles{} }
