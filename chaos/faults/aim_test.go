package faults

import (
	"context"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/chaos/cluster"
	"github.com/zkrecipes/zkrecipes/chaos/history"
)

// TestStillAimedWaiterSettled: a client stopped for a fault aimed at a
// waiter counts as one only when it held nothing, and the aim had not
// reset its link, for waiterSettle before it stopped (one that had only
// just released, or whose create the reset failed, may have nothing
// queued);
// aimed at a holder, a holding client counts whenever it took the holding.
func TestStillAimedWaiterSettled(t *testing.T) {
	for _, tc := range []struct {
		name    string
		aim     string
		last    history.Kind  // c1's latest holding event ("": none)
		ago     time.Duration // how long before the stop it was recorded
		reset   time.Duration // how long before the stop the aim reset c1's link (0: never)
		want    bool
		wantFor string // the role recorded in the target
	}{
		{"waiter that never held", RoleWaiter, "", 0, 0, true, RoleWaiter},
		{"waiter released long before", RoleWaiter, history.KindReleased, 2 * waiterSettle, 0, true, RoleWaiter},
		{"waiter released just before", RoleWaiter, history.KindReleased, waiterSettle / 20, 0, false, RoleWaiter},
		{"waiter lost just before", RoleWaiter, history.KindLost, waiterSettle / 2, 0, false, RoleWaiter},
		{"waiter released long before, its link reset just before", RoleWaiter, history.KindReleased, 2 * waiterSettle, waiterSettle / 2, false, RoleWaiter},
		{"waiter that never held, its link reset just before", RoleWaiter, "", 0, waiterSettle / 2, false, RoleWaiter},
		{"waiter whose link was reset long before", RoleWaiter, history.KindReleased, 3 * waiterSettle, 2 * waiterSettle, true, RoleWaiter},
		{"waiter that holds", RoleWaiter, history.KindAcquired, 2 * waiterSettle, 0, false, RoleHolder},
		{"holder that just acquired", RoleHolder, history.KindAcquired, time.Millisecond, 0, true, RoleHolder},
		{"holder that released", RoleHolder, history.KindReleased, 2 * waiterSettle, 0, false, RoleWaiter},
		{"holder whose link was reset just before", RoleHolder, history.KindAcquired, 2 * waiterSettle, waiterSettle / 2, true, RoleHolder},
	} {
		env := &cluster.Env{Rec: history.NewRecorder()}
		stoppedAt := history.Now()
		if tc.last != "" {
			env.Rec.Add(history.Event{Client: "c1", Kind: history.KindAcquired, Key: "/l", Token: 1, Time: stoppedAt - int64(tc.ago) - 1})
			if tc.last != history.KindAcquired {
				env.Rec.Add(history.Event{Client: "c1", Kind: tc.last, Key: "/l", Token: 1, Time: stoppedAt - int64(tc.ago)})
			}
		}
		var resetAt int64
		if tc.reset > 0 {
			resetAt = stoppedAt - int64(tc.reset)
		}
		tg := &Target{Aim: tc.aim}
		if got := stillAimed(context.Background(), env, &cluster.Client{Name: "c1"}, tg, stoppedAt, resetAt); got != tc.want || tg.ClientRole != tc.wantFor {
			t.Errorf("%s: stillAimed %v with role %q, want %v with %q", tc.name, got, tg.ClientRole, tc.want, tc.wantFor)
		}
	}
}
