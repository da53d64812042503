package bench

import (
	"testing"
	"time"
)

func TestPercentile(t *testing.T) {
	ms := func(xs ...int) []time.Duration {
		out := make([]time.Duration, len(xs))
		for i, x := range xs {
			out[i] = time.Duration(x) * time.Millisecond
		}
		return out
	}
	hundred := make([]int, 100)
	for i := range hundred {
		hundred[i] = 100 - i // 100..1, unsorted
	}
	tests := []struct {
		name string
		xs   []time.Duration
		p    float64
		want time.Duration
	}{
		{"empty", nil, 50, 0},
		{"one", ms(7), 99, 7 * time.Millisecond},
		{"median of odd", ms(3, 1, 2), 50, 2 * time.Millisecond},
		{"median of even is the lower", ms(4, 1, 3, 2), 50, 2 * time.Millisecond},
		{"p99 of 100", ms(hundred...), 99, 99 * time.Millisecond},
		{"p100 is the max", ms(hundred...), 100, 100 * time.Millisecond},
		{"p0 is the min", ms(5, 9, 1), 0, 1 * time.Millisecond},
		{"p above 100 is clamped", ms(5, 9, 1), 250, 9 * time.Millisecond},
		{"p99 of 10 is the max", ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 99, 10 * time.Millisecond},
	}
	for _, tt := range tests {
		in := append([]time.Duration(nil), tt.xs...)
		if got := Percentile(tt.xs, tt.p); got != tt.want {
			t.Errorf("%s: Percentile(p%v) = %v, want %v", tt.name, tt.p, got, tt.want)
		}
		for i := range in {
			if in[i] != tt.xs[i] {
				t.Fatalf("%s: Percentile reordered its input", tt.name)
			}
		}
	}
}

func TestSummarize(t *testing.T) {
	xs := make([]time.Duration, 200)
	for i := range xs {
		xs[i] = time.Duration(200-i) * time.Microsecond
	}
	got := Summarize(xs)
	want := Latency{N: 200, P50: 100 * time.Microsecond, P99: 198 * time.Microsecond, Max: 200 * time.Microsecond}
	if got != want {
		t.Fatalf("Summarize = %+v, want %+v", got, want)
	}
	if (Summarize(nil) != Latency{}) {
		t.Fatal("Summarize(nil) is not zero")
	}
}
