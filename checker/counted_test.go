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
