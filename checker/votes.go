package checker

// Lesson 17 measures the source documents' last claims about Redlock and
// a lease by counts too, on servers the engine starts: races of clients
// for a free lock whose votes may split, acquires with some of the
// lock's five nodes stalled, clients waiting for a contended lock within
// a budget, and a holder refreshing its lease while a slow script blocks
// its Redis. How long each took is the lesson page's to describe; what
// the counts must be for the lock to have kept to its rule (a grant in
// every race, a majority's vote for every grant, some progress, a holder
// that knows when it lost its lease) and the verdict they give are the
// checker's (JudgeVoteRaces, JudgeQuorumAcquires, JudgeProgress,
// JudgeLeaseViews).

// JudgeVoteRaces is the verdict on races of clients for a free lock
// (granted: whether each race granted it to someone within its bound):
// stuck when a race ended its bound with no grant although every racer
// asked for a free lock (split votes that never resolve, a livelock), and
// safe when every race granted it. bad is the first race that gave the
// verdict, -1 when every race was safe; no race at all is inconclusive.
func JudgeVoteRaces(granted []bool) (v Verdict, bad int) {
	if len(granted) == 0 {
		return Inconclusive, -1
	}
	return judgeEach(len(granted), func(i int) Verdict {
		if granted[i] {
			return Safe
		}
		return Stuck
	})
}

// QuorumAcquires are the uncontended acquires of a lock on Nodes nodes
// with Down of them stalled: how many were granted and how many refused.
type QuorumAcquires struct{ Nodes, Down, Granted, Refused int }

// HasMajority reports whether the nodes left running are a majority of
// all of them, as a grant needs.
func (q QuorumAcquires) HasMajority() bool { return q.Nodes-q.Down >= q.Nodes/2+1 }

// JudgeQuorumAcquires is the verdict on a majority lock's acquires with
// none to a majority of its nodes stalled, one row per count: unsafe when
// a row without a running majority granted (a grant no majority voted
// for), stuck when a row with one refused (a running majority must grant
// a lock nobody holds), inconclusive when a row tried nothing, and safe
// when every row kept to the rule: each acquire granted with a majority
// running and each refused without one (that refusal is the lock being
// unavailable as a consistent lock must be, so the row is safe). bad is
// the first row that gave the verdict, -1 when every row was safe; no row
// at all is inconclusive.
func JudgeQuorumAcquires(rows []QuorumAcquires) (v Verdict, bad int) {
	if len(rows) == 0 {
		return Inconclusive, -1
	}
	return judgeEach(len(rows), func(i int) Verdict {
		r := rows[i]
		switch {
		case r.Granted+r.Refused == 0:
			return Inconclusive
		case r.HasMajority() && r.Refused > 0:
			return Stuck
		case !r.HasMajority() && r.Granted > 0:
			return Unsafe
		}
		return Safe
	})
}

// JudgeProgress is the verdict on a measurement that must make some
// progress to show anything (grants of a contended lock, trials that
// took it): inconclusive with none, safe otherwise. The counts alone
// show no overlap; what the measurement shows beyond progress is its
// page's to describe.
func JudgeProgress(granted int) Verdict {
	if granted == 0 {
		return Inconclusive
	}
	return Safe
}

// LeaseView is what a holder's refresh said of its lease and what the
// server showed: whether the refresh failed, and whether another client
// was then granted the lock.
type LeaseView struct{ RefreshFailed, TakenByOther bool }

// JudgeLeaseViews is the verdict on holders' refreshes: inconclusive when
// a holder's view disagreed with the server's (RefreshMatchesKey: a
// refresh that succeeded while another client took the lock, or one that
// failed while nobody could), which the counts cannot tell safe or not,
// as in JudgeTakeover; safe when every view agreed. bad is the first view
// that gave the verdict, -1 when every one agreed; no view at all is
// inconclusive.
func JudgeLeaseViews(views []LeaseView) (v Verdict, bad int) {
	if len(views) == 0 {
		return Inconclusive, -1
	}
	return judgeEach(len(views), func(i int) Verdict {
		if RefreshMatchesKey(views[i].TakenByOther, views[i].RefreshFailed) {
			return Safe
		}
		return Inconclusive
	})
}
