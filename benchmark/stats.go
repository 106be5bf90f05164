package benchmark

import (
	"math"
	"sort"
	"time"
)

// Stat is one figure measured over several trials: the median is what the
// report shows, the min and max are the spread beside it, because a single
// trial on a shared machine says little.
type Stat struct {
	Median float64   `json:"median"`
	Min    float64   `json:"min"`
	Max    float64   `json:"max"`
	Trials []float64 `json:"trials"`
}

// NewStat summarises per-trial values.
func NewStat(trials []float64) Stat {
	if len(trials) == 0 {
		return Stat{Trials: []float64{}}
	}
	s := append([]float64(nil), trials...)
	sort.Float64s(s)
	return Stat{Median: quantileSorted(s, 0.5), Min: s[0], Max: s[len(s)-1], Trials: append([]float64(nil), trials...)}
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
