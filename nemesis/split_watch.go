package nemesis

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/locklab/locklab/cluster"
)

// The watch of a split brain (split-brain-with-clients): from the lab's
// vantage point, which no cut reaches, it writes a probe key on the old
// master every splitWatchEvery and reads the other Redis servers' roles,
// so that the record of the split says, in the servers' own answers, when
// a replica became master and until when the old master accepted writes.
// What the clients saw is the history's; this is what the servers did.

// splitWatchEvery is how often the watch asks: a tenth of Sentinel's
// down-after, fine enough to place a promotion and a first refusal
// within the lab's 1 s lease.
const splitWatchEvery = 50 * time.Millisecond

// splitSeen is what one watch saw.
type splitSeen struct {
	master  string
	lasted  time.Duration
	noWatch string // why there was no watch, if there was none
	// promoted is the server first seen as master besides the old one,
	// and when (from the cut); promotedAt < 0: none.
	promoted   string
	promotedAt time.Duration
	// The probe's writes on the old master: accepted, refused with the
	// server's reply, or unanswered within the probe's wait.
	accepted, refused, unanswered int
	lastAccepted, firstRefused    time.Duration // < 0: none
	refusal                       string
	// watched names the servers whose roles were read; roleErr is the
	// first read of one that failed.
	watched []string
	roleErr string
}

func (s splitSeen) String() string {
	if s.noWatch != "" {
		return "not watched: " + s.noWatch
	}
	var parts []string
	if s.promotedAt >= 0 {
		parts = append(parts, fmt.Sprintf("%s promoted (role master) %v into the split", s.promoted, s.promotedAt.Round(time.Millisecond)))
	} else {
		parts = append(parts, fmt.Sprintf("none of %s seen promoted in %v", strings.Join(s.watched, ", "), s.lasted.Round(time.Millisecond)))
		if s.roleErr != "" {
			parts = append(parts, "a role read failed: "+s.roleErr)
		}
	}
	switch {
	case s.accepted == 0:
		parts = append(parts, fmt.Sprintf("%s accepted none of the probe's writes", s.master))
	case s.refused == 0:
		parts = append(parts, fmt.Sprintf("%s accepted the probe's writes to the end (%d, the last %v in)",
			s.master, s.accepted, s.lastAccepted.Round(time.Millisecond)))
	default:
		parts = append(parts, fmt.Sprintf("%s accepted %d probe writes, the last %v in", s.master, s.accepted, s.lastAccepted.Round(time.Millisecond)))
	}
	if s.refused > 0 {
		parts = append(parts, fmt.Sprintf("refused %d from %v in (%s)", s.refused, s.firstRefused.Round(time.Millisecond), s.refusal))
	}
	if s.unanswered > 0 {
		parts = append(parts, fmt.Sprintf("%d unanswered", s.unanswered))
	}
	return strings.Join(parts, "; ")
}

// figures are what the watch saw as a run's figures, in milliseconds from
// the cut; -1 for what never happened.
func (s splitSeen) figures() map[string]float64 {
	if s.noWatch != "" || s.master == "" {
		return nil
	}
	return map[string]float64{
		"split-ms":                   fromCutMillis(s.lasted),
		"promoted-ms":                fromCutMillis(s.promotedAt),
		"old-master-last-write-ms":   fromCutMillis(s.lastAccepted),
		"old-master-refused-from-ms": fromCutMillis(s.firstRefused),
		"old-master-writes-accepted": float64(s.accepted),
		"old-master-writes-refused":  float64(s.refused),
	}
}

// splitWatch is a running watch of a Redis split.
type splitWatch struct{ *watch[splitSeen] }

// splitWatches are the runs' watches, by old master.
var splitWatches watches[splitSeen]

// watchSplit starts watching the split of the master called name.
func watchSplit(sys System, name string) error {
	master, err := sys.Server(name)
	if err != nil {
		return err
	}
	probe, err := cluster.ProbeWrites(master)
	if err != nil {
		return err
	}
	var others []*cluster.ReplicationWatch
	var names []string
	for _, other := range sys.LockServers() {
		n, err := sys.Server(other)
		if err != nil || other == name || rolesOf(n.Kind).Directs {
			continue
		}
		// Every other server that reports a replication role (a
		// Sentinel group's replicas, a Redis Cluster's members).
		rw, err := cluster.WatchReplication(n)
		if err != nil {
			continue
		}
		others, names = append(others, rw), append(names, other)
	}
	w := splitWatch{newWatch(splitSeen{master: name, promotedAt: -1, lastAccepted: -1, firstRefused: -1, watched: names})}
	splitWatches.put(master, w.watch)
	go w.run(probe, others, names)
	return nil
}

func (w splitWatch) run(probe *cluster.WriteProbe, others []*cluster.ReplicationWatch, names []string) {
	defer close(w.done)
	defer probe.Close()
	for _, o := range others {
		defer o.Close()
	}
	start := time.Now()
	tick := time.NewTicker(splitWatchEvery)
	defer tick.Stop()
	for {
		w.ask(start, probe, others, names)
		select {
		case <-w.stop:
			w.see(func(s *splitSeen) { s.lasted = time.Since(start) })
			return
		case <-tick.C:
		}
	}
}

// ask writes once on the old master and, until a promotion is seen, reads
// each other server's role once.
func (w splitWatch) ask(start time.Time, probe *cluster.WriteProbe, others []*cluster.ReplicationWatch, names []string) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*splitWatchEvery)
	defer cancel()
	at := time.Since(start)
	refused, err := probe.Write(ctx)
	promotedYet := false
	w.see(func(s *splitSeen) {
		switch {
		case err != nil:
			s.unanswered++
		case refused != "":
			s.refused++
			if s.firstRefused < 0 {
				s.firstRefused, s.refusal = at, refused
			}
		default:
			s.accepted++
			s.lastAccepted = at
		}
		promotedYet = s.promotedAt >= 0
	})
	if promotedYet {
		return
	}
	for i, o := range others {
		r, err := o.Read(ctx)
		if err == nil && r.Role == "master" {
			w.see(func(s *splitSeen) { s.promoted, s.promotedAt = names[i], time.Since(start) })
			return
		}
		if err != nil {
			w.see(func(s *splitSeen) {
				if s.roleErr == "" {
					s.roleErr = err.Error()
				}
			})
		}
	}
}

// endWatch stops the watch of the master called name and says what it
// saw; the figures stay for takeWatched.
func endWatch(sys System, name string) splitSeen {
	master, err := sys.Server(name)
	if err != nil {
		return splitSeen{noWatch: err.Error()}
	}
	return splitWatches.end(master, splitSeen{noWatch: "no watch ran"})
}

// takeWatched is what the watch of the master called name saw, once it
// ended, and forgets it.
func takeWatched(sys System, name string) splitSeen {
	master, err := sys.Server(name)
	if err != nil {
		return splitSeen{noWatch: err.Error()}
	}
	return splitWatches.take(master, splitSeen{noWatch: "no watch ran"})
}

// fromCutMillis is a watch's moment as a figure: milliseconds from the
// cut, or -1 for what never happened (a negative moment).
func fromCutMillis(d time.Duration) float64 {
	if d < 0 {
		return -1
	}
	return float64(d.Milliseconds())
}
