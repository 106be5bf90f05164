package hosts

import (
	"context"
	"net"
	"os"
	"testing"
	"time"
)

func TestOwnerOf(t *testing.T) {
	tests := []struct {
		ns      string
		pid     int
		labName bool
	}{
		{"ll-4242-1-h3", 4242, true},
		{"ll-4242-12-sw", 4242, true},
		{"ll-4242-sw", 0, false}, // no run sequence: not a name the lab makes
		{"ll-x-1-h1", 0, false},
		{"ll-0-1-h1", 0, false},
		{"netns-4242-1-h1", 0, false},
		{"", 0, false},
	}
	for _, tt := range tests {
		pid, ok := ownerOf(tt.ns)
		if ok != tt.labName || (ok && pid != tt.pid) {
			t.Errorf("ownerOf(%q) = %d, %v; want %d, %v", tt.ns, pid, ok, tt.pid, tt.labName)
		}
	}
}

// TestNetwork: every host reaches every other host and the lab reaches
// every host from the switch; names are unique; Close removes every
// namespace and may be called twice.
func TestNetwork(t *testing.T) {
	if err := Available(); err != nil {
		t.Skip(err)
	}
	ctx := context.Background()
	n, err := New(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	var hs []*Host
	for _, name := range []string{"a", "b", "c"} {
		h, err := n.AddHost(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		hs = append(hs, h)
	}
	if _, err := n.AddHost(ctx, "a"); err == nil {
		t.Error("a second host named a was created")
	}
	if _, err := os.Stat(ownerFile(os.Getpid())); err != nil {
		t.Errorf("no owner file while the network lives: %v", err)
	}
	listeners := map[*Host]net.Listener{}
	for _, h := range hs {
		l, err := h.Listen("tcp", h.Addr(0))
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				c.Close()
			}
		}()
		listeners[h] = l
	}
	type dialer struct {
		from string
		dial func(ctx context.Context, network, addr string) (net.Conn, error)
	}
	dials := []dialer{{"switch", n.DialContext}}
	for _, h := range hs {
		dials = append(dials, dialer{h.Name, h.DialContext})
	}
	for _, d := range dials {
		for _, to := range hs {
			dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			c, err := d.dial(dctx, "tcp", listeners[to].Addr().String())
			cancel()
			if err != nil {
				t.Errorf("%s cannot reach %s: %v", d.from, to.Name, err)
				continue
			}
			c.Close()
		}
	}
	// The machine's own namespace has no route to the hosts.
	if c, err := net.DialTimeout("tcp", listeners[hs[0]].Addr().String(), time.Second); err == nil {
		c.Close()
		t.Error("the root namespace reached a host: the hosts' network leaks out of its namespaces")
	}
	nss := n.Namespaces()
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	if err := n.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	for _, ns := range nss {
		if _, err := os.Stat(netnsDir + "/" + ns); !os.IsNotExist(err) {
			t.Errorf("namespace %s outlived Close (%v)", ns, err)
		}
	}
	if _, err := n.AddHost(ctx, "d"); err == nil {
		t.Error("a host was added to a closed network")
	}
}
