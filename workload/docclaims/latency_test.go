package docclaims

import (
	"testing"
	"time"
)

// TestSummarise: nearest-rank percentiles, so a lone stall shows in the
// maximum and, past a hundred samples, not in the p99: the slow-script
// page reads both.
func TestSummarise(t *testing.T) {
	many := make([]time.Duration, 200)
	for i := range many {
		many[i] = time.Millisecond
	}
	many[7] = 200 * time.Millisecond
	tests := []struct {
		name string
		in   []time.Duration
		want Latency
	}{
		{"none", nil, Latency{}},
		{"one", []time.Duration{3 * time.Millisecond}, Latency{N: 1, P50: 3, P99: 3, Max: 3}},
		{"odd", []time.Duration{3 * time.Millisecond, time.Millisecond, 2 * time.Millisecond}, Latency{N: 3, P50: 2, P99: 3, Max: 3}},
		{"one stall in many", many, Latency{N: 200, P50: 1, P99: 1, Max: 200}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := summarise(tt.in); got != tt.want {
				t.Errorf("summarise = %+v, want %+v", got, tt.want)
			}
		})
	}
}
