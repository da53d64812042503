package checkers

import (
	"strings"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/chaos/history"
)

// convergedCases are Converged's table cases; TestEveryCheckerCanFail
// counts them too.
func convergedCases() []checkerCase {
	items := []string{"i0", "i1", "i2"}
	c := Converged(items, 30*time.Millisecond)
	return []checkerCase{
		{"converged: all owned after the heal", c,
			newHB(100).hold("a", "i0", 1, 0, -1).hold("b", "i1", 2, 0, 20).fault("cut", 10, 40).
				hold("b", "i1", 5, 45, -1).hold("c", "i2", 6, 50, -1).build(), 0, ""},
		{"converged: no fault, owned from the start", c,
			newHB(100).hold("a", "i0", 1, 0, -1).hold("a", "i1", 2, 5, -1).hold("b", "i2", 3, 10, -1).build(), 0, ""},
		{"converged: an item never owned again", c,
			newHB(100).hold("a", "i0", 1, 0, -1).hold("b", "i1", 2, 0, -1).hold("c", "i2", 3, 0, 20).fault("cut", 10, 40).build(), 1, "never owned: i2"},
		{"converged: each owned, never all at once", c,
			newHB(100).fault("cut", 0, 10).hold("a", "i0", 1, 12, 20).hold("a", "i1", 2, 20, 30).hold("b", "i2", 3, 30, -1).build(), 1, "at most 1 of 3"},
		{"converged: too late", c,
			newHB(100).hold("a", "i0", 1, 0, -1).hold("b", "i1", 2, 0, -1).fault("cut", 10, 20).hold("c", "i2", 3, 60, -1).build(), 1, "at most 2 of 3"},
		{"converged: history ends before the bound", c,
			newHB(50).hold("a", "i0", 1, 0, -1).hold("b", "i1", 2, 0, -1).fault("cut", 10, 40).build(), 1, "not converged within 10ms"},
		{"converged: a release and an acquire at one instant", c,
			newHB(100).fault("cut", 0, 10).hold("a", "i0", 1, 0, 30).hold("b", "i0", 4, 30, -1).hold("a", "i1", 2, 0, -1).hold("c", "i2", 3, 30, -1).build(), 0, ""},
		{"converged: an acquire and its release at one instant hold nothing", c,
			newHB(100).fault("cut", 0, 10).hold("a", "i0", 1, 15, -1).hold("a", "i1", 2, 15, -1).hold("b", "i2", 3, 20, 20).build(), 1, "at most 2 of 3"},
		{"converged: a fault not injected is no heal", c,
			newHB(100).hold("a", "i0", 1, 0, -1).hold("b", "i1", 2, 0, -1).hold("c", "i2", 3, 0, 20).notInjected("pause", 40).build(), 0, ""},
		{"converged: the runner's holdings do not count", c,
			newHB(100).hold("a", "i0", 1, 0, -1).hold("b", "i1", 2, 0, -1).hold(history.RunnerClient, "i2", 3, 0, -1).build(), 1, "never owned: i2"},
	}
}

func TestConverged(t *testing.T) {
	for _, tt := range convergedCases() {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.checker.Run(tt.h)
			if len(r.Violations) != tt.bad {
				t.Fatalf("%d violations, want %d: %+v", len(r.Violations), tt.bad, r.Violations)
			}
			if tt.bad > 0 && !strings.Contains(r.Violations[0].Msg, tt.want) {
				t.Fatalf("violation %q does not say %q", r.Violations[0].Msg, tt.want)
			}
			if r.Checked != 3 {
				t.Fatalf("checked %d items", r.Checked)
			}
		})
	}
}
