package report

import (
	"strings"
	"testing"

	"github.com/zkrecipes/zkrecipes/lab/chaos/history"
)

// TestTimelineShowsCrashes: crash and resume events are drawn on their
// client's row.
func TestTimelineShowsCrashes(t *testing.T) {
	h := newTPC().begin("t1", 0).crash("co", "t1", history.CrashAfterBegin, 2).resume("co", "t1", "pending", 3).
		decide("t1", 1, 4).build()
	got := map[string]string{}
	for _, r := range NewTimeline(h, nil).Rects {
		if r.Class == string(history.KindCrash) || r.Class == string(history.KindResume) {
			got[r.Class] = r.Title
		}
	}
	if !strings.Contains(got["crash"], "co crash t1 (after begin)") || !strings.Contains(got["resume"], "co resume t1 (pending)") {
		t.Fatalf("timeline marks: %q", got)
	}
}
