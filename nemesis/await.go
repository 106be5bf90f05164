package nemesis

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/locklab/locklab/cluster"
)

// Await is what a step waits for on the server it strikes, once its
// trigger has come and its target is resolved, and before it strikes: a
// state of the servers the fault's meaning needs and no moment can
// promise (a replica acknowledges on its own clock). Empty: the step
// strikes at once.
type Await string

// ReplicaAcked waits until a replica of the master the step strikes has
// acknowledged the master's replication offset as the wait began, with
// the holder stopped at its failpoint right after its grant: the master
// then counts the grant as replicated, and a WAIT asked of it later is
// answered from that count, even after the replica was cut off without a
// word (sentinel-split-after-ack). The offset is read when the wait
// begins, a few milliseconds after the holder stopped: it covers the
// grant, and anything written since only makes the wait longer.
const ReplicaAcked Await = "replica-acked"

// ReplicaAckBound bounds the wait for a replica's acknowledgement. A
// replica sends REPLCONF ACK once a second, so a healthy one acknowledges
// any offset within about a second; three seconds are three of its ticks,
// for a loaded machine. Past it the run fails: its fault would strike a
// grant no replica had acknowledged, sentinel-split-at-grant's case and
// not the one the schedule asks for.
const ReplicaAckBound = 3 * time.Second

// awaitPoll is how often the master is asked while the step waits: the
// fault strikes within that of the acknowledgement, long before the next
// one a second later could matter.
const awaitPoll = 10 * time.Millisecond

// Awaits lists the values Step.Await can take.
var Awaits = []Await{ReplicaAcked}

// AwaitOn waits for a on server (the step's target, resolved by the
// engine, which hands over the node itself so the wait needs nothing more
// of the running system) and returns what it awaited and saw, for the
// fault's record; an error when it did not come within its bound.
func AwaitOn(ctx context.Context, a Await, server *cluster.Node) (string, error) {
	switch a {
	case ReplicaAcked:
		w, err := cluster.WatchReplication(server)
		if err != nil {
			return "", fmt.Errorf("await %s: %w", a, err)
		}
		defer w.Close()
		return awaitReplicaAck(ctx, w.Read, server.Name, ReplicaAckBound, awaitPoll)
	}
	return "", fmt.Errorf("unknown await %q; valid: %v", a, Awaits)
}

// awaitReplicaAck reads server's replication offset, then reads again
// every poll until some replica has acknowledged it, for at most bound.
func awaitReplicaAck(ctx context.Context, read func(context.Context) (cluster.Replication, error), server string,
	bound, poll time.Duration) (string, error) {
	start := time.Now()
	r, err := read(ctx)
	if err != nil {
		return "", fmt.Errorf("await %s: %w", ReplicaAcked, err)
	}
	if r.Role != "master" {
		// The role was resolved a moment ago; a fail-over in between
		// would make the fault strike something else than it means to.
		return "", fmt.Errorf("await %s: %s is a %s now, not the master", ReplicaAcked, server, r.Role)
	}
	want := r.Offset
	for {
		if a, ok := r.AckedBy(want); ok {
			return fmt.Sprintf("%s: %s's master_repl_offset was %d when the wait began; replica %s acknowledged %d after %v",
				ReplicaAcked, server, want, a.Addr, a.Offset, time.Since(start).Round(time.Millisecond)), nil
		}
		if time.Since(start) >= bound {
			return "", fmt.Errorf("await %s: no replica of %s acknowledged its offset %d within %v (its replicas: %s)",
				ReplicaAcked, server, want, bound, replicasSeen(r.Replicas))
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("await %s on %s: %w", ReplicaAcked, server, ctx.Err())
		case <-time.After(poll):
		}
		if r, err = read(ctx); err != nil {
			return "", fmt.Errorf("await %s: %w", ReplicaAcked, err)
		}
	}
}

// replicasSeen says what the master last said of each replica, for an
// error that must say why none would do.
func replicasSeen(rs []cluster.ReplicaAck) string {
	if len(rs) == 0 {
		return "none connected"
	}
	var out []string
	for _, a := range rs {
		out = append(out, fmt.Sprintf("%s %s at %d, lag %ds", a.Addr, a.State, a.Offset, a.Lag))
	}
	return strings.Join(out, "; ")
}

// ReplicatedMasterBound bounds the wait for a master with a replica online
// after a fail-over's heal. Sentinel points the other replicas at the
// promoted master within seconds (the history of a run that missed showed
// 3.5 s with none online); a replica then syncs in milliseconds here.
// Past the bound the run fails: the holder would go on into a group that
// cannot show what the schedule asks.
const ReplicatedMasterBound = 30 * time.Second

// AwaitReplicatedMaster waits until one of servers says it is the master
// and counts a replica online (ReplicatedMaster; OnceReplicated), and returns what it
// saw, for the fault's record; an error when that did not come within
// bound.
func AwaitReplicatedMaster(ctx context.Context, servers []*cluster.Node, bound time.Duration) (string, error) {
	// The Redis servers only: a sentinel watches the offsets and has none.
	servers = slices.DeleteFunc(slices.Clone(servers), func(n *cluster.Node) bool { return !cluster.ReportsReplication(n) })
	if len(servers) == 0 {
		return "", errors.New("await a master with a replica online: no lock server reports replication")
	}
	got, waited, err := awaitReplication(ctx, servers, bound, "a master with a replica online", func(seen map[string]cluster.Replication) (string, bool) {
		master, replica, ok := ReplicatedMaster(seen)
		return fmt.Sprintf("%s, the master, counted replica %s online", master, replica), ok
	})
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%s, %v after the wait for it began", got, waited.Round(time.Millisecond)), nil
}

// awaitReplication reads what servers say of their replication, each over
// one connection held for the wait, every awaitPoll, until decide finds
// what the caller waits for (what, for the errors) and says it; it returns
// that and how long it took, or an error naming what each said once bound
// has passed. A server that cannot be read yet (down, restarting) is left
// out of seen: the others may already decide.
func awaitReplication(ctx context.Context, servers []*cluster.Node, bound time.Duration, what string,
	decide func(seen map[string]cluster.Replication) (string, bool)) (string, time.Duration, error) {
	var watches []*cluster.ReplicationWatch
	defer func() {
		for _, w := range watches {
			w.Close()
		}
	}()
	for _, n := range servers {
		w, err := cluster.WatchReplication(n)
		if err != nil {
			return "", 0, fmt.Errorf("await %s: %w", what, err)
		}
		watches = append(watches, w)
	}
	start := time.Now()
	for {
		seen := map[string]cluster.Replication{}
		var unread []string
		for i, w := range watches {
			r, err := w.Read(ctx)
			if err != nil {
				unread = append(unread, servers[i].Name+": "+err.Error())
				continue
			}
			seen[servers[i].Name] = r
		}
		if got, ok := decide(seen); ok {
			return got, time.Since(start), nil
		}
		if time.Since(start) >= bound {
			return "", 0, fmt.Errorf("no lock server was %s within %v (%s; unread: %v)", what, bound, describeRoles(seen), unread)
		}
		select {
		case <-ctx.Done():
			return "", 0, fmt.Errorf("await %s: %w", what, ctx.Err())
		case <-time.After(awaitPoll):
		}
	}
}

// ReplicatedMaster returns the one server of seen that says it is the
// master and counts a replica online, and that replica; ok is false while
// none does, or two do (two groups, which no schedule here means). A
// restarted master that still says master with no replica is passed over:
// Sentinel makes it a replica only once it has said master for 8 s
// (SENTINEL_PUBLISH_PERIOD times four), and the clients, which ask
// Sentinel, reach the promoted one meanwhile.
func ReplicatedMaster(seen map[string]cluster.Replication) (master, replica string, ok bool) {
	for name, r := range seen {
		if r.Role != "master" {
			continue
		}
		for _, a := range r.Replicas {
			if a.State != "online" {
				continue
			}
			if master != "" && master != name {
				return "", "", false
			}
			master, replica = name, a.Addr
			break
		}
	}
	return master, replica, master != ""
}

// describeRoles says what each server said, for an error that must say
// why none would do.
func describeRoles(seen map[string]cluster.Replication) string {
	var out []string
	for name, r := range seen {
		out = append(out, fmt.Sprintf("%s %s with replicas %s", name, r.Role, replicasSeen(r.Replicas)))
	}
	slices.Sort(out)
	return strings.Join(out, "; ")
}
