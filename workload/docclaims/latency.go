package docclaims

import (
	"sort"
	"time"
)

// Latency summarises samples in milliseconds.
type Latency struct {
	N   int     `json:"n"`
	P50 float64 `json:"p50_ms"`
	P99 float64 `json:"p99_ms"`
	Max float64 `json:"max_ms"`
}

// summarise is the nearest-rank p50, p99 and max of samples.
func summarise(samples []time.Duration) Latency {
	if len(samples) == 0 {
		return Latency{}
	}
	s := append([]time.Duration(nil), samples...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	rank := func(p float64) float64 {
		i := int(p*float64(len(s))+0.999999) - 1
		i = max(0, min(i, len(s)-1))
		return ms(s[i])
	}
	return Latency{N: len(s), P50: rank(0.50), P99: rank(0.99), Max: ms(s[len(s)-1])}
}

// ms rounds a duration to a tenth of a millisecond, as the pages print it.
func ms(d time.Duration) float64 {
	return float64(d.Round(100*time.Microsecond)) / float64(time.Millisecond)
}
