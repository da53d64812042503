package chaos

import (
	"fmt"
	"time"
)

// Liveness proves that the workload makes progress (IsProgress: an
// operation succeeds, a holding is acquired, a fenced write is accepted)
// within bound of the history's start and within bound of the end of every
// fault window. A window whose bound reaches past the end of the history
// must still have progress in what was recorded.
func Liveness(bound time.Duration) Checker {
	return Checker{
		Name:      "liveness",
		Invariant: fmt.Sprintf("progress within %v of the start and of every heal", bound),
		Check:     func(h History) Result { return checkLiveness(h, bound) },
	}
}

func checkLiveness(h History, bound time.Duration) Result {
	var v violations
	var progress []int64
	marks := []struct {
		t    int64
		what string
	}{{h.Start, "the start"}}
	for _, e := range h.Events {
		if IsProgress(e) {
			progress = append(progress, e.Time)
		}
		if e.Kind == KindFaultEnd {
			marks = append(marks, struct {
				t    int64
				what string
			}{e.Time, "the heal of " + e.Key})
		}
	}
	j := 0
	for _, m := range marks {
		for j < len(progress) && progress[j] < m.t {
			j++
		}
		if j == len(progress) || progress[j] > m.t+int64(bound) {
			got := "none since"
			if j < len(progress) {
				got = "first after " + time.Duration(progress[j]-m.t).Round(time.Millisecond).String()
			}
			v.add(m.t, "", "no progress within %v of %s at %s (%s)", bound, m.what, rel(h, m.t), got)
		}
	}
	return v.result(len(marks))
}
