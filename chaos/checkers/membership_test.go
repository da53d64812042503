package checkers

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/chaos/history"
)

// mbJoin records client's Join of the group as id, returning at ret with
// session.
func (b *hb) mbJoin(client, id string, call, ret, session int64) *hb {
	return b.op(client, history.FnJoin, id, 0, 0, call, ret, history.KindOK, id, session)
}

// mbLeave records client's Leave of the group as id.
func (b *hb) mbLeave(client, id string, call, ret int64) *hb {
	return b.op(client, history.FnLeave, id, 0, 0, call, ret, history.KindOK, id, 0)
}

// mbView records a watch view of observer at t listing detail.
func (b *hb) mbView(observer string, t int64, detail string) *hb {
	return b.add(history.Event{Time: t * ms, Client: observer, Kind: history.KindView, Key: "/g", Mode: history.ViewWatch, Detail: detail})
}

// mbClosed records the end of observer's watch at t.
func (b *hb) mbClosed(observer string, t int64) *hb {
	return b.add(history.Event{Time: t * ms, Client: observer, Kind: history.KindView, Key: "/g", Mode: history.ViewClosed, Detail: "stopped"})
}

// mbPoll records a Members call of observer from call to ret listing detail.
func (b *hb) mbPoll(observer string, call, ret int64, detail string) *hb {
	b.nextOp++
	b.add(history.Event{Time: call * ms, Client: observer, Kind: history.KindInvoke, Op: b.nextOp, Fn: history.FnMembers, Key: "/g"})
	b.add(history.Event{Time: ret * ms, Client: observer, Kind: history.KindView, Op: b.nextOp, Key: "/g", Mode: history.ViewMembers, Detail: detail})
	return b.add(history.Event{Time: ret * ms, Client: observer, Kind: history.KindOK, Op: b.nextOp, Fn: history.FnMembers, Key: "/g"})
}

// mbSession records a session event of client at t ("suspended",
// "connected", or "new" with id).
func (b *hb) mbSession(client string, t int64, detail string, id int64) *hb {
	return b.add(history.Event{Time: t * ms, Client: client, Kind: history.KindSession, Detail: detail, Value: id})
}

// mbExpired is member c1's session 0xa expiring in a fault from 10 to 40 ms
// (c1 suspended at 12, a new session 0xc at 45); observer o1 listed c1 at
// 2 and saw its node go at 15.
func mbExpired() *hb {
	return newHB(100).mbJoin("c1", "c1", 0, 1, 0xa).mbView("o1", 2, "c1@0xa").fault("partition-expire", 10, 40).
		mbSession("c1", 12, "suspended", 0).mbView("o1", 15, "").mbSession("c1", 45, "new", 0xc).mbSession("c1", 45, "connected", 0)
}

func membershipCases() []checkerCase {
	bound := 20 * time.Millisecond
	return []checkerCase{
		{"membership: members listed", Membership(bound),
			newHB(100).mbView("o1", 0, "").mbJoin("c1", "c1", 0, 1, 0xa).mbJoin("c2", "c2", 0, 2, 0xb).
				mbView("o1", 3, "c1@0xa").mbView("o1", 4, "c1@0xa,c2@0xb").mbClosed("o1", 90).build(), 0, ""},
		{"membership: a member never listed", Membership(bound),
			newHB(100).mbView("o1", 0, "").mbJoin("c1", "c1", 0, 1, 0xa).mbClosed("o1", 90).build(), 1, "did not list c1"},
		{"membership: listed late", Membership(bound),
			newHB(100).mbView("o1", 0, "").mbJoin("c1", "c1", 0, 1, 0xa).mbView("o1", 50, "c1@0xa").mbClosed("o1", 90).build(), 1, "only more than"},
		{"membership: expired, listed again with its new session", Membership(bound),
			mbExpired().mbView("o1", 46, "c1@0xc").mbClosed("o1", 99).build(), 0, ""},
		{"membership: expired and not listed again (never re-created)", Membership(bound),
			mbExpired().mbClosed("o1", 99).build(), 1, "did not list c1 (session 0xc"},
		{"membership: the expired session's node stays listed", Membership(bound),
			newHB(100).mbJoin("c1", "c1", 0, 1, 0xa).mbView("o1", 2, "c1@0xa").fault("partition-expire", 10, 40).
				mbSession("c1", 12, "suspended", 0).mbSession("c1", 45, "new", 0xc).mbView("o1", 46, "c1@0xa,c1@0xc").mbClosed("o1", 99).build(),
			1, "lists c1 of session 0xa"},
		{"membership: the expired session's node goes within the bound", Membership(bound),
			newHB(100).mbJoin("c1", "c1", 0, 1, 0xa).mbView("o1", 2, "c1@0xa").fault("partition-expire", 10, 40).
				mbSession("c1", 12, "suspended", 0).mbSession("c1", 45, "new", 0xc).mbView("o1", 46, "c1@0xa,c1@0xc").mbView("o1", 60, "c1@0xc").
				mbClosed("o1", 99).build(), 0, ""},
		{"membership: a suspended observer is not judged until it is back", Membership(bound),
			newHB(100).mbView("o1", 0, "").mbJoin("c1", "c1", 0, 1, 0xa).mbSession("o1", 2, "suspended", 0).mbSession("o1", 80, "connected", 0).
				mbView("o1", 85, "c1@0xa").mbClosed("o1", 99).build(), 0, ""},
		{"membership: a Members call drops a live member", Membership(bound),
			newHB(100).mbJoin("c1", "c1", 0, 1, 0xa).mbPoll("o2", 5, 6, "c1@0xa").mbPoll("o2", 30, 31, "").build(), 1, "stopped listing c1"},
		{"membership: Members calls list a live member", Membership(bound),
			newHB(100).mbJoin("c1", "c1", 0, 1, 0xa).mbPoll("o2", 0, 1, "").mbPoll("o2", 5, 6, "c1@0xa").mbPoll("o2", 30, 31, "c1@0xa").build(), 0, ""},
		{"membership: a member that left goes", Membership(bound),
			newHB(100).mbJoin("c1", "c1", 0, 1, 0xa).mbView("o1", 2, "c1@0xa").mbLeave("c1", "c1", 50, 51).mbView("o1", 52, "").
				mbClosed("o1", 99).build(), 0, ""},
		{"membership: a member that left stays listed", Membership(bound),
			newHB(100).mbJoin("c1", "c1", 0, 1, 0xa).mbView("o1", 2, "c1@0xa").mbLeave("c1", "c1", 50, 51).mbClosed("o1", 99).build(),
			1, "that session left"},
	}
}

// TestMembershipJudged: what the membership checker counts as judged (the
// runner's report shows it) and what it leaves undecided.
func TestMembershipJudged(t *testing.T) {
	bound := 20 * time.Millisecond
	tests := []struct {
		name               string
		h                  history.History
		checked, undecided int
	}{
		// c1's stretch [1, 10) with o1's view listing it at 2: judged;
		// its new session's stretch [45, 99): listed at 46, judged; the
		// expired session 0xa: no view lists it from 45 on, judged.
		{"expired and listed again", mbExpired().mbView("o1", 46, "c1@0xc").mbClosed("o1", 99).build(), 3, 0},
		// The views end at 50, before 45 + the bound: the new session's
		// listing and the expired session's absence are still seen.
		{"the views end early", mbExpired().mbView("o1", 46, "c1@0xc").mbClosed("o1", 50).build(), 3, 0},
		// No listing of the new session before the views end at 50: not
		// judged (the bound did not pass).
		{"not yet listed when the views end", mbExpired().mbClosed("o1", 50).build(), 2, 1},
		// A member that leaves after the views ended: nothing to judge.
		{"left after the views ended", newHB(100).mbJoin("c1", "c1", 0, 1, 0xa).mbView("o1", 2, "c1@0xa").mbClosed("o1", 50).
			mbLeave("c1", "c1", 60, 61).build(), 1, 0},
		// A member that leaves 5 ms before the views end: not judged.
		{"left just before the views ended", newHB(100).mbJoin("c1", "c1", 0, 1, 0xa).mbView("o1", 2, "c1@0xa").
			mbLeave("c1", "c1", 44, 45).mbClosed("o1", 50).build(), 1, 1},
	}
	for _, tt := range tests {
		r := Membership(bound).Run(tt.h)
		undecided := 0
		if i := strings.Index(r.Note, " check(s) not judged"); i > 0 {
			fmt.Sscan(r.Note[:i], &undecided)
		}
		if !r.OK() || r.Checked != tt.checked || undecided != tt.undecided {
			t.Errorf("%s: checked %d, undecided %d (%q), violations %v; want %d and %d", tt.name, r.Checked, undecided, r.Note, r.Violations, tt.checked, tt.undecided)
		}
	}
}
