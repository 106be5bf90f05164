package cluster

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// BehindReporter is a server kind that can say how far a replica is
// behind its master or primary, in the positions the servers themselves
// keep, so a fault that fails a master over records what the replica it
// promoted had when the master died instead of assuming it: the master's
// write position read when the fault strikes, the replica's own when it is
// promoted.
type BehindReporter interface {
	// WritePosition reads how far primary has written: the position a
	// replica must have reached to hold everything written so far.
	WritePosition(ctx context.Context, primary *Node) (Position, error)
	// HeldPosition reads how far replica holds its primary's stream: what
	// it has received while it follows, and once promoted, what it had
	// when it stopped following (the servers keep both).
	HeldPosition(ctx context.Context, replica *Node) (Position, error)
}

// Position is a server's replication position as the server keeps it.
type Position struct {
	Server string
	// Said is the position as the server gave it, under its own name
	// (master_repl_offset 5238, WAL insert 0/3000148, GTID 0-1-57).
	Said string
	// Unit is what the position counts: bytes of the replication stream,
	// or transactions.
	Unit string
	// at is the position on each of the server's streams: one for Redis
	// and PostgreSQL, one per GTID domain for MariaDB.
	at map[string]int64
}

// Lacks is how much of master's position p lacks, in master's unit: 0
// when p has all of it. Positions of the same stream only compare: a
// replica's against its own master's.
func (p Position) Lacks(master Position) int64 {
	var n int64
	for stream, want := range master.at {
		if have := p.at[stream]; have < want {
			n += want - have
		}
	}
	return n
}

// reporter is kind's BehindReporter, or an error saying kind has none.
func reporter(n *Node) (BehindReporter, error) {
	k, err := KindOf(n.Kind)
	if err != nil {
		return nil, err
	}
	r, ok := k.(BehindReporter)
	if !ok {
		return nil, fmt.Errorf("%s is a %s server, which reports no replication positions", n.Name, n.Kind)
	}
	return r, nil
}

// WritePosition is BehindReporter.WritePosition for primary's kind.
func WritePosition(ctx context.Context, primary *Node) (Position, error) {
	r, err := reporter(primary)
	if err != nil {
		return Position{}, err
	}
	return r.WritePosition(ctx, primary)
}

// HeldPosition is BehindReporter.HeldPosition for replica's kind.
func HeldPosition(ctx context.Context, replica *Node) (Position, error) {
	r, err := reporter(replica)
	if err != nil {
		return Position{}, err
	}
	return r.HeldPosition(ctx, replica)
}

// Behind reads primary's write position and replica's, as one note for
// the history.
func Behind(ctx context.Context, primary, replica *Node) (string, error) {
	w, err := WritePosition(ctx, primary)
	if err != nil {
		return "", err
	}
	h, err := HeldPosition(ctx, replica)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%s at %s; %s at %s: %d %s behind", primary.Name, w.Said, replica.Name, h.Said, h.Lacks(w), w.Unit), nil
}

// Redis: the master's master_repl_offset, the length of its replication
// stream. The lab's Redis kinds report them alike.
func (redisKind) WritePosition(ctx context.Context, primary *Node) (Position, error) {
	r, err := redisKind{}.Replication(ctx, primary)
	if err != nil {
		return Position{}, err
	}
	if r.Role != "master" {
		return Position{}, fmt.Errorf("%s is a %s, not a master", primary.Name, r.Role)
	}
	return redisOffset(primary.Name, "master_repl_offset", r.Offset), nil
}

// HeldPosition: a replica's own processed offset (slave_repl_offset); a
// replica since promoted keeps the offset at which it stopped following
// as second_repl_offset, one past it (Redis shifts its replication id
// there, so a replica of its old master can still resume from it), which
// no write after the promotion moves.
func (redisKind) HeldPosition(ctx context.Context, replica *Node) (Position, error) {
	r, err := redisKind{}.Replication(ctx, replica)
	if err != nil {
		return Position{}, err
	}
	switch {
	case r.Role == "replica":
		return redisOffset(replica.Name, "slave_repl_offset", r.ReplicaOffset), nil
	case r.PromotedAt >= 0:
		return redisOffset(replica.Name, "second_repl_offset-1", r.PromotedAt), nil
	}
	return Position{}, fmt.Errorf("%s is a master that never followed one (no second_repl_offset)", replica.Name)
}

func redisOffset(server, name string, off int64) Position {
	return Position{Server: server, Said: fmt.Sprintf("%s %d", name, off), Unit: "bytes", at: map[string]int64{"": off}}
}

func (redisClusterKind) WritePosition(ctx context.Context, primary *Node) (Position, error) {
	return redisKind{}.WritePosition(ctx, primary)
}

func (redisClusterKind) HeldPosition(ctx context.Context, replica *Node) (Position, error) {
	return redisKind{}.HeldPosition(ctx, replica)
}

// PostgreSQL's WAL pages each begin with a header (24 bytes; 40 on the
// first page of a segment) that no record ends in.
const (
	walPage          = 8192
	walSegment       = 16 << 20
	walPageHeader    = 24
	walSegmentHeader = 40
)

// WritePosition: the primary's WAL insert position. The insert position,
// not the write position: with synchronous_commit off a commit returns
// before its WAL is written, and the write position then stops short of
// the grant the fault is about. Right after a page begins the insert
// position lies past the page's header, where no record ends and which a
// replica that has every record has not received: it is taken back to
// the page's start, where the last record ended.
func (postgresKind) WritePosition(ctx context.Context, primary *Node) (Position, error) {
	pc, err := controlConn(ctx, primary)
	if err != nil {
		return Position{}, err
	}
	defer pc.Close(context.Background())
	var wrote string
	if err := pc.QueryRow(ctx, "SELECT pg_current_wal_insert_lsn()::text").Scan(&wrote); err != nil {
		return Position{}, fmt.Errorf("the WAL position on %s: %w", primary.Name, err)
	}
	lsn, err := parseLSN(wrote)
	if err != nil {
		return Position{}, fmt.Errorf("the WAL position on %s: %w", primary.Name, err)
	}
	switch {
	case lsn%walPage == walPageHeader:
		lsn -= walPageHeader
	case lsn%walSegment == walSegmentHeader:
		lsn -= walSegmentHeader
	}
	return Position{Server: primary.Name, Said: "WAL insert " + wrote, Unit: "bytes", at: map[string]int64{"": lsn}}, nil
}

// HeldPosition: the WAL the replica has received and flushed
// (pg_last_wal_receive_lsn), which after a promotion stays where
// recovery left it, and what it replayed, for the note.
func (postgresKind) HeldPosition(ctx context.Context, replica *Node) (Position, error) {
	rc, err := controlConn(ctx, replica)
	if err != nil {
		return Position{}, err
	}
	defer rc.Close(context.Background())
	var received, replayed *string
	if err := rc.QueryRow(ctx, "SELECT pg_last_wal_receive_lsn()::text, pg_last_wal_replay_lsn()::text").Scan(&received, &replayed); err != nil {
		return Position{}, fmt.Errorf("the received WAL position on %s: %w", replica.Name, err)
	}
	if received == nil {
		return Position{}, fmt.Errorf("%s has received no WAL by streaming", replica.Name)
	}
	lsn, err := parseLSN(*received)
	if err != nil {
		return Position{}, fmt.Errorf("the received WAL position on %s: %w", replica.Name, err)
	}
	return Position{Server: replica.Name, Said: fmt.Sprintf("WAL received %s, replayed %s", *received, orNone(replayed)),
		Unit: "bytes", at: map[string]int64{"": lsn}}, nil
}

// parseLSN reads a PostgreSQL WAL position (16/B374D848) as a byte count.
func parseLSN(s string) (int64, error) {
	hi, lo, ok := strings.Cut(s, "/")
	if !ok {
		return 0, fmt.Errorf("LSN %q: no slash", s)
	}
	h, err := strconv.ParseUint(hi, 16, 32)
	if err != nil {
		return 0, fmt.Errorf("LSN %q: %w", s, err)
	}
	l, err := strconv.ParseUint(lo, 16, 32)
	if err != nil {
		return 0, fmt.Errorf("LSN %q: %w", s, err)
	}
	return int64(h<<32 | l), nil
}

// WritePosition: the primary's binary log position (@@gtid_binlog_pos),
// which a commit has reached when it returns.
func (mysqlKind) WritePosition(ctx context.Context, primary *Node) (Position, error) {
	pc, done, err := mysqlOpen(ctx, primary, "")
	if err != nil {
		return Position{}, fmt.Errorf("connect to %s: %w", primary.Name, err)
	}
	defer done()
	var wrote string
	if err := pc.QueryRowContext(ctx, "SELECT @@gtid_binlog_pos").Scan(&wrote); err != nil {
		return Position{}, fmt.Errorf("the binary log position on %s: %w", primary.Name, err)
	}
	return gtidPosition(primary.Name, "GTID "+orEmpty(wrote), wrote)
}

// HeldPosition: while the replica follows, what its IO thread has
// received (Gtid_IO_Pos); once promoted (RESET SLAVE ALL forgets that),
// what it applied (@@gtid_slave_pos), which the lab's promotion brings to
// all it had received before it ended replication.
func (mysqlKind) HeldPosition(ctx context.Context, replica *Node) (Position, error) {
	rc, done, err := mysqlOpen(ctx, replica, "")
	if err != nil {
		return Position{}, fmt.Errorf("connect to %s: %w", replica.Name, err)
	}
	defer done()
	var applied string
	if err := rc.QueryRowContext(ctx, "SELECT @@gtid_slave_pos").Scan(&applied); err != nil {
		return Position{}, fmt.Errorf("the applied position on %s: %w", replica.Name, err)
	}
	st, following, err := slaveStatus(ctx, rc)
	if err != nil {
		return Position{}, fmt.Errorf("SHOW SLAVE STATUS on %s: %w", replica.Name, err)
	}
	if following {
		received := st["Gtid_IO_Pos"]
		return gtidPosition(replica.Name, fmt.Sprintf("GTID received %s, applied %s", orEmpty(received), orEmpty(applied)), received)
	}
	return gtidPosition(replica.Name, "GTID applied "+orEmpty(applied)+" (promoted)", applied)
}

// gtidPosition reads a MariaDB GTID list (domain-server-sequence, comma
// separated) as the sequence reached in each domain.
func gtidPosition(server, said, list string) (Position, error) {
	p := Position{Server: server, Said: said, Unit: "transactions", at: map[string]int64{}}
	for _, g := range strings.Split(list, ",") {
		g = strings.TrimSpace(g)
		if g == "" {
			continue
		}
		parts := strings.Split(g, "-")
		if len(parts) != 3 {
			return Position{}, fmt.Errorf("GTID %q on %s: not domain-server-sequence", g, server)
		}
		seq, err := strconv.ParseInt(parts[2], 10, 64)
		if err != nil {
			return Position{}, fmt.Errorf("GTID %q on %s: %w", g, server, err)
		}
		p.at[parts[0]] = max(p.at[parts[0]], seq)
	}
	return p, nil
}
