package cluster

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/locklab/locklab/cluster/hosts"
	"github.com/locklab/locklab/docker"
	"github.com/locklab/locklab/topology"
)

// MySQLDatabase is the database the lab's MySQL locks keep their tables
// in; the readiness probe creates it, so a server restarted without its
// data serves the locks again as soon as it answers.
const MySQLDatabase = "locklab"

// MySQLOptions configures one MySQL (MariaDB) server.
type MySQLOptions struct {
	Name string // defaults to "mysql"
	// Host runs the server on a host of the lab's own, bound to its address.
	Host *hosts.Host
	// Port, when set, is the port to listen on (fixed by a group's start).
	Port int
	// Settings are the topology's declared server settings, each given to
	// the server as --name=value after the lab's own (so they win).
	Settings map[string]string
	// ReplicaOf makes the server a replica of a MySQL the lab started,
	// following its binary log by GTID until promoted (followPrimary).
	ReplicaOf *Node
}

// innodbLogFileSize keeps the redo log small, as every node's dir is a
// temp dir; the bootstrap and the server must agree on it.
const innodbLogFileSize = "--innodb-log-file-size=16M"

// mysqlPackage is the Debian package that installs the server: MariaDB,
// which Debian ships in MySQL's place and which speaks its protocol.
const mysqlPackage = "mariadb-server"

// mysqlBinaries finds the server and the script that makes an empty data
// directory, under MariaDB's names or MySQL's older ones. The server lives
// in /usr/sbin, which a non-root PATH may lack.
func mysqlBinaries() (server, installDB string, err error) {
	find := func(names ...string) string {
		for _, n := range names {
			if p, err := exec.LookPath(n); err == nil {
				return p
			}
			for _, dir := range mysqlDirs {
				if p := filepath.Join(dir, n); isExecutable(p) {
					return p
				}
			}
		}
		return ""
	}
	server = find("mariadbd", "mysqld")
	installDB = find("mariadb-install-db", "mysql_install_db")
	if server == "" || installDB == "" {
		return "", "", missing("mariadbd and mariadb-install-db", mysqlPackage)
	}
	return server, installDB, nil
}

// mysqlDirs are where Debian puts the binaries, looked in after PATH.
var mysqlDirs = []string{"/usr/sbin", "/usr/bin"}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}

// mysqlCredential is who runs the server when the lab runs as root:
// mariadbd refuses root unless told to run as it, and a lock server running
// as root is not what people run. Debian's package makes a mysql user;
// without it, the user PostgreSQL would run as.
func mysqlCredential() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	if u, err := user.Lookup("mysql"); err == nil {
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), NoSetGroups: true}, nil
	}
	return unprivileged()
}

// MySQLUser is the user the lab's server lets in from anywhere with no
// password (made by mysqlInitSQL); the lab and the locks connect as it.
const MySQLUser = "locklab"

// mysqlDSN is a go-sql-driver DSN for the lab's server at addr.
func mysqlDSN(addr, db string) string {
	cfg := mysql.NewConfig()
	cfg.User = MySQLUser
	cfg.Net = "tcp"
	cfg.Addr = addr
	cfg.DBName = db
	return cfg.FormatDSN()
}

// MySQLDSN returns the DSN of the lab's database on a MySQL node.
func (n *Node) MySQLDSN() string { return mysqlDSN(n.Addr, MySQLDatabase) }

// StartMySQL makes an empty data directory with mariadb-install-db in a
// temp dir and starts mariadbd on a free loopback port (or its host's
// address), its socket, pid file and data all in that dir, returning once
// a client's query answers.
func StartMySQL(ctx context.Context, opts MySQLOptions) (*Node, error) {
	if ContainerMode() {
		return startMySQLContainer(ctx, opts)
	}
	server, installDB, err := mysqlBinaries()
	if err != nil {
		return nil, err
	}
	cred, err := mysqlCredential()
	if err != nil {
		return nil, err
	}
	if opts.Name == "" {
		opts.Name = "mysql"
	}
	bind, port, err := listenOn(opts.Host, opts.Port)
	if err != nil {
		return nil, err
	}
	dir, err := newNodeDir(opts.Name)
	if err != nil {
		return nil, err
	}
	n := &Node{Kind: topology.MySQL, Name: opts.Name, Addr: net.JoinHostPort(bind, strconv.Itoa(port)), Dir: dir, Host: opts.Host}
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
	// Both the bootstrap and the server read no option file (--no-defaults
	// must come first): the machine's /etc/mysql settings are not the lab's.
	// Temp files go under the node's dir too: in the shared /tmp, a
	// bootstrap running beside another server once failed deleting its own
	// temp table ("Error on delete of '/tmp/#sql-temptable-…'").
	tmp := filepath.Join(dir, "tmp")
	install := func() error {
		if _, err := os.Stat(filepath.Join(data, "mysql")); err == nil {
			return nil // a restart that keeps its data
		}
		if err := chown(); err != nil {
			return err
		}
		return copyOfBootstrap("mysql "+installDB, "mysql", data, cred, func(into string) error {
			tmp := filepath.Join(filepath.Dir(into), "tmp")
			if err := os.Mkdir(tmp, 0o700); err != nil {
				return fmt.Errorf("%s: %w", filepath.Base(installDB), err)
			}
			if cred != nil {
				if err := os.Chown(tmp, int(cred.Uid), int(cred.Gid)); err != nil {
					return fmt.Errorf("%s: %w", filepath.Base(installDB), err)
				}
			}
			args := []string{"--no-defaults", "--datadir=" + into, "--tmpdir=" + tmp, innodbLogFileSize,
				"--skip-test-db", "--skip-name-resolve", "--auth-root-authentication-method=normal"}
			cmd := exec.Command(installDB, args...)
			asServerUser(cmd)
			if out, err := cmd.CombinedOutput(); err != nil {
				return fmt.Errorf("%s: %w\n%s", filepath.Base(installDB), err, out)
			}
			return nil
		})
	}
	if err := os.Mkdir(tmp, 0o700); err != nil {
		n.Stop()
		return nil, fmt.Errorf("make %s: %w", tmp, err)
	}
	initFile := filepath.Join(dir, "init.sql")
	if err := os.WriteFile(initFile, []byte(docker.MySQLInitSQL), 0o644); err != nil {
		n.Stop()
		return nil, fmt.Errorf("write %s: %w", initFile, err)
	}
	files := mysqlFiles{data: data, tmp: tmp, socket: filepath.Join(dir, "mysqld.sock"),
		pidFile: filepath.Join(dir, "mysqld.pid"), initFile: initFile}
	launch := func(ctx context.Context, n *Node) (*Process, error) {
		if err := install(); err != nil {
			return nil, err
		}
		cmd := exec.Command(server, mysqlArgs(files, bind, port, opts.Settings)...)
		asServerUser(cmd)
		return n.spawnLogged(cmd)
	}
	n.ready = mysqlReady
	wipe := func(n *Node) error { return os.RemoveAll(data) }
	if err := chown(); err != nil {
		n.Stop()
		return nil, fmt.Errorf("chown %s: %w", dir, err)
	}
	if err := n.startProcess(ctx, launch, wipe); err != nil {
		n.Stop()
		return nil, err
	}
	if opts.ReplicaOf != nil {
		if err := followPrimary(ctx, n, opts.ReplicaOf); err != nil {
			n.Stop()
			return nil, err
		}
	}
	return n, nil
}

// mysqlFiles are where one server keeps its files.
type mysqlFiles struct{ data, tmp, socket, pidFile, initFile string }

// mysqlArgs is the server's command line after the binary, the same for a
// local process and a container: its files, where it listens, the lab's
// settings, and then the topology's, so that they win.
func mysqlArgs(f mysqlFiles, bind string, port int, settings map[string]string) []string {
	// No option file is read (--no-defaults must come first): the
	// machine's /etc/mysql settings are not the lab's.
	args := []string{"--no-defaults", "--datadir=" + f.data, "--tmpdir=" + f.tmp, innodbLogFileSize,
		"--port=" + strconv.Itoa(port),
		"--bind-address=" + bind,
		"--socket=" + f.socket,
		"--pid-file=" + f.pidFile,
		// The lab's user, made at every start (a restart without data
		// needs it again): any client may connect as it, from anywhere,
		// with no password, as PostgreSQL's trust lets it in. Grants
		// stay on rather than skipped: with --skip-grant-tables the
		// server no longer records a session's client address, by which
		// an operator (and the lab's session faults) finds a client's
		// sessions.
		"--init-file=" + f.initFile,
		"--skip-name-resolve",
		"--max-connections=300",
		// The lab measures locking, not the disk: a commit is not
		// flushed (as PostgreSQL runs with fsync=off).
		"--innodb-flush-log-at-trx-commit=0",
		"--innodb-doublewrite=0",
		"--innodb-buffer-pool-size=64M",
		"--skip-log-bin"}
	return append(args, settingsArgs(settings, "--", "=")...)
}

// startMySQLContainer is StartMySQL in container mode: the image's data
// dir, made when the image was built, and the same command line as a
// local server's. Replicas stay local (mysqlKind.Replicas says why).
func startMySQLContainer(ctx context.Context, opts MySQLOptions) (*Node, error) {
	if opts.Name == "" {
		opts.Name = "mysql"
	}
	if opts.ReplicaOf != nil {
		return nil, fmt.Errorf("%s: %w", opts.Name, mysqlKind{}.Replicas())
	}
	if err := containerCannot(opts.Name, opts.Host); err != nil {
		return nil, err
	}
	const root = "/var/lib/locklab-mysql"
	files := mysqlFiles{data: root + "/data", tmp: root + "/tmp", socket: root + "/mysqld.sock",
		pidFile: root + "/mysqld.pid", initFile: "/etc/locklab-mysql-init.sql"}
	return startContainer(ctx, containerSpec{kind: topology.MySQL, name: opts.Name, server: "mysql", port: 3306,
		cmd: mysqlArgs(files, "0.0.0.0", 3306, opts.Settings), ready: mysqlReady})
}

// mysqlOpen opens one connection to the server at addr, through the
// node's network when it is on a host.
func mysqlOpen(ctx context.Context, n *Node, db string) (*sql.Conn, func(), error) {
	cfg, err := mysql.ParseDSN(mysqlDSN(n.Addr, db))
	if err != nil {
		return nil, nil, err
	}
	cfg.Timeout = 2 * time.Second
	// The probe's errors are returned; the driver's own log of them would
	// print one line per refused probe (a container's published port
	// accepts and then drops a connection until its server listens).
	cfg.Logger = &mysql.NopLogger{}
	if dial := n.dialer(); dial != nil {
		cfg.DialFunc = dial
	}
	return mysqlConn(ctx, cfg)
}

// mysqlConn opens a one-connection pool and takes its connection: the
// lab's probes want one session, not database/sql's pool.
func mysqlConn(ctx context.Context, cfg *mysql.Config) (*sql.Conn, func(), error) {
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, nil, err
	}
	db := sql.OpenDB(connector)
	db.SetMaxOpenConns(1)
	c, err := db.Conn(ctx)
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	return c, func() { c.Close(); db.Close() }, nil
}

// mysqlReady is the readiness probe: the server answers a query, and the
// locks' database exists (made here, so that a restart without data makes
// it again before any client is let back).
func mysqlReady(ctx context.Context, n *Node) error {
	c, done, err := mysqlOpen(ctx, n, "")
	if err != nil {
		return err
	}
	defer done()
	_, err = c.ExecContext(ctx, "CREATE DATABASE IF NOT EXISTS "+MySQLDatabase)
	return err
}

// mysqlKind is MySQL's home.
type mysqlKind struct{}

func init() { RegisterKind(mysqlKind{}) }

func (mysqlKind) Kind() topology.Kind { return topology.MySQL }
func (mysqlKind) Package() string     { return mysqlPackage }

func (mysqlKind) Image() string { return "mysql" }

// Replicas: the lab starts a replica on a copy of its primary's data dir on
// this machine, and the fail-over moves the primary's address between the
// lab's hosts, which container mode does not have; so replicas start as
// local processes only.
func (mysqlKind) Replicas() error {
	if ContainerMode() {
		return errMySQLReplicaInContainers
	}
	return nil
}

func (mysqlKind) Start(ctx context.Context, members []Member) ([]*Node, error) {
	var out []*Node
	for _, m := range members {
		n, err := StartMySQL(ctx, MySQLOptions{Name: m.Name, Host: m.Host, Port: m.Port, Settings: m.Settings, ReplicaOf: m.ReplicaOf})
		if err != nil {
			stopNodes(out)
			return nil, err
		}
		out = append(out, n)
	}
	return out, nil
}

// Endpoint gives clients each node's DSN (a lock uses the first).
// Ensembles: the lab runs MySQL as one server, or a primary and a replica
// of it, never as a group of members that know each other.
func (mysqlKind) Ensembles() error {
	return errors.New("the lab starts MySQL as one server, or a primary and its replica, only")
}

func (mysqlKind) Endpoint(nodes []*Node) topology.Endpoint {
	ep := topology.Endpoint{Kind: topology.MySQL}
	for _, n := range nodes {
		ep.Addrs = append(ep.Addrs, n.MySQLDSN())
	}
	return ep
}

// Role asks the server whether it replicates from another: a replica
// shows a row in SHOW REPLICA STATUS, a primary none.
func (mysqlKind) Role(ctx context.Context, n *Node) (string, error) {
	c, done, err := mysqlOpen(ctx, n, "")
	if err != nil {
		return "", fmt.Errorf("connect to %s: %w", n.Name, err)
	}
	defer done()
	rows, err := c.QueryContext(ctx, "SHOW REPLICA STATUS")
	if err != nil {
		return "", fmt.Errorf("SHOW REPLICA STATUS on %s: %w", n.Name, err)
	}
	defer rows.Close()
	if rows.Next() {
		return "replica", nil
	}
	if err := rows.Err(); err != nil {
		return "", fmt.Errorf("SHOW REPLICA STATUS on %s: %w", n.Name, err)
	}
	return "primary", nil
}

func (mysqlKind) Cheapest() string { return "SELECT 1" }

func (mysqlKind) OpenCheapest(ctx context.Context, ep topology.Endpoint) (func(context.Context) error, func(), error) {
	if len(ep.Addrs) == 0 {
		return nil, nil, errors.New("no MySQL DSN to measure")
	}
	cfg, err := mysql.ParseDSN(ep.Addrs[0])
	if err != nil {
		return nil, nil, fmt.Errorf("parse the MySQL DSN: %w", err)
	}
	c, done, err := mysqlConn(ctx, cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("connect to MySQL: %w", err)
	}
	return func(ctx context.Context) error {
		var one int
		return c.QueryRowContext(ctx, "SELECT 1").Scan(&one)
	}, done, nil
}

func (mysqlKind) CostUnit() string { return "MySQL requests" }

// ServedAtSessionEnd: Served waits for every other session to end before
// it reads Questions.
func (mysqlKind) ServedAtSessionEnd() bool { return true }

// Served reads how many requests the lock clients have sent the server:
// its Questions counter plus its Com_stmt_prepare, less the requests of
// the lab's own readings. Questions leaves out a prepared statement's
// COM_STMT_PREPARE, yet the client waits for its answer as for any
// statement's: go-sql-driver prepares, executes and closes every
// statement with arguments unless the DSN says interpolateParams, so
// Questions alone counted such a statement as one round trip where it
// costs two (COM_STMT_CLOSE is answered by nothing, and counted by
// neither).
// A reading's session counts its own statements while it lasts (taken off
// here at once), and once it has ended they are everybody's; so the kind
// keeps a ledger of what its readings sent to each server and takes that
// off too. With settle, it first waits (a little) for the lock clients'
// connections to end, as PostgreSQL's count does.
func (mysqlKind) Served(ctx context.Context, ep topology.Endpoint, settle bool) (float64, error) {
	if len(ep.Addrs) == 0 {
		return 0, errors.New("no MySQL DSN to count")
	}
	cfg, err := mysql.ParseDSN(ep.Addrs[0])
	if err != nil {
		return 0, fmt.Errorf("parse the MySQL DSN: %w", err)
	}
	c, done, err := mysqlConn(ctx, cfg)
	if err != nil {
		return 0, fmt.Errorf("connect to MySQL: %w", err)
	}
	defer done()
	for deadline := time.Now().Add(3 * time.Second); settle && time.Now().Before(deadline); {
		var others int
		err := c.QueryRowContext(ctx, `SELECT COUNT(*) FROM information_schema.PROCESSLIST
			WHERE ID <> CONNECTION_ID() AND COMMAND NOT IN ('Daemon', 'Binlog Dump')`).Scan(&others)
		if err != nil || others == 0 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	var global, own float64
	err = c.QueryRowContext(ctx, `SELECT
		(SELECT SUM(VARIABLE_VALUE) FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME IN ('QUESTIONS', 'COM_STMT_PREPARE')),
		(SELECT SUM(VARIABLE_VALUE) FROM information_schema.SESSION_STATUS WHERE VARIABLE_NAME IN ('QUESTIONS', 'COM_STMT_PREPARE'))`).Scan(&global, &own)
	if err != nil {
		return 0, fmt.Errorf("read MySQL's Questions and Com_stmt_prepare: %w", err)
	}
	readingsMu.Lock()
	defer readingsMu.Unlock()
	earlier := readings[cfg.Addr]
	// MariaDB counts a COM_QUIT as a question, so the one that ends this
	// reading's session counts too.
	readings[cfg.Addr] = earlier + own + 1
	return global - own - earlier, nil
}

// readings are the statements the lab's own Served readings sent, by
// server address.
var (
	readingsMu sync.Mutex
	readings   = map[string]float64{}
)

// Describe asks the server for VERSION() and the settings that decide
// what a commit costs it.
func (mysqlKind) Describe(ctx context.Context, ep topology.Endpoint) (Description, error) {
	if len(ep.Addrs) == 0 {
		return Description{}, errors.New("no MySQL DSN")
	}
	cfg, err := mysql.ParseDSN(ep.Addrs[0])
	if err != nil {
		return Description{}, fmt.Errorf("parse the MySQL DSN: %w", err)
	}
	c, done, err := mysqlConn(ctx, cfg)
	if err != nil {
		return Description{}, fmt.Errorf("connect to MySQL: %w", err)
	}
	defer done()
	d := Description{Settings: map[string]string{}}
	if err := c.QueryRowContext(ctx, "SELECT VERSION()").Scan(&d.Version); err != nil {
		return Description{}, fmt.Errorf("SELECT VERSION(): %w", err)
	}
	for _, k := range []string{"innodb_flush_log_at_trx_commit", "sync_binlog", "max_connections"} {
		var v string
		if c.QueryRowContext(ctx, "SELECT @@"+k).Scan(&v) == nil {
			d.Settings[k] = v
		}
	}
	return d, nil
}

// OwnServers: a user's MySQL is one DSN.
func (mysqlKind) OwnServers() OwnServers {
	return OwnServers{Flag: "mysql", Env: "LOCKLAB_MYSQL_DSN", Usage: "MySQL DSN (default: start one)"}
}

// RoundTripCounter: Questions leaves out a prepared statement's prepare,
// which costs a round trip too (Served).
func (mysqlKind) RoundTripCounter() string { return "MariaDB Questions + Com_stmt_prepare" }

// ClockShift: the server's lock and session timeouts are not read through
// the calls the shim moves.
func (mysqlKind) ClockShift() error {
	return errors.New("the lab starts MySQL without the clock shim; its lock and session timeouts are not what a clock jump tests")
}

// HolderPartition: a holder cut off its MySQL server keeps its session,
// and the named locks and row locks bound to it, until the server's
// wait_timeout ends it (SilentClient): past the cut on the single
// topology, within it on mysql-wait-timeout. The lab shows both
// (holder-partition, holder-partition-long) and reviews them.
func (mysqlKind) HolderPartition(int) error { return nil }

// SilentClient: MariaDB ends a session that has sent no command for
// wait_timeout (eight hours by default), whatever its connection's state;
// that is what ends a partitioned holder's session. Its TCP keep-alive
// (tcp_keepalive_time, _interval, _probes) gives up an idle connection
// only, and MariaDB has no user timeout: measured with the keep-alive
// alone (1 s, 1 s, 2 probes) under an 8 s cut, mysql-for-update's holder
// kept its row lock in 2 runs of 3, the cut having struck while the
// grant's reply was still unacknowledged, so the kernel retransmitted it
// instead of probing. A topology that declares no wait_timeout leaves the
// session, its named locks and its row locks, in place for longer than
// any cut the lab waits out.
func (mysqlKind) SilentClient(settings map[string]string) error {
	return declaresAny(settings, "MySQL", "wait_timeout's eight hours (its TCP keep-alive gives up an idle connection only, never one with a reply in flight)",
		"wait_timeout")
}

// SingleServerFaults: the crash between an acquire's steps, the restart
// and the scripted fail-over the single-server scenarios aim at a lock's
// one server are shown and reviewed on a single Redis node's locks only
// (the lab's failpoints between acquire steps are in those locks).
func (mysqlKind) SingleServerFaults(int) error {
	return errors.New("it faults the single Redis node a lock runs on")
}

// OneServerSession: a MySQL session lives on its one server.
func (mysqlKind) OneServerSession() error { return nil }

// Roles: nothing moves the primary role by itself; the lab promotes the
// replica by script (Promoter).
func (mysqlKind) Roles() Roles { return Roles{} }
