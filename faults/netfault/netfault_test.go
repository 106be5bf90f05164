package netfault_test

import (
	"bufio"
	"context"
	"errors"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/cluster/hosts"
	"github.com/locklab/locklab/faults/netfault"
	"github.com/locklab/locklab/topology"
)

// cutWait is how long a request over a cut link is given before it counts
// as unanswered. Short on purpose: an uncut link on this network answers
// in well under a millisecond, so a false "cut" would need a 100ms stall,
// and the assertion that matters is the kind of failure (a timeout, never
// a reset), which does not depend on the bound.
const cutWait = 700 * time.Millisecond

// okWait bounds a request that must succeed: generous for a loaded machine.
const okWait = 10 * time.Second

// ping sends PING to the Redis at addr from host h over a fresh connection
// (or conn when given) and waits up to wait for +PONG.
func ping(ctx context.Context, h *hosts.Host, addr string, conn net.Conn, wait time.Duration) error {
	if conn == nil {
		dctx, cancel := context.WithTimeout(ctx, wait)
		defer cancel()
		c, err := h.DialContext(dctx, "tcp", addr)
		if err != nil {
			return err
		}
		defer c.Close()
		conn = c
	}
	_ = conn.SetDeadline(time.Now().Add(wait))
	if _, err := conn.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		return err
	}
	if !strings.HasPrefix(line, "+PONG") {
		return errors.New("unexpected reply " + line)
	}
	return nil
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())
}

// datagram reports whether a UDP datagram from one host reaches another.
func datagram(t *testing.T, from, to *hosts.Host) bool {
	t.Helper()
	pc, err := to.ListenPacket("udp", to.Addr(0))
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), okWait)
	defer cancel()
	c, err := from.DialContext(ctx, "udp", pc.LocalAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte("x")); err != nil {
		t.Fatalf("send datagram: %v", err)
	}
	_ = pc.SetReadDeadline(time.Now().Add(cutWait))
	_, _, err = pc.ReadFrom(make([]byte, 8))
	return err == nil
}

func TestPacketFaults(t *testing.T) {
	if err := hosts.Available(); err != nil {
		t.Skip(err)
	}
	ctx := context.Background()
	topo, err := cluster.Start(ctx, topology.Declaration{Groups: []topology.Group{topology.RedisNodes(1)}, Hosts: true}, cluster.External{})
	if err != nil {
		t.Fatal(err)
	}
	defer topo.Close()
	srv := topo.Lock(topology.Redis)[0]
	client, err := topo.Net.AddHost(ctx, "client")
	if err != nil {
		t.Fatal(err)
	}
	other, err := topo.Net.AddHost(ctx, "other")
	if err != nil {
		t.Fatal(err)
	}
	c := []*hosts.Host{client}
	s := []*hosts.Host{srv.Host}

	cases := []struct {
		name   string
		inject func() error
		// clientReaches: a request from the client to the server is answered.
		clientReaches bool
		// serverToClient, clientToServer: a datagram arrives that way.
		serverToClient, clientToServer bool
		// otherReaches: the third host still reaches the server.
		otherReaches bool
	}{
		{"partition", func() error { return netfault.Partition(ctx, c, s) }, false, false, false, true},
		{"one way client to server", func() error { return netfault.OneWay(ctx, c, s) }, false, true, false, true},
		{"one way server to client", func() error { return netfault.OneWay(ctx, s, c) }, false, false, true, true},
		{"isolate server", func() error { return netfault.Isolate(ctx, srv.Host) }, false, false, false, false},
		{"isolate other", func() error { return netfault.Isolate(ctx, other) }, true, true, true, false},
		{"all packets lost", func() error { return netfault.Lose(ctx, srv.Host, c, 100) }, false, true, false, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// An established connection, to show the cut is silent on it too
			// (after a cut it holds an unanswered PING: used once).
			conn, err := client.DialContext(ctx, "tcp", srv.Addr)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if err := ping(ctx, client, srv.Addr, conn, okWait); err != nil {
				t.Fatalf("before the fault: %v", err)
			}
			if err := tc.inject(); err != nil {
				t.Fatal(err)
			}
			for _, probe := range []struct {
				what string
				conn net.Conn
			}{{"new connection", nil}, {"open connection", conn}} {
				wait := okWait
				if !tc.clientReaches {
					wait = cutWait
				}
				err := ping(ctx, client, srv.Addr, probe.conn, wait)
				switch {
				case tc.clientReaches && err != nil:
					t.Errorf("%s: want an answer, got %v", probe.what, err)
				case !tc.clientReaches && !isTimeout(err):
					t.Errorf("%s: want a timeout (packets lost, no reset), got %v", probe.what, err)
				}
			}
			if got := datagram(t, srv.Host, client); got != tc.serverToClient {
				t.Errorf("datagram server to client arrived: %v, want %v", got, tc.serverToClient)
			}
			if got := datagram(t, client, srv.Host); got != tc.clientToServer {
				t.Errorf("datagram client to server arrived: %v, want %v", got, tc.clientToServer)
			}
			if err := ping(ctx, other, srv.Addr, nil, map[bool]time.Duration{true: okWait, false: cutWait}[tc.otherReaches]); (err == nil) != tc.otherReaches {
				t.Errorf("third host reaches the server: %v, want %v", err == nil, tc.otherReaches)
			}
			// The lab's control path is never cut.
			lab := redisPing(ctx, topo.Dialer(), srv.Addr)
			if lab != nil {
				t.Errorf("the lab lost its own path to the server: %v", lab)
			}
			if err := netfault.HealAll(ctx, topo.Net); err != nil {
				t.Fatal(err)
			}
			for _, h := range topo.Net.Hosts() {
				if left, err := netfault.Faults(ctx, h); err != nil || len(left) > 0 {
					t.Errorf("%s after heal: %v %v", h.Name, left, err)
				}
			}
			if err := ping(ctx, client, srv.Addr, nil, okWait); err != nil {
				t.Errorf("after heal: %v", err)
			}
		})
	}
	// The same cut twice adds nothing: a loss given twice is not
	// compounded, and one heal undoes both.
	t.Run("same cut twice", func(t *testing.T) {
		for range 2 {
			if err := netfault.Partition(ctx, c, s); err != nil {
				t.Fatal(err)
			}
			if err := netfault.Lose(ctx, srv.Host, []*hosts.Host{other}, 10); err != nil {
				t.Fatal(err)
			}
		}
		left, err := netfault.Faults(ctx, srv.Host)
		if err != nil {
			t.Fatal(err)
		}
		// The chain, its jump, the drop from the client, the loss from the other host.
		if len(left) != 4 {
			t.Errorf("server's rules after the same cut twice: %d, want 4:\n%s", len(left), strings.Join(left, "\n"))
		}
		if err := netfault.HealAll(ctx, topo.Net); err != nil {
			t.Fatal(err)
		}
	})
}

func redisPing(ctx context.Context, dial cluster.Dialer, addr string) error {
	conn, err := dial(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(okWait))
	if _, err := conn.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	_, err = bufio.NewReader(conn).ReadString('\n')
	return err
}

// TestDelay: a delay on both ends of a link makes every round trip take at
// least twice the delay less the jitter, and, healed, the link is as fast as
// before and nothing of the delay is left. Only lower bounds on the delayed
// trips (a loaded machine adds time, never removes it); the healed one is
// compared with the delay, not with a clock target.
func TestDelay(t *testing.T) {
	if err := hosts.Available(); err != nil {
		t.Skip(err)
	}
	if err := netfault.DelayAvailable(); err != nil {
		t.Skip(err)
	}
	ctx := context.Background()
	n, err := hosts.New(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	a, err := n.AddHost(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	b, err := n.AddHost(ctx, "b")
	if err != nil {
		t.Fatal(err)
	}
	l, err := b.Listen("tcp", b.Addr(0))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		c, err := l.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		buf := make([]byte, 1)
		for {
			if _, err := c.Read(buf); err != nil {
				return
			}
			c.Write(buf)
		}
	}()
	conn, err := a.DialContext(ctx, "tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	roundTrip := func() time.Duration {
		t.Helper()
		buf := make([]byte, 1)
		_ = conn.SetDeadline(time.Now().Add(okWait))
		start := time.Now()
		if _, err := conn.Write([]byte("x")); err != nil {
			t.Fatal(err)
		}
		if _, err := conn.Read(buf); err != nil {
			t.Fatal(err)
		}
		return time.Since(start)
	}
	const delay = 40 * time.Millisecond
	for _, c := range []struct {
		name   string
		jitter time.Duration
	}{{"delay", 0}, {"delay and jitter", 20 * time.Millisecond}} {
		t.Run(c.name, func(t *testing.T) {
			if err := netfault.Delay(ctx, a, []*hosts.Host{b}, delay, c.jitter); err != nil {
				t.Fatal(err)
			}
			if err := netfault.Delay(ctx, b, []*hosts.Host{a}, delay, c.jitter); err != nil {
				netfault.Heal(ctx, a, b)
				t.Fatal(err)
			}
			var trips []time.Duration
			for i := 0; i < 5; i++ {
				rtt, min := roundTrip(), 2*(delay-c.jitter)
				if rtt < min {
					t.Errorf("round trip %d took %v, want at least %v", i, rtt, min)
				}
				trips = append(trips, rtt.Round(time.Millisecond))
			}
			t.Logf("round trips with %v ± %v each way: %v", delay, c.jitter, trips)
			if err := netfault.Heal(ctx, a, b); err != nil {
				t.Fatal(err)
			}
			for _, h := range []*hosts.Host{a, b} {
				if left, err := netfault.Faults(ctx, h); err != nil || len(left) > 0 {
					t.Errorf("%s after heal: %v %v", h.Name, left, err)
				}
			}
			rtt := roundTrip()
			t.Logf("healed round trip: %v", rtt)
			if rtt >= delay {
				t.Errorf("healed round trip took %v, no faster than one delay (%v): the delay outlived its heal", rtt, delay)
			}
		})
	}
	// One stream only: packets a receives from b's listening port (the
	// echo's replies) are held, and a's own port is not b's, so a delay
	// on another port of b holds nothing.
	port := l.Addr().(*net.TCPAddr).Port
	for _, c := range []struct {
		name    string
		port    int
		delayed bool
	}{{"from the stream's port", port, true}, {"from another port", port + 1, false}} {
		t.Run(c.name, func(t *testing.T) {
			if err := netfault.DelayFromPort(ctx, a, []*hosts.Host{b}, c.port, delay, 0); err != nil {
				t.Fatal(err)
			}
			defer netfault.Heal(ctx, a)
			rtt := roundTrip()
			if c.delayed && rtt < delay {
				t.Errorf("round trip took %v, want at least the delay %v", rtt, delay)
			}
			if !c.delayed && rtt >= delay {
				t.Errorf("round trip took %v: a delay on another port held this stream", rtt)
			}
		})
	}
	// HealDropping does not wait for what the delay holds: a reply held
	// for a second is dropped (TCP sends it again), and the heal returns
	// well within the second.
	t.Run("heal dropping", func(t *testing.T) {
		const long = time.Second
		if err := netfault.DelayFromPort(ctx, a, []*hosts.Host{b}, port, long, 0); err != nil {
			t.Fatal(err)
		}
		if _, err := conn.Write([]byte("x")); err != nil {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond) // the reply is held by now
		start := time.Now()
		if err := netfault.HealDropping(ctx, a); err != nil {
			t.Fatal(err)
		}
		if took := time.Since(start); took >= long {
			t.Errorf("HealDropping took %v, as long as the delay it should not wait for", took)
		}
		_ = conn.SetDeadline(time.Now().Add(okWait))
		if _, err := conn.Read(make([]byte, 1)); err != nil {
			t.Errorf("the dropped reply was never sent again: %v", err)
		}
	})
	t.Run("bad input", func(t *testing.T) {
		for _, c := range []struct {
			d, jitter time.Duration
			from      []*hosts.Host
		}{{0, 0, []*hosts.Host{b}}, {delay, 2 * delay, []*hosts.Host{b}}, {delay, -1, []*hosts.Host{b}}, {delay, 0, nil}} {
			if err := netfault.Delay(ctx, a, c.from, c.d, c.jitter); err == nil {
				netfault.Heal(ctx, a)
				t.Errorf("Delay(%v, %v, %d hosts) took it", c.d, c.jitter, len(c.from))
			}
		}
	})
}

func TestMain(m *testing.M) {
	code := m.Run()
	cluster.StopAll()
	os.Exit(code)
}
