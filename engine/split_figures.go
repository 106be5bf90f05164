package engine

import (
	"fmt"
	"strings"
	"time"

	"github.com/locklab/locklab/checker"
	lin "github.com/locklab/locklab/linearizability"
)

// splitFigures counts, for every split that took clients to the old
// master's side (checker.SplitsOf), the grants each side was given inside
// it and when the old side's last and the other side's first came, as
// figures and in the detail: what a split brain's two masters granted,
// beside what the servers did (the fault's own figures, nemesis.Measurer).
func splitFigures(events []lin.Event, out *Outcome) {
	ms := func(d time.Duration) float64 {
		if d < 0 {
			return -1
		}
		return float64(d.Milliseconds())
	}
	var details []string
	for _, s := range checker.SplitsOf(events) {
		out.Figures["grants-old-side"] += float64(s.OldGrants)
		out.Figures["grants-new-side"] += float64(s.NewGrants)
		out.Figures["old-side-last-grant-ms"] = ms(s.OldLast)
		out.Figures["new-side-first-grant-ms"] = ms(s.NewFirst)
		details = append(details, fmt.Sprintf("split: old side (clients %v) %d grants, the last %v in; other side %d, the first %v in",
			s.Old, s.OldGrants, s.OldLast.Round(time.Millisecond), s.NewGrants, s.NewFirst.Round(time.Millisecond)))
	}
	if len(details) > 0 {
		if out.Detail != "" {
			details = append([]string{out.Detail}, details...)
		}
		out.Detail = strings.Join(details, "; ")
	}
}
