package guest

import (
	"strings"
	"sync"
	"time"
)

// A guest's interpreter or JVM takes a good part of a second to start on a
// loaded machine, longer than the lab's 1 s TTL leaves inside the
// conformance suite's sequences (acquire, steal, acquire, then build a third
// client and expect the lock still held). With Prestart on, each Start takes
// a guest process started earlier, waiting for its hello, and starts the
// next one: the suite then measures the lock, not the start-up. Workers never
// turn it on: a worker builds its one client before it says it is ready.
var (
	spareMu  sync.Mutex
	prestart bool
	spares   = map[string][]*conn{}
)

// spareDepth is how many spares wait per guest: the suite builds up to three
// clients inside one TTL-bounded sequence.
const spareDepth = 3

// Prestart turns the spare processes on or off; off stops every spare.
func Prestart(on bool) {
	spareMu.Lock()
	prestart = on
	var stop []*conn
	if !on {
		for key, cs := range spares {
			stop = append(stop, cs...)
			delete(spares, key)
		}
	}
	spareMu.Unlock()
	for _, c := range stop {
		_ = c.close()
	}
}

// spawn returns a started guest process for m: the oldest spare if one
// waits, topping the spares up again when Prestart is on.
func spawn(m Manifest, grace time.Duration, spare bool) (*conn, error) {
	if !spare {
		return startConn(m, grace)
	}
	key := m.Dir + "\x00" + strings.Join(m.Command, "\x00")
	spareMu.Lock()
	on := prestart
	var c *conn
	if q := spares[key]; len(q) > 0 {
		c, spares[key] = q[0], q[1:]
	}
	missing := spareDepth - len(spares[key])
	spareMu.Unlock()
	for i := 0; on && i < missing; i++ {
		next, err := startConn(m, grace)
		if err != nil {
			break
		}
		spareMu.Lock()
		keep := prestart
		if keep {
			spares[key] = append(spares[key], next)
		}
		spareMu.Unlock()
		if !keep {
			_ = next.close()
		}
	}
	if c != nil {
		if c.deadErr() == nil && c.grace == grace {
			return c, nil
		}
		_ = c.close()
	}
	return startConn(m, grace)
}
