package leader

import (
	"testing"
	"time"
)

func TestBackoffNext(t *testing.T) {
	const ms = time.Millisecond
	type step struct {
		lasted time.Duration
		failed bool
		rnd    float64
		want   time.Duration
	}
	tests := []struct {
		name         string
		initial, max time.Duration
		steps        []step
	}{
		{"doubles to the cap, jittered within [d/2, d]", 100 * ms, 800 * ms, []step{
			{0, true, 0, 50 * ms},
			{0, true, 0.999999, 200 * ms},
			{0, true, 0.5, 300 * ms},
			{0, true, 0, 400 * ms},
			{0, true, 0, 400 * ms}, // capped at 800
		}},
		{"a nil return resets", 100 * ms, time.Second, []step{
			{0, true, 0, 50 * ms},
			{0, true, 0, 100 * ms},
			{0, false, 0, 0},
			{0, true, 0, 50 * ms},
		}},
		{"a term that lasted the cap resets", 100 * ms, time.Second, []step{
			{0, true, 0, 50 * ms},
			{0, true, 0, 100 * ms},
			{time.Second, true, 0, 0},
			{10 * ms, true, 0, 50 * ms},
		}},
		{"off", 0, time.Second, []step{
			{0, true, 0, 0},
			{0, true, 0.9, 0},
		}},
		{"cap below initial is the initial", 100 * ms, 10 * ms, []step{
			{0, true, 0, 50 * ms},
			{0, true, 0, 50 * ms},
			{100 * ms, true, 0, 0},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := backoff{initial: tt.initial, max: tt.max}
			for i, s := range tt.steps {
				got := b.next(s.lasted, s.failed, func() float64 { return s.rnd })
				// rnd just below 1 lands within a nanosecond-scale rounding of d.
				if diff := got - s.want; diff < -time.Microsecond || diff > time.Microsecond {
					t.Fatalf("step %d: %v, want %v", i, got, s.want)
				}
			}
		})
	}
}
