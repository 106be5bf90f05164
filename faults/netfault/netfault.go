// Package netfault makes network faults out of lost packets between the lab's
// hosts (cluster/hosts): partitions of any split, one-way partitions,
// isolation of one host, loss, and delay with jitter (delay.go).
//
// A cut link drops packets silently where they arrive: each host gets an
// iptables chain of its own, LOCKLAB, jumped to from INPUT, and a rule per
// peer whose packets it must not receive. Nothing is dropped on the way out,
// because a packet dropped in OUTPUT makes the sender's send fail at once
// (EPERM), and a fault the sender learns about at once is not a partition.
// So the sender sees nothing: its TCP retransmits, its request times out, no
// reset ever comes. Every rule carries the comment "locklab". Heal removes
// the chain, its jump and any delay; removing a host's namespace
// (hosts.Network.Close) removes the rules too.
//
// The lab's own control path, from the switch (hosts.Network.DialContext),
// is never cut: only packets from other hosts' addresses are dropped.
package netfault

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/locklab/locklab/cluster/hosts"
)

const (
	// Chain is the lab's iptables chain inside each host.
	Chain = "LOCKLAB"
	// Tag is the comment on every rule the lab adds.
	Tag = "locklab"
)

// Partition cuts every link between a host of a and a host of b, both ways.
// Links inside a and inside b keep working.
func Partition(ctx context.Context, a, b []*hosts.Host) error {
	if err := OneWay(ctx, a, b); err != nil {
		return err
	}
	return OneWay(ctx, b, a)
}

// OneWay drops every packet from a host of from to a host of to; packets
// from to to from still pass. (A TCP connection cannot work either way then,
// but a datagram from to to from still arrives.)
func OneWay(ctx context.Context, from, to []*hosts.Host) error {
	if len(from) == 0 || len(to) == 0 {
		return errors.New("one-way partition: both sides need at least one host")
	}
	for _, f := range from {
		for _, t := range to {
			if f == t {
				return fmt.Errorf("host %s is on both sides of the partition", f.Name)
			}
		}
	}
	var errs []error
	for _, t := range to {
		errs = append(errs, drop(ctx, t, from))
	}
	return errors.Join(errs...)
}

// Isolate cuts h from every other host of its network, both ways.
func Isolate(ctx context.Context, h *hosts.Host) error {
	var others []*hosts.Host
	for _, o := range h.Network().Hosts() {
		if o != h {
			others = append(others, o)
		}
	}
	if len(others) == 0 {
		return fmt.Errorf("isolate %s: it is the network's only host", h.Name)
	}
	return Partition(ctx, []*hosts.Host{h}, others)
}

// Lose drops, at random, percent of the packets h receives from the hosts in
// from (iptables' statistic match: it needs no netem). Heal removes it.
func Lose(ctx context.Context, h *hosts.Host, from []*hosts.Host, percent float64) error {
	if percent <= 0 || percent > 100 {
		return fmt.Errorf("loss %g%% is not a percentage above 0", percent)
	}
	if len(from) == 0 {
		return errors.New("loss: no sending host given")
	}
	return rules(ctx, h, from, fmt.Sprintf("-m statistic --mode random --probability %.6f", percent/100), "DROP")
}

// Heal removes every rule and every delay from the given hosts.
func Heal(ctx context.Context, hs ...*hosts.Host) error { return heal(ctx, false, hs) }

// HealDropping is Heal, but the packets a delay still holds are dropped,
// not let through when their time is up: for a delayed link whose sender
// is gone (a killed master), whose late packets would only meet a
// connection closed since, and which a heal that waited for them would
// hold up by the whole delay.
func HealDropping(ctx context.Context, hs ...*hosts.Host) error { return heal(ctx, true, hs) }

func heal(ctx context.Context, drop bool, hs []*hosts.Host) error {
	var errs []error
	for _, h := range hs {
		// Each step may find nothing to remove; what must hold afterwards
		// is checked by Faults.
		script := fmt.Sprintf(`iptables -w -D INPUT -m comment --comment %[1]s -j %[2]s 2>/dev/null
iptables -w -F %[2]s 2>/dev/null
iptables -w -X %[2]s 2>/dev/null
true`, Tag, Chain)
		if err := h.Run(ctx, "sh", "-c", script); err != nil {
			errs = append(errs, fmt.Errorf("heal %s: %w", h.Name, err))
		}
	}
	// After the rules, so nothing new is held; every host at once, as each
	// waits for its last held packet to go.
	var wg sync.WaitGroup
	for _, h := range hs {
		wg.Add(1)
		go func() { defer wg.Done(); stopDelay(h, drop) }()
	}
	wg.Wait()
	for _, h := range hs {
		if left, err := Faults(ctx, h); err != nil || len(left) > 0 {
			errs = append(errs, fmt.Errorf("heal %s: still there: %v %v", h.Name, left, err))
		}
	}
	return errors.Join(errs...)
}

// HealAll heals every host of the network.
func HealAll(ctx context.Context, n *hosts.Network) error {
	return Heal(ctx, n.Hosts()...)
}

// Faults lists what the lab has put on h: its firewall rules (by their tag)
// and its delay, each as one line. Empty means h is healed.
func Faults(ctx context.Context, h *hosts.Host) ([]string, error) {
	rules, err := h.Output(ctx, "iptables", "-w", "-S")
	if err != nil {
		return nil, err
	}
	var out []string
	for _, l := range strings.Split(rules, "\n") {
		if strings.Contains(l, Tag) || strings.Contains(l, Chain) {
			out = append(out, l)
		}
	}
	if d := delayed(h); d != "" {
		out = append(out, d)
	}
	return out, nil
}

// drop makes h drop every packet from the hosts in from.
func drop(ctx context.Context, h *hosts.Host, from []*hosts.Host) error {
	return rules(ctx, h, from, "", "DROP")
}

// rules adds one rule (with the extra match, jumping to target) per sending
// host to h's chain.
func rules(ctx context.Context, h *hosts.Host, from []*hosts.Host, match, target string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "set -e\niptables -w -N %[1]s 2>/dev/null || true\n"+
		"iptables -w -C INPUT -m comment --comment %[2]s -j %[1]s 2>/dev/null || iptables -w -I INPUT 1 -m comment --comment %[2]s -j %[1]s\n", Chain, Tag)
	for _, f := range from {
		// -C first: the same cut twice adds one rule, so one heal undoes it.
		rule := fmt.Sprintf("%s -s %s/32 %s -m comment --comment %s -j %s", Chain, f.IP, match, Tag, target)
		fmt.Fprintf(&b, "iptables -w -C %[1]s 2>/dev/null || iptables -w -A %[1]s\n", rule)
	}
	if err := h.Run(ctx, "sh", "-c", b.String()); err != nil {
		return fmt.Errorf("cut links into %s: %w", h.Name, err)
	}
	return nil
}
