package netfault

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"sync"
	"time"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"github.com/locklab/locklab/cluster/hosts"
)

// Delay and jitter are made by holding packets, not by tc netem: many VM
// kernels (this lab's CI among them) ship without sch_netem, while the
// netfilter queue every distribution kernel has. A host's firewall sends
// the packets it receives from the delayed peers to an NFQUEUE; the lab
// reads their ids from that queue over netlink and lets each through when
// its delay is up. The packet never leaves the kernel: only its verdict
// waits. Jitter draws each packet's delay on its own, so packets can pass
// each other, as with netem.

// queueNum is the queue a host's held packets wait in. Queues belong to a
// network namespace, so every host can use the same number.
const queueNum = 7

// From linux/netfilter/nfnetlink_queue.h and linux/netfilter.h; x/sys/unix
// does not carry them.
const (
	nfqnlMsgPacket  = 0
	nfqnlMsgVerdict = 1
	nfqnlMsgConfig  = 2

	nfqaPacketHdr  = 1
	nfqaVerdictHdr = 2
	nfqaCfgCmd     = 1
	nfqaCfgParams  = 2
	nfqaCfgMask    = 4
	nfqaCfgFlags   = 5

	nfqnlCfgCmdBind  = 1
	nfqnlCopyMeta    = 1
	nfqaCfgFFailOpen = 1 // a full queue lets packets through rather than drop them

	nfAccept = 1
)

// DelayAvailable returns nil when this kernel can queue packets to the lab
// (nfnetlink_queue), or why it cannot.
func DelayAvailable() error {
	if _, err := os.Stat("/proc/net/netfilter/nfnetlink_queue"); err != nil {
		return fmt.Errorf("this kernel has no netfilter queue (nfnetlink_queue), so packets cannot be delayed: %w", err)
	}
	return nil
}

// holder holds the packets one host receives from delayed peers.
type holder struct {
	conn      *netlink.Conn
	d, jitter time.Duration

	mu      sync.Mutex
	pending int           // packets held, their verdicts not yet sent
	closed  bool          // the socket is closing: a read error ends the loop
	done    chan struct{} // closed when the read loop ends
}

var holders = struct {
	sync.Mutex
	m map[*hosts.Host]*holder
}{m: map[*hosts.Host]*holder{}}

// Delay holds every packet h receives from the hosts in from for d, give or
// take jitter (uniform, drawn per packet), then lets it go on. Apply it on
// both ends of a link to slow both directions. Heal stops it, releasing
// the packets still held when their time is up; a run that dies closes the
// queue, and the rules' --queue-bypass then lets packets straight through.
func Delay(ctx context.Context, h *hosts.Host, from []*hosts.Host, d, jitter time.Duration) error {
	return delay(ctx, h, from, "", d, jitter)
}

// DelayFromPort is Delay for one stream only: the TCP packets h receives
// from the hosts in from whose source port is port. A replication link is
// one such stream (the replica opened it to its master's port, so the
// master's side of it comes from that port), and holding it alone leaves
// everything else between the two hosts as fast as before: a Redis
// Cluster's bus, on another port, goes on, so the cluster sees no failure
// the lag did not ask for.
func DelayFromPort(ctx context.Context, h *hosts.Host, from []*hosts.Host, port int, d, jitter time.Duration) error {
	if port <= 0 || port > 65535 {
		return fmt.Errorf("delay from port %d: not a TCP port", port)
	}
	return delay(ctx, h, from, fmt.Sprintf("-p tcp --sport %d", port), d, jitter)
}

// delay holds the packets h receives from the hosts in from that match
// (an iptables match, "" for every packet).
func delay(ctx context.Context, h *hosts.Host, from []*hosts.Host, match string, d, jitter time.Duration) error {
	switch {
	case d <= 0:
		return fmt.Errorf("delay %v: it must be positive", d)
	case jitter < 0 || jitter > d:
		return fmt.Errorf("jitter %v: it must lie between 0 and the delay (%v)", jitter, d)
	case len(from) == 0:
		return errors.New("delay: no sending host given")
	}
	holders.Lock()
	defer holders.Unlock()
	if hd := holders.m[h]; hd != nil && (hd.d != d || hd.jitter != jitter) {
		return fmt.Errorf("delay %s: already delayed by %s; heal it first", h.Name, hd)
	} else if hd == nil {
		hd, err := openHolder(h, d, jitter)
		if err != nil {
			return fmt.Errorf("delay %s: %w", h.Name, err)
		}
		holders.m[h] = hd
	}
	return cut(ctx, []way{{h, from}}, match, fmt.Sprintf("NFQUEUE --queue-num %d --queue-bypass", queueNum))
}

// openHolder binds a netlink socket made inside h's namespace to its queue
// and starts releasing what arrives.
func openHolder(h *hosts.Host, d, jitter time.Duration) (*holder, error) {
	var conn *netlink.Conn
	err := h.Do(func() (err error) {
		conn, err = netlink.Dial(unix.NETLINK_NETFILTER, nil)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("open netfilter netlink socket: %w", err)
	}
	be := binary.BigEndian
	bind := be.AppendUint16([]byte{nfqnlCfgCmdBind, 0}, unix.AF_INET)
	params := append(be.AppendUint32(nil, 0), nfqnlCopyMeta) // copy no payload
	flags := be.AppendUint32(nil, nfqaCfgFFailOpen)
	for _, attrs := range [][]netlink.Attribute{
		{{Type: nfqaCfgCmd, Data: bind}},
		{{Type: nfqaCfgParams, Data: params}, {Type: nfqaCfgMask, Data: flags}, {Type: nfqaCfgFlags, Data: flags}},
	} {
		if err := config(conn, attrs); err != nil {
			conn.Close()
			return nil, fmt.Errorf("bind netfilter queue %d: %w", queueNum, err)
		}
	}
	// Held packets' ids arrive faster than a burst can be read otherwise.
	_ = conn.SetReadBuffer(4 << 20)
	hd := &holder{conn: conn, d: d, jitter: jitter, done: make(chan struct{})}
	go hd.run()
	return hd, nil
}

// String is the delay, as "40ms ± 20ms".
func (hd *holder) String() string {
	if hd.jitter > 0 {
		return hd.d.String() + " ± " + hd.jitter.String()
	}
	return hd.d.String()
}

// message is a netfilter queue message for the lab's queue.
func message(typ uint16, flags netlink.HeaderFlags, attrs []netlink.Attribute) (netlink.Message, error) {
	b, err := netlink.MarshalAttributes(attrs)
	if err != nil {
		return netlink.Message{}, err
	}
	// struct nfgenmsg: family, version, queue number (big-endian).
	hdr := binary.BigEndian.AppendUint16([]byte{unix.AF_UNSPEC, unix.NFNETLINK_V0}, queueNum)
	return netlink.Message{
		Header: netlink.Header{Type: netlink.HeaderType(unix.NFNL_SUBSYS_QUEUE<<8 | typ), Flags: flags},
		Data:   append(hdr, b...),
	}, nil
}

func config(conn *netlink.Conn, attrs []netlink.Attribute) error {
	m, err := message(nfqnlMsgConfig, netlink.Request|netlink.Acknowledge, attrs)
	if err != nil {
		return err
	}
	_, err = conn.Execute(m)
	return err
}

// run reads held packets' ids and lets each go when its delay is up.
func (hd *holder) run() {
	defer close(hd.done)
	for {
		msgs, err := hd.conn.Receive()
		if err != nil {
			if hd.isClosed() {
				return
			}
			// ENOBUFS: the kernel dropped notices the socket had no room
			// for; fail-open has let those packets through, nothing waits.
			if errors.Is(err, unix.ENOBUFS) {
				continue
			}
			return
		}
		for _, m := range msgs {
			if m.Header.Type&0xff != nfqnlMsgPacket || len(m.Data) < 4 {
				continue
			}
			attrs, err := netlink.UnmarshalAttributes(m.Data[4:])
			if err != nil {
				continue
			}
			for _, a := range attrs {
				// struct nfqnl_msg_packet_hdr: packet id (big-endian), ...
				if a.Type&^netlink.Nested == nfqaPacketHdr && len(a.Data) >= 4 {
					hd.hold(binary.BigEndian.Uint32(a.Data))
				}
			}
		}
	}
}

func (hd *holder) hold(id uint32) {
	wait := hd.d
	if hd.jitter > 0 {
		wait += time.Duration(rand.Int64N(int64(2*hd.jitter)+1)) - hd.jitter
	}
	hd.mu.Lock()
	hd.pending++
	hd.mu.Unlock()
	time.AfterFunc(wait, func() {
		defer func() {
			hd.mu.Lock()
			hd.pending--
			hd.mu.Unlock()
		}()
		be := binary.BigEndian
		verdict := be.AppendUint32(be.AppendUint32(nil, nfAccept), id)
		if m, err := message(nfqnlMsgVerdict, netlink.Request, []netlink.Attribute{{Type: nfqaVerdictHdr, Data: verdict}}); err == nil {
			// A send that fails leaves the packet held until the socket
			// closes, when the kernel drops it: a lost packet, which TCP
			// sends again.
			_, _ = hd.conn.Send(m)
		}
	})
}

// stopDelay stops h's delay, if any. Its rules must be gone already, so
// nothing new is held: the packets still held go when their time is up
// (closing the socket first would drop them), then the queue closes. With
// drop, the queue closes at once and the kernel drops what it held.
func stopDelay(h *hosts.Host, drop bool) {
	holders.Lock()
	hd := holders.m[h]
	delete(holders.m, h)
	holders.Unlock()
	if hd == nil {
		return
	}
	if drop {
		hd.mu.Lock()
		hd.closed = true
		hd.mu.Unlock()
		hd.conn.Close()
		<-hd.done
		return
	}
	// A packet queued just before the rules went may still be on its way
	// to the read loop: a short grace before "none pending" counts.
	deadline := time.Now().Add(hd.d + hd.jitter + time.Second)
	time.Sleep(20 * time.Millisecond)
	for time.Now().Before(deadline) {
		hd.mu.Lock()
		n := hd.pending
		hd.mu.Unlock()
		if n == 0 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	hd.mu.Lock()
	hd.closed = true
	hd.mu.Unlock()
	hd.conn.Close()
	<-hd.done
}

func (hd *holder) isClosed() bool {
	hd.mu.Lock()
	defer hd.mu.Unlock()
	return hd.closed
}

// delayed describes h's delay for Faults, "" when it has none.
func delayed(h *hosts.Host) string {
	holders.Lock()
	defer holders.Unlock()
	if hd := holders.m[h]; hd != nil {
		return fmt.Sprintf("netfilter queue %d held open by the lab: packets delayed %s", queueNum, hd)
	}
	return ""
}

// Holding lists the hosts whose packets the lab still holds, in no order:
// empty once every delay was healed. A holder left open would keep its
// host's network namespace alive after the namespace is removed.
func Holding() []string {
	holders.Lock()
	defer holders.Unlock()
	var out []string
	for h := range holders.m {
		out = append(out, h.Name+" ("+h.NS+")")
	}
	return out
}
