package cluster

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// WriteProbe asks one Redis server, from the lab's vantage point (which no
// network fault cuts), to take a write of its own: the server's answer,
// not a client's, says whether a master cut off its replicas still
// accepts writes (with min-replicas-to-write, it refuses them with
// NOREPLICAS once no replica has acknowledged within the lag bound).
type WriteProbe struct {
	name string
	c    *redis.Client
	n    int
}

// ProbeKey is the key a WriteProbe writes: none of the locks' keys, and
// it expires by itself, so it never outlives the run's interest in it.
const ProbeKey = "locklab:write-probe"

// ProbeWrites opens a probe on n, a Redis server.
func ProbeWrites(n *Node) (*WriteProbe, error) {
	k, err := KindOf(n.Kind)
	if err != nil {
		return nil, err
	}
	if _, ok := k.(replicationReporter); !ok {
		return nil, fmt.Errorf("%s is a %s server, which the lab does not probe with writes", n.Name, n.Kind)
	}
	return &WriteProbe{name: n.Name, c: adminClient(n)}, nil
}

// Write sets ProbeKey once. refused is the server's own error reply
// (NOREPLICAS ..., READONLY ...) when it answered and refused; err is set
// when no answer came (a timeout, a closed connection).
func (p *WriteProbe) Write(ctx context.Context) (refused string, err error) {
	p.n++
	err = p.c.Set(ctx, ProbeKey, strconv.Itoa(p.n), time.Minute).Err()
	if err == nil {
		return "", nil
	}
	var reply redis.Error
	if errors.As(err, &reply) {
		return reply.Error(), nil
	}
	return "", fmt.Errorf("probe write on %s: %w", p.name, err)
}

// Close closes the probe's connection.
func (p *WriteProbe) Close() error { return p.c.Close() }
