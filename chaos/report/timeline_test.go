package report

import (
	"strings"
	"testing"

	"github.com/zkrecipes/zkrecipes/chaos/history"
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

// TestTimelineMerges: a client's operations make one rectangle per run of
// one outcome, and its back-to-back holdings one bar, so that a busy
// scenario's picture stays small; a lost holding keeps its own bar.
func TestTimelineMerges(t *testing.T) {
	b := newHB(10000)
	for i := int64(0); i < 1000; i++ {
		b.read("c1", "/r", 10*i, 10*i+1, 0)
		if i < 500 {
			b.hold("c2", "/l", i, 10*i, 10*i+5)
		}
	}
	b.hold("c2", "/l", 600, 6000, -1).lost("c2", "/l", 600, 6500)
	tl := NewTimeline(b.build(), nil)
	count := map[string]int{}
	titles := map[string]string{}
	for _, r := range tl.Rects {
		count[r.Class]++
		titles[r.Class] += r.Title + "\n"
	}
	if count["op-ok"] != 1 || !strings.Contains(titles["op-ok"], "c1 0s to 10s: 1000 ok, 0 failed, 0 unknown") {
		t.Errorf("%d operation rectangles (%q), want 1", count["op-ok"], titles["op-ok"])
	}
	if count["hold"] != 2 || !strings.Contains(titles["hold"], "c2 holds /l 500 times, 0s to 4.995s") || !strings.Contains(titles["hold"], "(token 600) 6s to 6.5s, lost") {
		t.Errorf("%d holding bars:\n%s", count["hold"], titles["hold"])
	}
}

// TestTimelineCollapses: a leadership changing hands hundreds of times
// is one path per client, not a titled bar per holding; a few holdings
// keep their bars and titles.
func TestTimelineCollapses(t *testing.T) {
	b := newHB(10000)
	for i := int64(0); i < 100; i++ { // c1 and c2 in turn, 50 ms each, every 100 ms
		b.hold("c1", "/l", 2*i, 100*i, 100*i+40)
		b.hold("c2", "/l", 2*i+1, 100*i+50, 100*i+90)
	}
	b.hold("c3", "/l", 999, 9950, 9990)
	tl := NewTimeline(b.build(), nil)
	holds := 0
	for _, r := range tl.Rects {
		if r.Class == "hold" {
			holds++
			if !strings.Contains(r.Title, "c3 holds /l (token 999)") {
				t.Errorf("bar %q: want only c3's", r.Title)
			}
		}
	}
	var paths []string
	for _, p := range tl.Paths {
		if p.Class == "hold" {
			paths = append(paths, p.Title)
			if n := strings.Count(p.D, "M"); n != 100 {
				t.Errorf("path %q has %d shapes, want 100", p.Title, n)
			}
		}
	}
	if holds != 1 || len(paths) != 2 || !strings.HasPrefix(paths[0], "c1 holds /l") || !strings.HasPrefix(paths[1], "c2 holds /l") {
		t.Errorf("%d bars, paths %q; want c3's bar and a path for c1 and for c2", holds, paths)
	}
}
