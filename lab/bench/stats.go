package bench

import (
	"math"
	"slices"
	"time"
)

// Percentile returns the p-th percentile (0 < p <= 100) of xs by the
// nearest-rank method: the smallest value with at least p% of the values at
// or below it. It returns 0 for no values; xs is not modified.
func Percentile(xs []time.Duration, p float64) time.Duration {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return percentileSorted(s, p)
}

func percentileSorted(s []time.Duration, p float64) time.Duration {
	p = min(max(p, 0), 100)
	rank := int(math.Ceil(p / 100 * float64(len(s))))
	return s[min(max(rank-1, 0), len(s)-1)]
}

// Latency summarises durations.
type Latency struct {
	N   int           `json:"n"`
	P50 time.Duration `json:"p50_ns"`
	P99 time.Duration `json:"p99_ns"`
	Max time.Duration `json:"max_ns"`
}

// Summarize returns the p50, p99 and maximum of xs.
func Summarize(xs []time.Duration) Latency {
	if len(xs) == 0 {
		return Latency{}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return Latency{N: len(s), P50: percentileSorted(s, 50), P99: percentileSorted(s, 99), Max: s[len(s)-1]}
}

// ms returns d in milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
