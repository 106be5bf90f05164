package benchmark

import (
	"math"
	"sort"
	"time"

	"github.com/locklab/locklab/record"
	"golang.org/x/perf/benchmath"
)

// NewStat summarises per-trial values.
func NewStat(trials []float64) record.Stat {
	if len(trials) == 0 {
		return record.Stat{Trials: []float64{}}
	}
	s := append([]float64(nil), trials...)
	sort.Float64s(s)
	st := record.Stat{Median: quantileSorted(s, 0.5), Min: s[0], Max: s[len(s)-1], Trials: append([]float64(nil), trials...)}
	sum := benchmath.AssumeNothing.Summary(benchmath.NewSample(s, &benchmath.DefaultThresholds), record.Confidence)
	if !math.IsInf(sum.Lo, 0) && !math.IsInf(sum.Hi, 0) && !math.IsNaN(sum.Lo) && !math.IsNaN(sum.Hi) {
		st.CILo, st.CIHi, st.CIConfidence = ptr(sum.Lo), ptr(sum.Hi), sum.Confidence
	}
	return st
}

// quantileSorted interpolates linearly between the two nearest ranks, so
// that the median of an even count is the mean of the middle pair.
func quantileSorted(s []float64, q float64) float64 {
	if len(s) == 0 {
		return 0
	}
	pos := q * float64(len(s)-1)
	lo := int(math.Floor(pos))
	hi := int(math.Ceil(pos))
	if lo == hi {
		return s[lo]
	}
	return s[lo] + (s[hi]-s[lo])*(pos-float64(lo))
}

// Quantiles returns the q-quantiles of durations, in milliseconds (the unit
// every latency in the report uses). An empty sample gives zeros.
func Quantiles(d []time.Duration, qs ...float64) []float64 {
	s := millis(d)
	sort.Float64s(s)
	out := make([]float64, len(qs))
	for i, q := range qs {
		out[i] = quantileSorted(s, q)
	}
	return out
}

// MaxMillis is the largest duration in milliseconds, 0 for none.
func MaxMillis(d []time.Duration) float64 {
	var m time.Duration
	for _, x := range d {
		if x > m {
			m = x
		}
	}
	return ms(m)
}

func millis(d []time.Duration) []float64 {
	out := make([]float64, len(d))
	for i, x := range d {
		out[i] = ms(x)
	}
	return out
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// Jain is Jain's fairness index over per-client counts: 1 when every client
// got the same share, 1/n when one client got everything.
func Jain(counts []int) float64 {
	var sum, sq float64
	for _, c := range counts {
		sum += float64(c)
		sq += float64(c) * float64(c)
	}
	if sq == 0 {
		return 0
	}
	return sum * sum / (float64(len(counts)) * sq)
}
