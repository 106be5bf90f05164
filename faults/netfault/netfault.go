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
	"slices"
	"strconv"
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
// Links inside a and inside b keep working. Every host's rules go on at
// once, each host's in one transaction (see cut), so the partition is whole
// within tens of milliseconds, as a real one is, not host by host.
func Partition(ctx context.Context, a, b []*hosts.Host) error {
	if err := disjoint(a, b); err != nil {
		return err
	}
	return cut(ctx, append(ways(b, a), ways(a, b)...), "", "DROP")
}

// OneWay drops every packet from a host of from to a host of to; packets
// from to to from still pass. (A TCP connection cannot work either way then,
// but a datagram from to to from still arrives.)
func OneWay(ctx context.Context, from, to []*hosts.Host) error {
	if err := disjoint(from, to); err != nil {
		return err
	}
	return cut(ctx, ways(from, to), "", "DROP")
}

// disjoint checks that a one-way or two-way partition has two sides, and
// that no host is on both.
func disjoint(a, b []*hosts.Host) error {
	if len(a) == 0 || len(b) == 0 {
		return errors.New("partition: both sides need at least one host")
	}
	for _, f := range a {
		if slices.Contains(b, f) {
			return fmt.Errorf("host %s is on both sides of the partition", f.Name)
		}
	}
	return nil
}

// way is one receiving host and the senders whose packets it must drop.
type way struct {
	to   *hosts.Host
	from []*hosts.Host
}

func ways(from, to []*hosts.Host) []way {
	out := make([]way, 0, len(to))
	for _, t := range to {
		out = append(out, way{t, from})
	}
	return out
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
	return cut(ctx, []way{{h, from}}, fmt.Sprintf("-m statistic --mode random --probability %.6f", percent/100), "DROP")
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
	// Every host at once, as the cut went on: a heal that lifted the rules
	// host by host would let one side's servers reach the other's for a
	// while before its clients could, a shape no real network heals in.
	return atOnce(hs, func(h *hosts.Host) error { return healHost(ctx, drop, h) })
}

// atOnce runs f on every item in parallel and joins their errors.
func atOnce[T any](items []T, f func(T) error) error {
	errs := make([]error, len(items))
	var wg sync.WaitGroup
	for i, it := range items {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = f(it)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// healHost removes h's chain and its jump in one transaction, then lets
// what a delay holds go (or drops it), and checks that nothing is left.
func healHost(ctx context.Context, drop bool, h *hosts.Host) error {
	lines, err := ruleset(ctx, h)
	if err != nil {
		return fmt.Errorf("heal %s: %w", h.Name, err)
	}
	// Only what is there is removed: a delete of a missing rule would fail
	// the whole transaction.
	var b strings.Builder
	for _, l := range lines {
		if l == "-A "+jump {
			b.WriteString("-D " + jump + "\n")
		}
	}
	if slices.Contains(lines, "-N "+Chain) {
		fmt.Fprintf(&b, "-F %[1]s\n-X %[1]s\n", Chain)
	}
	if b.Len() > 0 {
		if _, err := h.Feed(ctx, "*filter\n"+b.String()+"COMMIT\n", "iptables-restore", "-w", "--noflush"); err != nil {
			return fmt.Errorf("heal %s: %w", h.Name, err)
		}
	}
	// After the rules, so nothing new is held; each host waits for its
	// last held packet to go.
	stopDelay(h, drop)
	if left, err := Faults(ctx, h); err != nil || len(left) > 0 {
		return fmt.Errorf("heal %s: still there: %v %v", h.Name, left, err)
	}
	return nil
}

// HealAll heals every host of the network.
func HealAll(ctx context.Context, n *hosts.Network) error {
	return Heal(ctx, n.Hosts()...)
}

// Faults lists what the lab has put on h: its firewall rules (by their tag)
// and its delay, each as one line. Empty means h is healed.
func Faults(ctx context.Context, h *hosts.Host) ([]string, error) {
	lines, err := ruleset(ctx, h)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, l := range lines {
		if strings.Contains(l, Tag) || strings.Contains(l, Chain) {
			out = append(out, l)
		}
	}
	if d := delayed(h); d != "" {
		out = append(out, d)
	}
	return out, nil
}

// cut puts, on every way's receiving host at once, one rule per sending
// host (with the extra match, jumping to target) in the host's chain, and
// the chain and its jump from INPUT where they are missing. Each host's
// rules go on in one iptables-restore transaction, after one read of what
// is there: two processes per host, whatever the number of senders, where
// an iptables call per rule took 1.5 s for a dozen hosts on a loaded
// machine, during which the partition was partial.
func cut(ctx context.Context, ws []way, match, target string) error {
	return atOnce(ws, func(w way) error { return rules(ctx, w.to, w.from, match, target) })
}

// rules adds one rule (with the extra match, jumping to target) per sending
// host to h's chain. A rule already there is not added again: the same cut
// twice adds one rule (so a loss is not compounded), and one heal undoes
// it.
func rules(ctx context.Context, h *hosts.Host, from []*hosts.Host, match, target string) error {
	lines, err := ruleset(ctx, h)
	if err != nil {
		return fmt.Errorf("cut links into %s: %w", h.Name, err)
	}
	present := map[string]bool{}
	for _, l := range lines {
		present[ruleKey(l)] = true
	}
	var b strings.Builder
	b.WriteString("*filter\n")
	if !slices.Contains(lines, "-N "+Chain) {
		fmt.Fprintf(&b, ":%s - [0:0]\n", Chain)
	}
	if !slices.Contains(lines, "-A "+jump) {
		b.WriteString("-I " + jump + "\n")
	}
	for _, f := range from {
		rule := strings.Join(strings.Fields(fmt.Sprintf("-A %s -s %s/32 %s -m comment --comment %s -j %s", Chain, f.IP, match, Tag, target)), " ")
		if k := ruleKey(rule); !present[k] {
			present[k] = true
			b.WriteString(rule + "\n")
		}
	}
	b.WriteString("COMMIT\n")
	if _, err := h.Feed(ctx, b.String(), "iptables-restore", "-w", "--noflush"); err != nil {
		return fmt.Errorf("cut links into %s: %w", h.Name, err)
	}
	return nil
}

// jump is the rule in INPUT that jumps to the lab's chain, as iptables -S
// prints it after its "-A".
const jump = "INPUT -m comment --comment " + Tag + " -j " + Chain

// ruleset is h's filter table as iptables -S prints it, a line each.
func ruleset(ctx context.Context, h *hosts.Host) ([]string, error) {
	out, err := h.Feed(ctx, "", "iptables", "-w", "-S")
	if err != nil {
		return nil, err
	}
	return strings.Split(out, "\n"), nil
}

// ruleKey is what makes two rules of the lab's chain the same, read from
// the line the lab wrote or the one iptables -S prints back: the line
// without its match module names and comment (iptables adds "-m tcp" of
// its own), with a loss's probability to six places (it prints the
// kernel's fixed-point value back, 0.10000000009 for 0.100000). A line of
// another chain has no key.
func ruleKey(line string) string {
	f := strings.Fields(line)
	if len(f) < 2 || f[0] != "-A" || f[1] != Chain {
		return ""
	}
	var key []string
	for i := 2; i < len(f); i++ {
		switch f[i] {
		case "-m", "--comment":
			i++
		case "--probability":
			if i+1 < len(f) {
				p, err := strconv.ParseFloat(f[i+1], 64)
				if err == nil {
					key = append(key, f[i], strconv.FormatFloat(p, 'f', 6, 64))
					i++
					continue
				}
			}
			key = append(key, f[i])
		default:
			key = append(key, f[i])
		}
	}
	return strings.Join(key, " ")
}
