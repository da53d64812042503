package observe_test

import (
	"context"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/leader"
	"github.com/zkrecipes/zkrecipes/lock"
	"github.com/zkrecipes/zkrecipes/queue"
	"github.com/zkrecipes/zkrecipes/recipes"
	"github.com/zkrecipes/zkrecipes/rwlock"
)

// want is an expected holding event: phase, kind and (for an end) End.
type want struct {
	phase recipes.HoldingPhase
	kind  string
	end   string
}

// expectHoldings runs f and waits until the observer has seen exactly the
// events of ws after those it had seen before (an end is reported from the
// holding's context's AfterFunc, so a little after Release returns), and
// checks their fields.
func expectHoldings(t *testing.T, s *recipes.Session, r *recorder, what string, f func() error, ws ...want) {
	t.Helper()
	_, before, _, _ := r.snapshot()
	if err := f(); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	var got []recipes.HoldingEvent
	waitFor(t, 10*time.Second, what+": holding events", func() bool {
		_, all, _, _ := r.snapshot()
		got = all[len(before):]
		return len(got) >= len(ws)
	})
	if len(got) != len(ws) {
		t.Fatalf("%s: events %+v, want %+v", what, got, ws)
	}
	for i, w := range ws {
		g := got[i]
		ok := g.Phase == w.phase && g.Kind == w.kind && g.End() == w.end && g.SessionID == s.ID() && g.Path != ""
		switch w.phase {
		case recipes.HoldingAcquired:
			ok = ok && g.Waited > 0 && g.Held == 0 && g.Cause == nil
		case recipes.HoldingEnded:
			ok = ok && g.Held > 0 && g.Waited == 0 && g.Cause != nil
		}
		if !ok {
			t.Errorf("%s: event %d = %+v (End %q), want %+v in session 0x%x", what, i, g, g.End(), w, s.ID())
		}
	}
}

// TestHoldingsOfEveryRecipe: the observer sees each kind of holding
// acquired, with its wait, and released, with how long it was held: a
// mutex, a read and a write holding of an rwlock, a semaphore lease (its
// mutex held and released on the way), a leader term, a queue claim
// (acked).
func TestHoldingsOfEveryRecipe(t *testing.T) {
	e := ensemble(t)
	path := testPath(t)
	r := &recorder{}
	s := connect(t, e.Addrs(), recipes.WithObserver(r))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	acquired := func(kind string) want { return want{recipes.HoldingAcquired, kind, ""} }
	released := func(kind string) want { return want{recipes.HoldingEnded, kind, "released"} }

	m, err := lock.New(s, path+"/mutex")
	if err != nil {
		t.Fatal(err)
	}
	expectHoldings(t, s, r, "Mutex.Lock", func() error { return m.Lock(ctx) }, acquired("lock"))
	expectHoldings(t, s, r, "Mutex.Unlock", func() error { return m.Unlock(ctx) }, released("lock"))

	rw, err := rwlock.New(s, path+"/rw")
	if err != nil {
		t.Fatal(err)
	}
	expectHoldings(t, s, r, "RLock", func() error { return rw.Reader().Lock(ctx) }, acquired("read"))
	expectHoldings(t, s, r, "RUnlock", func() error { return rw.Reader().Unlock(ctx) }, released("read"))
	expectHoldings(t, s, r, "Lock", func() error { return rw.Lock(ctx) }, acquired("write"))
	expectHoldings(t, s, r, "Unlock", func() error { return rw.Unlock(ctx) }, released("write"))

	sem, err := lock.NewSemaphore(s, path+"/sem", 2)
	if err != nil {
		t.Fatal(err)
	}
	var lease *lock.Permit
	expectHoldings(t, s, r, "Semaphore.Acquire", func() (err error) { lease, err = sem.Acquire(ctx); return err },
		acquired("lock"), acquired("lease"), released("lock"))
	expectHoldings(t, s, r, "Permit.Release", func() error { return lease.Release(ctx) }, released("lease"))

	el, err := leader.New(s, path+"/leader")
	if err != nil {
		t.Fatal(err)
	}
	role := recipes.Curator.ElectionRole().String()
	var term *leader.Term
	expectHoldings(t, s, r, "Campaign", func() (err error) { term, err = el.Campaign(ctx); return err }, acquired(role))
	expectHoldings(t, s, r, "Term.Release", func() error { return term.Release(ctx) }, released(role))

	q, err := queue.New(s, path+"/queue")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := q.Put(ctx, []byte("x")); err != nil {
		t.Fatal(err)
	}
	var c *queue.Claim
	expectHoldings(t, s, r, "Claim", func() (err error) { c, err = q.Claim(ctx); return err }, acquired("claim"))
	expectHoldings(t, s, r, "Ack", func() error { return c.Ack(ctx) }, released("claim"))
}
