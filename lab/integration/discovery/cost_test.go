package discovery_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/discovery"
	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"github.com/zkrecipes/zkrecipes/lab/internal/zkcount"
)

// settle waits until the counter has seen want requests of op since
// before (a Registration's keeper or a Provider's loop sends after the
// call returns), then returns the difference.
func settle(tb testing.TB, c *zkcount.Counter, before zkcount.Counts, op zkcount.Op, want int64) zkcount.Counts {
	tb.Helper()
	waitFor(tb, 10*time.Second, fmt.Sprintf("%d %v", want, op), func() bool {
		return c.Snapshot().Sub(before).Req(op) >= want
	})
	return c.Snapshot().Sub(before)
}

// TestCost counts every operation's requests on the wire against the
// docs. (go-zookeeper sends a getChildren as getChildren2.)
func TestCost(t *testing.T) {
	e := ensemble(t)
	ctx := ctxT(t, time.Minute)
	s, c := testutil.CountedSession(t, e.Addrs())
	other := connect(t, e.Addrs())
	base := basePath(t)
	d := newDiscovery(t, s, base)
	want := func(what string, d zkcount.Counts, ops map[zkcount.Op]int64) {
		t.Helper()
		testutil.WantOps(t, what, d, ops)
	}
	// The base path exists from here on (as a container).
	setup := register(t, newDiscovery(t, other, base), discovery.Instance{Name: "setup", ID: "x"})

	// First instance of a service: 1 exists finds the path free; the
	// persistent.Node's create fails (no parent), the parent is created as
	// a container, the create is sent again, and its exists sets the watch.
	// It is the Session's first create under the service's path, which is
	// missing: in the secured pass the open-parent check reads its ACL
	// before the first create (no node: not checked, nothing remembered)
	// and again before the second, hence 2 getACL for the one parent.
	before := c.Snapshot()
	r := register(t, d, discovery.Instance{Name: "api", ID: "a"})
	want("Register, first of its service", c.Snapshot().Sub(before), testutil.FirstCreateUnder(2,
		map[zkcount.Op]int64{zkcount.OpCreate: 2, zkcount.OpCreateContainer: 1, zkcount.OpExists: 2}))

	before = c.Snapshot()
	r2 := register(t, d, discovery.Instance{Name: "api", ID: "b", ServiceType: discovery.Static})
	want("Register, static", c.Snapshot().Sub(before), map[zkcount.Op]int64{zkcount.OpCreate: 1})

	// Replacing another client's node (whose persistent.Node is watching
	// it): exists, a multi of delete and create; then our persistent.Node
	// adopts the node (create: ErrNodeExists, getData) and watches it.
	theirs := register(t, newDiscovery(t, other, base), discovery.Instance{Name: "api", ID: "c"})
	before = c.Snapshot()
	r3 := register(t, d, discovery.Instance{Name: "api", ID: "c"})
	want("Register over another node", c.Snapshot().Sub(before),
		map[zkcount.Op]int64{zkcount.OpExists: 2, zkcount.OpMulti: 1, zkcount.OpCreate: 1, zkcount.OpGetData: 1})
	_ = theirs.Leave(ctx) // not its node any more: sends, deletes nothing

	// Update: 1 setData; the persistent.Node's watch fires on the change
	// and is set again (1 exists).
	before = c.Snapshot()
	inst := r.Instance()
	inst.Port = 1
	if err := r.Update(ctx, inst); err != nil {
		t.Fatal(err)
	}
	want("Update, dynamic", settle(t, c, before, zkcount.OpExists, 1), map[zkcount.Op]int64{zkcount.OpSetData: 1, zkcount.OpExists: 1})
	before = c.Snapshot()
	inst = r2.Instance()
	inst.Port = 2
	if err := r2.Update(ctx, inst); err != nil {
		t.Fatal(err)
	}
	want("Update, static", c.Snapshot().Sub(before), map[zkcount.Op]int64{zkcount.OpExists: 1, zkcount.OpSetData: 1})

	// Queries.
	before = c.Snapshot()
	if _, err := d.Names(ctx); err != nil {
		t.Fatal(err)
	}
	want("Names", c.Snapshot().Sub(before), map[zkcount.Op]int64{zkcount.OpGetChildren2: 1})
	before = c.Snapshot()
	if insts, err := d.Instances(ctx, "api"); err != nil || len(insts) != 3 {
		t.Fatalf("Instances = %d, %v", len(insts), err)
	}
	want("Instances of 3", c.Snapshot().Sub(before), map[zkcount.Op]int64{zkcount.OpGetChildren2: 1, zkcount.OpGetData: 3})
	before = c.Snapshot()
	if _, err := d.Instance(ctx, "api", "a"); err != nil {
		t.Fatal(err)
	}
	want("Instance", c.Snapshot().Sub(before), map[zkcount.Op]int64{zkcount.OpGetData: 1})

	// A provider: NewProvider sends nothing (a constructor); Watch's
	// load is 1 getChildren + 1 getData per instance, with watches;
	// reading it sends nothing.
	before = c.Snapshot()
	if _, err := d.NewProvider("api"); err != nil {
		t.Fatal(err)
	}
	want("NewProvider", c.Snapshot().Sub(before), map[zkcount.Op]int64{})
	p := newProvider(t, d, "api")
	for range 10 {
		if _, err := p.Pick(); err != nil {
			t.Fatal(err)
		}
	}
	_ = p.Instances()
	want("Watch of 3, 10 Picks", c.Snapshot().Sub(before), map[zkcount.Op]int64{zkcount.OpGetChildren2: 1, zkcount.OpGetData: 3})
	// Another client's changes: an instance added is 1 getChildren + 1
	// getData, a data change 1 getData, a removal 1 getChildren.
	dOther := newDiscovery(t, other, base)
	before = c.Snapshot()
	added := register(t, dOther, discovery.Instance{Name: "api", ID: "d"})
	waitInstances(t, p, "a,b,c,d")
	want("provider: one added", settle(t, c, before, zkcount.OpGetData, 1), map[zkcount.Op]int64{zkcount.OpGetChildren2: 1, zkcount.OpGetData: 1})
	before = c.Snapshot()
	inst = added.Instance()
	inst.Port = 9
	if err := added.Update(ctx, inst); err != nil {
		t.Fatal(err)
	}
	waitPort(t, p, "d", 9)
	want("provider: one changed", c.Snapshot().Sub(before), map[zkcount.Op]int64{zkcount.OpGetData: 1})
	before = c.Snapshot()
	if err := added.Leave(ctx); err != nil {
		t.Fatal(err)
	}
	waitInstances(t, p, "a,b,c")
	// The deletion makes the Provider list again whichever of the node's
	// and the service's watch events comes first (so a node deleted and
	// created again is never missed); a read of the node may come first.
	removed := settle(t, c, before, zkcount.OpGetChildren2, 1)
	if removed.Req(zkcount.OpGetData) > 1 {
		t.Errorf("provider: one removed: %v, want 1 getChildren and at most 1 getData", removed.Requests)
	}
	delete(removed.Requests, zkcount.OpGetData)
	want("provider: one removed", removed, map[zkcount.Op]int64{zkcount.OpGetChildren2: 1})

	// Leave: 1 exists + 1 delete. (The provider's watch on the node
	// fires; it reads nothing for a deletion but lists the service: 1
	// getChildren.)
	p.stop(t)
	for _, r := range []*discovery.Registration{r, r2, r3} {
		before = c.Snapshot()
		if err := r.Leave(ctx); err != nil {
			t.Fatal(err)
		}
		want("Leave", c.Snapshot().Sub(before), map[zkcount.Op]int64{zkcount.OpExists: 1, zkcount.OpDelete: 1})
	}
	if err := setup.Leave(ctx); err != nil {
		t.Fatal(err)
	}
}

// A done ctx sends nothing, on every call that talks to ZooKeeper.
func TestDoneCtxSendsNothing(t *testing.T) {
	e := ensemble(t)
	ctx := ctxT(t, time.Minute)
	s, c := testutil.CountedSession(t, e.Addrs())
	d := newDiscovery(t, s, basePath(t))
	r := register(t, d, discovery.Instance{Name: "api", ID: "a", ServiceType: discovery.Static})
	done, cancel := context.WithCancel(ctx)
	cancel()
	before := c.Snapshot()
	calls := map[string]func() error{
		"Register": func() error {
			_, err := d.Register(done, discovery.Instance{Name: "api", ID: "b"})
			return err
		},
		"Names": func() error { _, err := d.Names(done); return err },
		"Instances": func() error {
			_, err := d.Instances(done, "api")
			return err
		},
		"Instance": func() error {
			_, err := d.Instance(done, "api", "a")
			return err
		},
		"Update": func() error { return r.Update(done, r.Instance()) },
		"Leave":  func() error { return r.Leave(done) },
		"Provider.Watch": func() error {
			p, err := d.NewProvider("api")
			if err != nil {
				return err
			}
			w := &watched{p, p.Watch(done)}
			w.ended(t)
			return w.st.Err()
		},
	}
	for name, call := range calls {
		if err := call(); !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a done ctx = %v, want context.Canceled", name, err)
		}
	}
	if sent := c.Snapshot().Sub(before); sent.Total() != 0 {
		t.Fatalf("a done ctx sent %v", sent.Requests)
	}
	// Leave with a done ctx changed nothing: it works afterwards.
	if err := r.Leave(ctx); err != nil {
		t.Fatal(err)
	}
}
