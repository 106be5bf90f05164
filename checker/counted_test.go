package checker

import "testing"

func TestSoldExactly(t *testing.T) {
	tests := []struct {
		name                   string
		stock, sold, remaining int
		want                   bool
	}{
		{"every item once", 100, 100, 0, true},
		{"oversold", 100, 103, 0, false},
		{"sold short, stock left", 100, 98, 2, false},
		{"sold short, stock gone", 100, 98, 0, false},
		{"sold out but the row says otherwise", 100, 100, 1, false},
		{"nothing to sell", 0, 0, 0, true},
	}
	for _, tc := range tests {
		if got := SoldExactly(tc.stock, tc.sold, tc.remaining); got != tc.want {
			t.Errorf("%s: SoldExactly(%d, %d, %d) = %v, want %v", tc.name, tc.stock, tc.sold, tc.remaining, got, tc.want)
		}
	}
}

func TestOneWinner(t *testing.T) {
	tests := []struct {
		winners int
		want    bool
	}{
		{0, false},
		{1, true},
		{2, false},
	}
	for _, tc := range tests {
		if got := OneWinner(tc.winners); got != tc.want {
			t.Errorf("OneWinner(%d) = %v, want %v", tc.winners, got, tc.want)
		}
	}
}

func TestRefreshMatchesKey(t *testing.T) {
	tests := []struct {
		overwritten, refused, want bool
	}{
		{false, false, true},
		{true, true, true},
		{false, true, false},
		{true, false, false},
	}
	for _, tc := range tests {
		if got := RefreshMatchesKey(tc.overwritten, tc.refused); got != tc.want {
			t.Errorf("RefreshMatchesKey(overwritten %v, refused %v) = %v, want %v", tc.overwritten, tc.refused, got, tc.want)
		}
	}
}

// A sale's verdict is its worst trial's, and names the first trial that
// gave it.
func TestJudgeSale(t *testing.T) {
	exact := SaleTrial{Stock: 100, Sold: 100}
	tests := []struct {
		name   string
		trials []SaleTrial
		want   Verdict
		bad    int
	}{
		{"no trial", nil, Inconclusive, -1},
		{"every trial exact", []SaleTrial{exact, exact}, Safe, -1},
		{"oversold", []SaleTrial{exact, {Stock: 100, Sold: 103}}, Unsafe, 1},
		{"stock left", []SaleTrial{{Stock: 100, Sold: 98, Remaining: 2}, exact}, Inconclusive, 0},
		{"oversold outranks stock left", []SaleTrial{{Stock: 100, Sold: 98, Remaining: 2}, {Stock: 100, Sold: 101}, {Stock: 100, Sold: 102}}, Unsafe, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if v, bad := JudgeSale(tc.trials); v != tc.want || bad != tc.bad {
				t.Errorf("JudgeSale = %s, trial %d; want %s, trial %d", v, bad, tc.want, tc.bad)
			}
		})
	}
}

// A race's verdict is its worst round's: two winners whose leases ran at
// once (or two untimed) unsafe, none stuck, two grants the times cannot
// place, or a refresh within the lease that disagrees with the key,
// inconclusive. A second winner asked after the first's lease ended took
// over an expired lease: safe, as is a refresh refused after the lease.
func TestJudgeTakeover(t *testing.T) {
	won := TakeoverRound{Winners: 1}
	overwritten := TakeoverRound{Winners: 1, Overwritten: true, RefreshRefused: true}
	late := TakeoverGrant{Start: 112 * msec, Reply: 113 * msec, Lease: 100 * msec}
	tests := []struct {
		name   string
		rounds []TakeoverRound
		want   Verdict
		bad    int
	}{
		{"no round", nil, Inconclusive, -1},
		{"one winner, its key overwritten or not", []TakeoverRound{won, overwritten}, Safe, -1},
		{"refresh accepted on an overwritten key", []TakeoverRound{won, {Winners: 1, Overwritten: true}}, Inconclusive, 1},
		{"no winner", []TakeoverRound{{}, won}, Stuck, 0},
		{"two winners, untimed", []TakeoverRound{{}, won, {Winners: 2}}, Unsafe, 2},
		{"two winners in the same race", []TakeoverRound{won, {Winners: 2, Grants: []TakeoverGrant{first, {Start: 0, Reply: 2 * msec, Lease: 100 * msec}}}}, Unsafe, 1},
		{"the second granted while the first's lease ran", []TakeoverRound{{Winners: 2, Grants: []TakeoverGrant{first, {Start: 85 * msec, Reply: 86 * msec, Lease: 100 * msec}}}}, Unsafe, 0},
		{"the second asked after the first's lease ended", []TakeoverRound{won, {Winners: 2, Grants: []TakeoverGrant{first, late}, RefreshReply: 114 * msec}}, Safe, -1},
		{"the second's request straddles the first's lease end", []TakeoverRound{{Winners: 2, Grants: []TakeoverGrant{first, {Start: 99 * msec, Reply: 101 * msec, Lease: 100 * msec}}}}, Inconclusive, 0},
		{"a late takeover whose refresh disagrees with the key", []TakeoverRound{{Winners: 2, Grants: []TakeoverGrant{first, late}, RefreshRefused: true, RefreshReply: 114 * msec}}, Inconclusive, 0},
		{"a refresh refused after its lease ended, key intact", []TakeoverRound{{Winners: 1, Grants: []TakeoverGrant{first}, RefreshRefused: true, RefreshReply: 115 * msec}}, Safe, -1},
		{"a refresh refused within its lease, key intact", []TakeoverRound{{Winners: 1, Grants: []TakeoverGrant{first}, RefreshRefused: true, RefreshReply: 3 * msec}}, Inconclusive, 0},
		{"overlap outranks an unplaced straddle", []TakeoverRound{{Winners: 2, Grants: []TakeoverGrant{first, {Start: 99 * msec, Reply: 101 * msec, Lease: 100 * msec}}}, {Winners: 2, Grants: []TakeoverGrant{first, first}}}, Unsafe, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if v, bad := JudgeTakeover(tc.rounds); v != tc.want || bad != tc.bad {
				t.Errorf("JudgeTakeover = %s, round %d; want %s, round %d", v, bad, tc.want, tc.bad)
			}
		})
	}
}

// A measurement of several sales or races takes the worst part's verdict
// and names the first part and piece that gave it; one of no parts is
// inconclusive, and a part of none is too.
func TestJudgeParts(t *testing.T) {
	exact, over := SaleTrial{Stock: 2, Sold: 2}, SaleTrial{Stock: 2, Sold: 3}
	won, two := TakeoverRound{Winners: 1}, TakeoverRound{Winners: 2}
	tests := []struct {
		name     string
		sales    [][]SaleTrial
		races    [][]TakeoverRound
		want     Verdict
		part, at int
	}{
		{"no part", nil, nil, Inconclusive, -1, -1},
		{"every part safe", [][]SaleTrial{{exact}, {exact, exact}}, [][]TakeoverRound{{won}, {won}}, Safe, -1, -1},
		{"the second part's second piece", [][]SaleTrial{{exact}, {exact, over}}, [][]TakeoverRound{{won}, {won, two}}, Unsafe, 1, 1},
		{"a part of no piece", [][]SaleTrial{{exact}, nil}, [][]TakeoverRound{{won}, nil}, Inconclusive, 1, -1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if v, part, at := JudgeSales(tc.sales); v != tc.want || part != tc.part || at != tc.at {
				t.Errorf("JudgeSales = %s, %d, %d; want %s, %d, %d", v, part, at, tc.want, tc.part, tc.at)
			}
			if v, part, at := JudgeTakeovers(tc.races); v != tc.want || part != tc.part || at != tc.at {
				t.Errorf("JudgeTakeovers = %s, %d, %d; want %s, %d, %d", v, part, at, tc.want, tc.part, tc.at)
			}
		})
	}
}
