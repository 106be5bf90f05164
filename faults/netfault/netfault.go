// Package netfault makes network faults out of lost packets between the lab's
// hosts (cluster/hosts): partitions of any split, one-way partitions,
// isolation of one host, and delay, jitter and loss with tc netem.
//
// A cut link drops packets silently where they arrive: each host gets an
// iptables chain of its own, LOCKLAB, jumped to from INPUT, and a rule per
// peer whose packets it must not receive. Nothing is dropped on the way out,
// because a packet dropped in OUTPUT makes the sender's send fail at once
// (EPERM), and a fault the sender learns about at once is not a partition.
// So the sender sees nothing: its TCP retransmits, its request times out, no
// reset ever comes. Every rule carries the comment "locklab". Heal removes
// the chain, its jump and the netem qdisc; removing a host's namespace
// (hosts.Network.Close) removes them too.
//
// The lab's own control path, from the switch (hosts.Network.DialContext),
// is never cut: only packets from other hosts' addresses are dropped.
package netfault

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

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

// Netem is what tc netem does to every packet a host sends.
type Netem struct {
	Delay  time.Duration // added to every packet
	Jitter time.Duration // random variation of the delay (needs Delay)
	Loss   float64       // percent of packets lost, 0 to 100
}

func (n Netem) String() string {
	var parts []string
	if n.Delay > 0 {
		parts = append(parts, "delay "+n.Delay.String())
		if n.Jitter > 0 {
			parts = append(parts, "jitter "+n.Jitter.String())
		}
	}
	if n.Loss > 0 {
		parts = append(parts, fmt.Sprintf("loss %g%%", n.Loss))
	}
	return strings.Join(parts, ", ")
}

func (n Netem) args() ([]string, error) {
	switch {
	case n.Delay < 0 || n.Jitter < 0:
		return nil, errors.New("netem: negative delay or jitter")
	case n.Jitter > 0 && n.Delay == 0:
		return nil, errors.New("netem: jitter needs a delay")
	case n.Loss < 0 || n.Loss > 100:
		return nil, fmt.Errorf("netem: loss %g%% is not a percentage", n.Loss)
	case n.Delay == 0 && n.Loss == 0:
		return nil, errors.New("netem: nothing to do (no delay, no loss)")
	}
	var a []string
	if n.Delay > 0 {
		a = append(a, "delay", fmt.Sprintf("%dus", n.Delay.Microseconds()))
		if n.Jitter > 0 {
			a = append(a, fmt.Sprintf("%dus", n.Jitter.Microseconds()))
		}
	}
	if n.Loss > 0 {
		a = append(a, "loss", fmt.Sprintf("%g%%", n.Loss))
	}
	return a, nil
}

// ErrNoNetem is wrapped by Slow's error when the kernel has no netem qdisc
// (CONFIG_NET_SCH_NETEM): some VM kernels ship without it. Lose needs no
// netem.
var ErrNoNetem = errors.New("this kernel has no netem qdisc (CONFIG_NET_SCH_NETEM is off or sch_netem is not loaded)")

// Slow applies n to every packet h sends (on its one interface), replacing
// any netem already there. Apply it on both ends of a link to slow both
// directions.
func Slow(ctx context.Context, h *hosts.Host, n Netem) error {
	a, err := n.args()
	if err != nil {
		return err
	}
	args := append([]string{"qdisc", "replace", "dev", hosts.Dev, "root", "netem"}, a...)
	if err := h.Run(ctx, "tc", args...); err != nil {
		if strings.Contains(err.Error(), "qdisc kind is unknown") {
			return fmt.Errorf("slow %s (%s): %w", h.Name, n, ErrNoNetem)
		}
		return fmt.Errorf("slow %s (%s): %w", h.Name, n, err)
	}
	return nil
}

// NetemAvailable reports whether Slow can work on h: nil, or an error
// wrapping ErrNoNetem. It leaves h as it was.
func NetemAvailable(ctx context.Context, h *hosts.Host) error {
	if err := Slow(ctx, h, Netem{Delay: time.Microsecond}); err != nil {
		return err
	}
	return Heal(ctx, h)
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
	return rules(ctx, h, from, fmt.Sprintf("-m statistic --mode random --probability %.6f", percent/100))
}

// Heal removes every drop rule and every netem from the given hosts.
func Heal(ctx context.Context, hs ...*hosts.Host) error {
	var errs []error
	for _, h := range hs {
		// Each step may find nothing to remove; what must hold afterwards
		// is checked by Faults.
		script := fmt.Sprintf(`iptables -w -D INPUT -m comment --comment %[1]s -j %[2]s 2>/dev/null
iptables -w -F %[2]s 2>/dev/null
iptables -w -X %[2]s 2>/dev/null
tc qdisc del dev %[3]s root 2>/dev/null
true`, Tag, Chain, hosts.Dev)
		if err := h.Run(ctx, "sh", "-c", script); err != nil {
			errs = append(errs, fmt.Errorf("heal %s: %w", h.Name, err))
			continue
		}
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
// and a netem qdisc, each as one line. Empty means h is healed.
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
	qd, err := h.Output(ctx, "tc", "qdisc", "show", "dev", hosts.Dev)
	if err != nil {
		return nil, err
	}
	for _, l := range strings.Split(qd, "\n") {
		if strings.Contains(l, "netem") {
			out = append(out, strings.TrimSpace(l))
		}
	}
	return out, nil
}

// drop makes h drop every packet from the hosts in from.
func drop(ctx context.Context, h *hosts.Host, from []*hosts.Host) error {
	return rules(ctx, h, from, "")
}

// rules adds one DROP rule (with the extra match) per sending host to h's chain.
func rules(ctx context.Context, h *hosts.Host, from []*hosts.Host, match string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "set -e\niptables -w -N %[1]s 2>/dev/null || true\n"+
		"iptables -w -C INPUT -m comment --comment %[2]s -j %[1]s 2>/dev/null || iptables -w -I INPUT 1 -m comment --comment %[2]s -j %[1]s\n", Chain, Tag)
	for _, f := range from {
		// -C first: the same cut twice adds one rule, so one heal undoes it.
		rule := fmt.Sprintf("%s -s %s/32 %s -m comment --comment %s -j DROP", Chain, f.IP, match, Tag)
		fmt.Fprintf(&b, "iptables -w -C %[1]s 2>/dev/null || iptables -w -A %[1]s\n", rule)
	}
	if err := h.Run(ctx, "sh", "-c", b.String()); err != nil {
		return fmt.Errorf("cut links into %s: %w", h.Name, err)
	}
	return nil
}
