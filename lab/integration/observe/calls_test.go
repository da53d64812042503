package observe_test

import (
	"context"
	"errors"
	"maps"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"github.com/zkrecipes/zkrecipes/lab/internal/zkcount"
	"github.com/zkrecipes/zkrecipes/lock"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// byName returns the requests of c by op name, as recipes.OpName spells
// them, setAuth included: zkcount counts the setAuth requests apart
// (Counts.Auths, not in Requests), but they are requests on the wire, and
// an observer sees them as calls like any other.
func byName(c zkcount.Counts) map[string]int64 {
	m := make(map[string]int64)
	for op, n := range c.Requests {
		if n != 0 {
			m[recipes.OpName(int32(op))] = n
		}
	}
	if c.Auths != 0 {
		m[recipes.OpName(int32(zkcount.OpSetAuth))] = c.Auths
	}
	return m
}

// wantOps returns want by op name, as byName spells them.
func wantOps(want map[zkcount.Op]int64) map[string]int64 {
	return byName(zkcount.Counts{Requests: want})
}

func sub(a, b map[string]int64) map[string]int64 {
	d := make(map[string]int64)
	for k, v := range a {
		if v -= b[k]; v != 0 {
			d[k] = v
		}
	}
	return d
}

// sameOps fails the test unless the observer saw exactly the requests the
// counter counted on the wire, op by op, and want.
func sameOps(t *testing.T, what string, seen, counted, want map[string]int64) {
	t.Helper()
	if !maps.Equal(seen, counted) {
		t.Errorf("%s: observer saw %v, the wire carried %v", what, seen, counted)
	}
	if want != nil && !maps.Equal(seen, want) {
		t.Errorf("%s: observer saw %v, want %v", what, seen, want)
	}
	t.Logf("%s: %v", what, seen)
}

// TestObserverSeesEveryCall: over two sessions' whole lives (connect, a
// first Lock that creates the parents, an uncontended Lock and Unlock, a
// contended Lock woken by a release, Close), the calls an observer sees
// are, op by op, the requests a counter under the Session's connection
// counts on the wire (lab/internal/zkcount); each has its session, a
// non-negative duration and, for ops that carry one, a path.
func TestObserverSeesEveryCall(t *testing.T) {
	e := ensemble(t)
	path := testPath(t)
	ra, rb := &recorder{}, &recorder{}
	a, ca := testutil.CountedSession(t, e.Addrs(), recipes.WithObserver(ra))
	b, cb := testutil.CountedSession(t, e.Addrs(), recipes.WithObserver(rb))
	ma, err := lock.New(a, path)
	if err != nil {
		t.Fatal(err)
	}
	mb, err := lock.New(b, path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	// A first Lock on a fresh path creates its parents.
	if err := ma.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := ma.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	sameOps(t, "connect, first Lock, Unlock", ra.ops(), byName(ca.Snapshot()), nil)

	seen, wire := ra.ops(), ca.Snapshot()
	if err := ma.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	sameOps(t, "uncontended Lock", sub(ra.ops(), seen), byName(ca.Snapshot().Sub(wire)), map[string]int64{"create": 1, "getChildren2": 1})

	// b waits behind a on a data watch; a's release wakes it.
	bSeen, bWire := rb.ops(), cb.Snapshot()
	done := make(chan error, 1)
	go func() { done <- mb.Lock(ctx) }()
	waitFor(t, 10*time.Second, "b watching a's node", func() bool { return rb.ops()["getData"] > bSeen["getData"] })
	seen, wire = ra.ops(), ca.Snapshot()
	if err := ma.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	sameOps(t, "Unlock", sub(ra.ops(), seen), byName(ca.Snapshot().Sub(wire)), map[string]int64{"delete": 1})
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// b's contended Lock is its Session's first create under the lock's
	// path: in the secured pass it reads the path's ACL first (a made it).
	sameOps(t, "contended Lock", sub(rb.ops(), bSeen), byName(cb.Snapshot().Sub(bWire)),
		wantOps(testutil.FirstCreateUnder(1, map[zkcount.Op]int64{zkcount.OpCreate: 1, zkcount.OpGetChildren2: 1, zkcount.OpGetData: 1})))
	if err := mb.Unlock(ctx); err != nil {
		t.Fatal(err)
	}

	for _, x := range []struct {
		name string
		s    *recipes.Session
		r    *recorder
		c    *zkcount.Counter
	}{{"a", a, ra, ca}, {"b", b, rb, cb}} {
		sid := x.s.ID()
		testutil.CloseSession(t, x.s)
		sameOps(t, "session "+x.name+"'s whole life", x.r.ops(), byName(x.c.Snapshot()), nil)
		calls, _, _, _ := x.r.snapshot()
		// Errors expected: a create's NodeExists or NoNode (parents made
		// then), and in the secured pass the open-parent check's getACL of
		// a parent not made yet (NoNode: the Session makes it).
		for _, c := range calls {
			if c.SessionID != sid || c.Duration < 0 || (c.Path == "" && c.Op != "closeSession" && c.Op != "multi" && c.Op != "setAuth") || c.Err != nil && c.Op != "create" && c.Op != "createContainer" && !(c.Op == "getACL" && errors.Is(c.Err, zk.ErrNoNode)) {
				t.Errorf("session %s (0x%x): call %+v", x.name, sid, c)
			}
		}
		if calls[len(calls)-1].Op != "closeSession" {
			t.Errorf("session %s: last call %+v, want closeSession", x.name, calls[len(calls)-1])
		}
	}
}
