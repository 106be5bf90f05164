package redisson

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// subscription is one waiter's subscription to a lock's unlock channel, on
// a connection of its own (a subscribed connection can send nothing else).
type subscription struct {
	ps   *redis.PubSub
	wake chan struct{} // an unlock was published; coalesced, buffered 1
	fail chan error    // the connection broke; buffered 1, sent once
	done chan struct{} // the reader ended
}

// subscribe subscribes to ch and waits for the server's confirmation: only
// then is every PUBLISH the server runs afterwards sure to reach us, so an
// attempt made after subscribe returns cannot miss the unlock that follows it.
func (l *Locker) subscribe(ctx context.Context, ch string) (*subscription, error) {
	ps := l.rdb.Subscribe(ctx) // no channel yet: nothing is sent
	if err := ps.Subscribe(ctx, ch); err != nil {
		ps.Close()
		return nil, err
	}
	reply, err := ps.ReceiveTimeout(ctx, l.rdb.Options().ReadTimeout)
	if err != nil {
		ps.Close()
		return nil, err
	}
	if s, ok := reply.(*redis.Subscription); !ok || s.Kind != "subscribe" || s.Channel != ch {
		ps.Close()
		return nil, fmt.Errorf("unexpected reply to SUBSCRIBE %s: %v", ch, reply)
	}
	s := &subscription{
		ps:   ps,
		wake: make(chan struct{}, 1),
		fail: make(chan error, 1),
		done: make(chan struct{}),
	}
	go s.read()
	return s, nil
}

// read turns messages into wake-ups until the connection is closed or breaks.
// A blocking read cannot watch a context, so the waiter's select does that
// and close ends the read.
func (s *subscription) read() {
	defer close(s.done)
	for {
		msg, err := s.ps.Receive(context.Background())
		if err != nil {
			s.fail <- err
			return
		}
		if _, ok := msg.(*redis.Message); ok {
			select {
			case s.wake <- struct{}{}:
			default:
			}
		}
	}
}

// close ends the subscription by closing its connection (no UNSUBSCRIBE
// round trip) and waits for the reader to end.
func (s *subscription) close() {
	s.ps.Close()
	<-s.done
}
