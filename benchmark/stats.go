package benchmark

import (
	"math"
	"sort"
	"time"

	"golang.org/x/perf/benchmath"
)

// Confidence is the level of every interval in the report, as benchstat's.
const Confidence = 0.95

// WideInterval is the half-width, as a fraction of the median, beyond which
// a figure is flagged: its trials disagree too much to be quoted alone.
const WideInterval = 0.10

// Stat is one figure measured over several trials: the median is what the
// report shows, with benchstat's distribution-free confidence interval of
// the median (golang.org/x/perf/benchmath, AssumeNothing): benchmark
// figures on a shared machine are not normal, and one trial says little.
// Min and max stay as the raw spread.
type Stat struct {
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	// CILo and CIHi bound the median at CIConfidence (at least Confidence);
	// absent when there are too few trials for a finite interval (6 are
	// needed at 95%).
	CILo         *float64  `json:"ci_lo,omitempty"`
	CIHi         *float64  `json:"ci_hi,omitempty"`
	CIConfidence float64   `json:"ci_confidence,omitempty"`
	Trials       []float64 `json:"trials"`
}

// NewStat summarises per-trial values.
func NewStat(trials []float64) Stat {
	if len(trials) == 0 {
		return Stat{Trials: []float64{}}
	}
	s := append([]float64(nil), trials...)
	sort.Float64s(s)
	st := Stat{Median: quantileSorted(s, 0.5), Min: s[0], Max: s[len(s)-1], Trials: append([]float64(nil), trials...)}
	sum := benchmath.AssumeNothing.Summary(benchmath.NewSample(s, &benchmath.DefaultThresholds), Confidence)
	if !math.IsInf(sum.Lo, 0) && !math.IsInf(sum.Hi, 0) && !math.IsNaN(sum.Lo) && !math.IsNaN(sum.Hi) {
		st.CILo, st.CIHi, st.CIConfidence = ptr(sum.Lo), ptr(sum.Hi), sum.Confidence
	}
	return st
}

// HalfWidth is the confidence interval's larger distance from the median,
// as a fraction of it (benchstat's ±x%); ok is false when there is no
// finite interval or no positive median to relate it to.
func (s Stat) HalfWidth() (frac float64, ok bool) {
	if s.CILo == nil || s.CIHi == nil || s.Median <= 0 {
		return 0, false
	}
	return math.Max(*s.CIHi/s.Median-1, 1-*s.CILo/s.Median), true
}

// Wide reports a figure whose interval is wider than ±WideInterval, or that
// has no interval at all although it was measured more than once.
func (s Stat) Wide() bool {
	f, ok := s.HalfWidth()
	if !ok {
		return len(s.Trials) > 1 && s.Median > 0
	}
	return f > WideInterval
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
