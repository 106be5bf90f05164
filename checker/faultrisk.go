package checker

import lin "github.com/locklab/locklab/linearizability"

// faultsExercised judges a run with no rule of its own, such as explore's
// random schedule, fault by fault, each by the rule its kind declared
// (lin.Injection.Risk). It never decides the verdict: a random schedule
// is not a claim that its faults bit, so its safe rows only say how many
// did. The windows it opens go on the timeline as a scenario's do.
func faultsExercised(in Input) Exercise {
	ex := Exercise{Opened: true}
	fi := -1
	for _, f := range in.Events {
		if f.Kind != lin.Fault {
			continue
		}
		fi++
		if f.Injection == nil || f.Injection.Risk == "" {
			continue
		}
		bit := false
		switch r := Risk(f.Injection.Risk); r {
		case RiskAtStrike, RiskAtPromotion, RiskAtExpiry:
			x := exposure(in.Events, f, fi, r, in.Claim, in.TTL, nil)
			ex.Exposures = append(ex.Exposures, x)
			bit = x.Exercised()
		case RiskRecovery:
			bit = strikesAHolder(in.Events, f) && grantedToAnotherAfter(in.Events, f)
		case RiskContention:
			bit = contendedDuring(in.Events, f.Time, max(f.End, f.Time))
		case RiskBothSides:
			// Judged on the run's splits, each read off its own record.
			bit = bothSidesExercised(in.Events).Exercised
		default:
			continue
		}
		ex.Faults++
		if bit {
			ex.FaultsExercised++
		}
	}
	return ex
}

// grantedToAnotherAfter reports whether a client the fault did not strike
// was granted the lock after it struck.
func grantedToAnotherAfter(events []lin.Event, f lin.Event) bool {
	for _, e := range events {
		if e.Kind != lin.Acquired || e.Time <= f.Time {
			continue
		}
		struck := false
		if f.Injection != nil {
			for _, c := range f.Injection.Clients {
				struck = struck || c == e.Client
			}
		}
		if !struck {
			return true
		}
	}
	return false
}

// contendedDuring reports whether two clients began acts on the resource
// between from and to.
func contendedDuring(events []lin.Event, from, to int64) bool {
	first := -1
	for _, e := range events {
		if e.Kind != lin.Call || e.Time < from || e.Time > to {
			continue
		}
		if first < 0 {
			first = e.Client
		} else if e.Client != first {
			return true
		}
	}
	return false
}
