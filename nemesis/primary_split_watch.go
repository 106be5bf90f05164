package nemesis

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/locklab/locklab/cluster"
)

// The watch of a database split brain (primary-split-with-clients): from
// the lab's vantage point, which no cut reaches, it commits a probe write
// on the old primary every splitWatchEvery, one at a time: a commit that
// waits for a replica cut off (a synchronous standby, a semi-synchronous
// acknowledgement) is left to wait, and no other is asked meanwhile, so
// the server is never handed a pile of waiting sessions. The record then
// says, in the server's own answers, until when the old primary committed
// and from when its commits waited, and for how long.

// primarySeen is what one watch saw.
type primarySeen struct {
	primary string
	noWatch string // why there was no watch, if there was none
	lasted  time.Duration
	// promoted is the replica the lab promoted, and when (from the cut).
	promoted   string
	promotedAt time.Duration // < 0: not promoted
	// The probe's commits: answered (committed), refused with the
	// server's reply, or still waiting when the watch ended.
	committed, refused        int
	lastCommitted, lastAnswer time.Duration // asked, answered; < 0: none
	longest, longestAsked     time.Duration // the longest wait answered, and when it was asked
	waitingSince              time.Duration // asked, unanswered at the end; < 0: none
	firstRefused              time.Duration
	refusal, lost             string
	lostCount                 int
}

func (s primarySeen) String() string {
	if s.noWatch != "" {
		return "not watched: " + s.noWatch
	}
	var parts []string
	if s.promotedAt >= 0 {
		parts = append(parts, fmt.Sprintf("%s promoted %v into the split", s.promoted, s.promotedAt.Round(time.Millisecond)))
	}
	ms := func(d time.Duration) time.Duration { return d.Round(time.Millisecond) }
	if s.committed == 0 {
		parts = append(parts, s.primary+" committed none of the probe's writes")
	} else {
		parts = append(parts, fmt.Sprintf("%s committed %d probe writes, the last asked %v in and answered %v in",
			s.primary, s.committed, ms(s.lastCommitted), ms(s.lastAnswer)))
	}
	if s.longest >= time.Second {
		parts = append(parts, fmt.Sprintf("a commit asked %v in waited %v", ms(s.longestAsked), ms(s.longest)))
	}
	if s.waitingSince >= 0 {
		parts = append(parts, fmt.Sprintf("a commit asked %v in was still waiting at the heal, %v in", ms(s.waitingSince), ms(s.lasted)))
	}
	if s.refused > 0 {
		parts = append(parts, fmt.Sprintf("refused %d from %v in (%s)", s.refused, ms(s.firstRefused), s.refusal))
	}
	if s.lostCount > 0 {
		parts = append(parts, fmt.Sprintf("%d lost (%s)", s.lostCount, s.lost))
	}
	return strings.Join(parts, "; ")
}

// figures are what the watch saw as a run's figures, in milliseconds from
// the cut; -1 for what never happened.
func (s primarySeen) figures() map[string]float64 {
	if s.noWatch != "" || s.primary == "" {
		return nil
	}
	return map[string]float64{
		"split-ms":                      fromCutMillis(s.lasted),
		"promoted-ms":                   fromCutMillis(s.promotedAt),
		"old-primary-commits":           float64(s.committed),
		"old-primary-last-commit-ms":    fromCutMillis(s.lastCommitted),
		"old-primary-longest-commit-ms": fromCutMillis(s.longest),
		"old-primary-waiting-from-ms":   fromCutMillis(s.waitingSince),
		"old-primary-commits-refused":   float64(s.refused),
		"old-primary-refused-from-ms":   fromCutMillis(s.firstRefused),
	}
}

// primaryWatch is a running watch of a database split; its times count
// from start.
type primaryWatch struct {
	*watch[primarySeen]
	start time.Time
}

// primaryWatches are the runs' watches, by old primary.
var primaryWatches watches[primarySeen]

// watchPrimary opens the probe on primary and starts watching; its times
// count from its return.
func watchPrimary(ctx context.Context, primary *cluster.Node) (*primaryWatch, error) {
	probe, err := cluster.ProbePrimaryWrites(ctx, primary)
	if err != nil {
		// A watch that never started: ending it says why.
		primaryWatches.put(primary, &watch[primarySeen]{seen: primarySeen{noWatch: err.Error()}})
		return nil, err
	}
	w := &primaryWatch{start: time.Now(), watch: newWatch(primarySeen{primary: primary.Name, promotedAt: -1,
		lastCommitted: -1, lastAnswer: -1, longest: -1, longestAsked: -1, waitingSince: -1, firstRefused: -1})}
	primaryWatches.put(primary, w.watch)
	go w.run(probe)
	return w, nil
}

// promoted records the promotion of the replica called name, now.
func (w *primaryWatch) promoted(name string) {
	at := time.Since(w.start)
	w.see(func(s *primarySeen) { s.promoted, s.promotedAt = name, at })
}

// run asks one commit at a time: the next is asked on the first tick
// after the last was answered. At the stop, a commit still waiting is
// given up (its connection cut) and recorded as waiting.
func (w *primaryWatch) run(probe *cluster.PrimaryWriteProbe) {
	defer close(w.done)
	defer probe.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tick := time.NewTicker(splitWatchEvery)
	defer tick.Stop()
	type answer struct {
		refused string
		err     error
	}
	var (
		answers = make(chan answer, 1)
		asked   time.Duration
		waiting bool
	)
	for {
		if !waiting {
			asked, waiting = time.Since(w.start), true
			go func() {
				refused, err := probe.Write(ctx)
				answers <- answer{refused, err}
			}()
		}
		select {
		case <-w.stop:
			cancel()
			lasted := time.Since(w.start)
			w.see(func(s *primarySeen) {
				s.lasted = lasted
				if waiting {
					s.waitingSince = asked
				}
			})
			if waiting {
				<-answers // the write's context is done: it returns
			}
			return
		case a := <-answers:
			waiting = false
			w.record(asked, time.Since(w.start), a.refused, a.err)
		}
		select {
		case <-w.stop:
			lasted := time.Since(w.start)
			w.see(func(s *primarySeen) { s.lasted = lasted })
			return
		case <-tick.C:
		}
	}
}

// record counts one answered (or lost) commit, asked and answered at
// those times from the cut.
func (w *primaryWatch) record(asked, answered time.Duration, refused string, err error) {
	w.see(func(s *primarySeen) {
		switch {
		case err != nil:
			s.lostCount++
			if s.lost == "" {
				s.lost = err.Error()
			}
		case refused != "":
			s.refused++
			if s.firstRefused < 0 {
				s.firstRefused, s.refusal = asked, refused
			}
		default:
			s.committed++
			s.lastCommitted, s.lastAnswer = asked, answered
			if took := answered - asked; took > s.longest {
				s.longest, s.longestAsked = took, asked
			}
		}
	})
}

// endPrimaryWatch stops the watch of primary and says what it saw; the
// figures stay for takePrimaryWatched.
func endPrimaryWatch(primary *cluster.Node) primarySeen {
	return primaryWatches.end(primary, primarySeen{noWatch: "no watch ran"})
}

// takePrimaryWatched is what the watch of primary saw, once it ended, and
// forgets it.
func takePrimaryWatched(primary *cluster.Node) primarySeen {
	return primaryWatches.take(primary, primarySeen{noWatch: "no watch ran"})
}
