package redisson

import (
	"context"
	"errors"
	"sync"

	"github.com/redis/go-redis/v9"
)

// maxIdleChannels bounds how many unlock channels a Locker stays subscribed
// to with nobody waiting on them. Staying subscribed is what makes a wait
// cheap: a waiter on a channel already subscribed sends nothing but its
// attempts, where a subscription per wait cost a connection, its handshake,
// a SUBSCRIBE and a close every time (most of the ~37 Redis commands a
// contended acquisition used to cost). Past the bound, idle channels are
// unsubscribed so that a Locker used on many keys does not collect them.
const maxIdleChannels = 64

// notifier is a Locker's one pub/sub connection, shared by all its waiters
// and kept subscribed between waits, as Redisson's PublishSubscribeService
// shares one per connection manager. It is made on the first wait.
type notifier struct {
	rdb redis.UniversalClient

	mu   sync.Mutex
	conn *psConn // nil before the first wait, after a break, and after close
	shut bool
}

// psConn is one generation of the notifier's connection. When it breaks,
// every waiter on it is told (broken) and the next wait starts a new one:
// messages may have been lost in between, so nobody may trust it again.
type psConn struct {
	ps        *redis.PubSub
	confirmed map[string]chan struct{}    // channel -> closed once the server confirmed it
	waiters   map[string]map[*waiter]bool // channel -> its waiters
	broken    chan struct{}               // closed when the reader ends
	done      chan struct{}               // closed after the reader ended
}

// waiter is one Acquire's registration on a channel.
type waiter struct {
	n      *notifier
	c      *psConn
	ch     string
	wake   chan struct{}   // an unlock was published; coalesced, buffered 1
	broken <-chan struct{} // the connection broke: messages may be lost
}

// wait registers a waiter on ch, subscribing to it if this connection is not
// yet, and returns once the server has confirmed the subscription: only
// then is every PUBLISH the server runs afterwards sure to reach us, so an
// attempt made after wait returns cannot miss the unlock that follows it.
func (n *notifier) wait(ctx context.Context, ch string, closing <-chan struct{}) (*waiter, error) {
	n.mu.Lock()
	if n.shut {
		n.mu.Unlock()
		return nil, errors.New("locker closed")
	}
	c := n.conn
	if c == nil {
		c = &psConn{
			ps:        n.rdb.Subscribe(ctx), // no channel yet: nothing is sent
			confirmed: map[string]chan struct{}{},
			waiters:   map[string]map[*waiter]bool{},
			broken:    make(chan struct{}),
			done:      make(chan struct{}),
		}
		n.conn = c
		go n.read(c)
	}
	w := &waiter{n: n, c: c, ch: ch, wake: make(chan struct{}, 1), broken: c.broken}
	if c.waiters[ch] == nil {
		c.waiters[ch] = map[*waiter]bool{}
	}
	c.waiters[ch][w] = true
	confirmed, subscribed := c.confirmed[ch]
	var idle []string
	if !subscribed {
		confirmed = make(chan struct{})
		c.confirmed[ch] = confirmed
		idle = c.idleLocked()
	}
	n.mu.Unlock()

	if len(idle) > 0 {
		// Best effort: an unsubscribe that fails leaves a channel whose
		// messages the reader ignores.
		_ = c.ps.Unsubscribe(ctx, idle...)
	}
	if !subscribed {
		if err := c.ps.Subscribe(ctx, ch); err != nil {
			w.done()
			n.breakConn(c)
			return nil, err
		}
	}
	select {
	case <-confirmed:
		return w, nil
	case <-c.broken:
		w.done()
		return nil, errors.New("pub/sub connection broke before SUBSCRIBE " + ch + " was confirmed")
	case <-ctx.Done():
		w.done()
		return nil, ctx.Err()
	case <-closing:
		w.done()
		return nil, errors.New("locker closed")
	}
}

// idleLocked picks the confirmed channels nobody waits on and forgets them,
// once there are more than maxIdleChannels. n.mu must be held.
func (c *psConn) idleLocked() []string {
	var idle []string
	for ch, confirmed := range c.confirmed {
		if len(c.waiters[ch]) > 0 {
			continue
		}
		select {
		case <-confirmed:
			idle = append(idle, ch)
		default: // a subscription in flight is not idle
		}
	}
	if len(idle) <= maxIdleChannels {
		return nil
	}
	for _, ch := range idle {
		delete(c.confirmed, ch)
		delete(c.waiters, ch)
	}
	return idle
}

// done ends the waiter's registration; its channel stays subscribed.
func (w *waiter) done() {
	w.n.mu.Lock()
	delete(w.c.waiters[w.ch], w)
	w.n.mu.Unlock()
}

// read turns confirmations into confirmed channels and messages into
// wake-ups for every waiter on their channel, until the connection is
// closed or breaks. A blocking read cannot watch a context, so waiters
// select on their own and closing the connection ends the read.
func (n *notifier) read(c *psConn) {
	defer close(c.done)
	for {
		msg, err := c.ps.Receive(context.Background())
		if err != nil {
			n.breakConn(c)
			return
		}
		n.mu.Lock()
		switch m := msg.(type) {
		case *redis.Subscription:
			if m.Kind == "subscribe" {
				if confirmed, ok := c.confirmed[m.Channel]; ok {
					select {
					case <-confirmed:
					default:
						close(confirmed)
					}
				}
			}
		case *redis.Message:
			for w := range c.waiters[m.Channel] {
				select {
				case w.wake <- struct{}{}:
				default:
				}
			}
		}
		n.mu.Unlock()
	}
}

// breakConn retires c: its waiters are told, and the next wait starts anew.
func (n *notifier) breakConn(c *psConn) {
	n.mu.Lock()
	if n.conn == c {
		n.conn = nil
	}
	select {
	case <-c.broken:
		n.mu.Unlock()
		return
	default:
		close(c.broken)
	}
	n.mu.Unlock()
	c.ps.Close()
}

// close ends the notifier for good and waits for its reader.
func (n *notifier) close() {
	n.mu.Lock()
	n.shut = true
	c := n.conn
	n.mu.Unlock()
	if c != nil {
		n.breakConn(c)
		<-c.done
	}
}
