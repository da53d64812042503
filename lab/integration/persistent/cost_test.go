package persistent_test

import (
	"context"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"github.com/zkrecipes/zkrecipes/lab/internal/zkcount"
	"github.com/zkrecipes/zkrecipes/persistent"
)

// TestCost counts each operation's requests on the wire against the docs.
func TestCost(t *testing.T) {
	e := ensemble(t)
	s, counter := testutil.CountedSession(t, e.Addrs())
	other := connect(t, e.Addrs())
	ctx := ctxT(t, time.Minute)
	mkdirs(t, other, testPath(t))
	measure := func(what string, want map[zkcount.Op]int64, f func()) {
		t.Helper()
		before := counter.Snapshot()
		f()
		var total int64
		for _, v := range want {
			total += v
		}
		// Some requests (a watch set again) follow the call's return.
		waitFor(t, 10*time.Second, what+"'s requests", func() bool { return counter.Snapshot().Sub(before).Total() >= total })
		testutil.WantOps(t, what, counter.Snapshot().Sub(before), want)
	}
	for _, protected := range []bool{false, true} {
		var opts []persistent.Option
		name := "plain"
		deletes := map[zkcount.Op]int64{zkcount.OpExists: 1, zkcount.OpDelete: 1}
		if protected {
			opts, name = []persistent.Option{persistent.WithProtected()}, "protected"
			deletes = map[zkcount.Op]int64{zkcount.OpDelete: 1}
		}
		n := newNode(t, s, testPath(t)+"/"+name, opts...)
		measure(name+" New", map[zkcount.Op]int64{}, func() {})
		start := map[zkcount.Op]int64{zkcount.OpCreate: 1, zkcount.OpExists: 1}
		if !protected {
			// The plain node's Start is the Session's first create under
			// testPath (made by mkdirs): in the secured pass the
			// open-parent check reads its ACL first. The protected node
			// has the same parent, already checked.
			start = testutil.FirstCreateUnder(1, start)
		}
		measure(name+" Start", start, func() {
			if err := n.Start(ctx); err != nil {
				t.Fatal(err)
			}
		})
		measure(name+" SetData", map[zkcount.Op]int64{zkcount.OpSetData: 1, zkcount.OpExists: 1}, func() {
			if err := n.SetData(ctx, []byte("v2")); err != nil {
				t.Fatal(err)
			}
		})
		// A re-creation costs 1 create + 1 exists, or, for a plain node,
		// the documented path of a create that finds the path taken
		// (Node.create: +1 getData, then it adopts our node or creates
		// again): seen once in a full run, 1 create more and 1 getData
		// (the exists watch answered "absent" from the Session's
		// registry right after our create, before the creation's event
		// reached it, and the next create found our own node).
		recreate := []map[zkcount.Op]int64{{zkcount.OpCreate: 1, zkcount.OpExists: 1}}
		if !protected {
			recreate = append(recreate, map[zkcount.Op]int64{zkcount.OpCreate: 2, zkcount.OpGetData: 1, zkcount.OpExists: 1})
		}
		measureAny(t, counter, name+" re-creation after a deletion", recreate, func() {
			present := n.Present()
			if err := other.Conn().Delete(n.Path(), -1); err != nil {
				t.Fatal(err)
			}
			waitPresent(t, n, present)
		})
		measure(name+" Present, Path, Data", map[zkcount.Op]int64{}, func() {
			_, _, _ = n.Present(), n.Path(), n.Data()
		})
		done, cancel := context.WithCancel(ctx)
		cancel()
		measure(name+" SetData with a done ctx", map[zkcount.Op]int64{}, func() {
			if err := n.SetData(done, []byte("v3")); err == nil {
				t.Fatal("SetData with a done ctx succeeded")
			}
		})
		measure(name+" Leave", deletes, func() {
			if err := n.Leave(ctx); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// measureAny runs f and waits until the requests it caused equal one of
// wants (some requests follow the call's return), failing the test when
// none matches within 10 s.
func measureAny(t *testing.T, counter *zkcount.Counter, what string, wants []map[zkcount.Op]int64, f func()) {
	t.Helper()
	before := counter.Snapshot()
	f()
	matches := func(d zkcount.Counts) bool {
		for _, want := range wants {
			ok := len(d.Requests) == len(want)
			for op, n := range want {
				ok = ok && d.Req(op) == n
			}
			if ok {
				return true
			}
		}
		return false
	}
	deadline := time.Now().Add(10 * time.Second)
	for !matches(counter.Snapshot().Sub(before)) && time.Now().Before(deadline) {
		<-time.After(20 * time.Millisecond)
	}
	d := counter.Snapshot().Sub(before)
	if !matches(d) {
		t.Errorf("%s: requests %v, want one of %v", what, d.Requests, wants)
		return
	}
	t.Logf("%s: %v, %d notifications", what, d.Requests, d.Notifications)
}
