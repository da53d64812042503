package discovery_test

import (
	"context"
	"encoding/json"
	"errors"
	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/zkrecipes/discovery"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// Register, query, Update and Leave, with the node layout Curator
// uses: "<base>/<name>/<id>", EPHEMERAL for Dynamic and PERSISTENT for
// Static and Permanent, the parents container nodes (see TestCost: the
// server does not show a container in its stat), the data the instance's
// JSON.
func TestRegisterQueryUnregister(t *testing.T) {
	e := ensemble(t)
	ctx := ctxT(t, time.Minute)
	s := connect(t, e.Addrs())
	base := basePath(t)
	d := newDiscovery(t, s, base)

	dyn := discovery.Instance{Name: "api", ID: "dyn-1", Address: "10.0.0.1", Port: 8080,
		Payload: json.RawMessage(`{"zone":"a"}`)}
	before := time.Now()
	r := register(t, d, dyn)
	if r.Path() != base+"/api/dyn-1" {
		t.Fatalf("path %s", r.Path())
	}
	got := r.Instance()
	if got.ServiceType != discovery.Dynamic || got.RegistrationTime.Before(before.Truncate(time.Millisecond)) || got.RegistrationTime.After(time.Now()) {
		t.Fatalf("Register did not complete the instance: %+v", got)
	}
	data, st := node(t, s, r.Path())
	if st == nil || st.EphemeralOwner != s.ID() {
		t.Fatalf("dynamic node %s: stat %+v, want ephemeral of 0x%x", r.Path(), st, s.ID())
	}
	if want, _ := discovery.Marshal(got); string(data) != string(want) {
		t.Fatalf("node holds %s, want %s", data, want)
	}
	for _, p := range []string{base, base + "/api"} {
		if _, st := node(t, s, p); st == nil || st.EphemeralOwner != 0 {
			t.Fatalf("parent %s: %+v, want a node of no session (TestCost sees them created as containers)", p, st)
		}
	}

	static := register(t, d, discovery.Instance{Name: "api", ID: "static-1", Port: 81, ServiceType: discovery.Static})
	perm := register(t, d, discovery.Instance{Name: "db", ID: "perm-1", Port: 82, ServiceType: discovery.Permanent})
	for _, r := range []*discovery.Registration{static, perm} {
		if _, st := node(t, s, r.Path()); st == nil || st.EphemeralOwner != 0 {
			t.Fatalf("%s: %+v, want a persistent node", r.Path(), st)
		}
	}

	names, err := d.Names(ctx)
	if err != nil || len(names) != 2 || names[0] != "api" || names[1] != "db" {
		t.Fatalf("Names = %v, %v", names, err)
	}
	insts, err := d.Instances(ctx, "api")
	if err != nil || ids(insts) != "dyn-1,static-1" {
		t.Fatalf("Instances = [%s], %v", ids(insts), err)
	}
	if !insts[0].Equal(got) {
		t.Fatalf("Instances read %+v, registered %+v", insts[0], got)
	}
	one, err := d.Instance(ctx, "api", "dyn-1")
	if err != nil || string(one.Payload) != `{"zone":"a"}` {
		t.Fatalf("Instance = %+v, %v", one, err)
	}
	if _, err := d.Instance(ctx, "api", "nope"); !errors.Is(err, discovery.ErrNotFound) || !errors.Is(err, zk.ErrNoNode) {
		t.Fatalf("Instance of a missing id = %v", err)
	}
	if insts, err := d.Instances(ctx, "nothing"); err != nil || len(insts) != 0 {
		t.Fatalf("Instances of an unknown service = %v, %v", insts, err)
	}
	if names, err := newDiscovery(t, s, base+"-none").Names(ctx); err != nil || len(names) != 0 {
		t.Fatalf("Names under a missing base = %v, %v", names, err)
	}

	// A node that is not an instance is left out of Instances, and
	// reported by Instance.
	if _, err := s.Conn().Create(base+"/api/junk", []byte("not json"), 0, testutil.ACL()); err != nil {
		t.Fatal(err)
	}
	if insts, err := d.Instances(ctx, "api"); err != nil || ids(insts) != "dyn-1,static-1" {
		t.Fatalf("Instances with a malformed node = [%s], %v", ids(insts), err)
	}
	if _, err := d.Instance(ctx, "api", "junk"); !errors.Is(err, discovery.ErrMalformed) {
		t.Fatalf("Instance of a malformed node = %v", err)
	}
	if err := s.Conn().Delete(base+"/api/junk", -1); err != nil {
		t.Fatal(err)
	}

	// Update: new data, same node; name, id and type cannot change.
	upd := got
	upd.Port = 9090
	upd.Disabled = true
	upd.RegistrationTime = time.Time{} // keeps the registered one
	if err := r.Update(ctx, upd); err != nil {
		t.Fatal(err)
	}
	one, err = d.Instance(ctx, "api", "dyn-1")
	if err != nil || one.Port != 9090 || !one.Disabled || !one.RegistrationTime.Equal(got.RegistrationTime.Truncate(time.Millisecond)) {
		t.Fatalf("after Update: %+v, %v", one, err)
	}
	if _, st2 := node(t, s, r.Path()); st2.Czxid != st.Czxid {
		t.Fatal("Update re-created the node")
	}
	for _, bad := range []discovery.Instance{
		{Name: "api", ID: "other"},
		{Name: "db", ID: "dyn-1"},
		{Name: "api", ID: "dyn-1", ServiceType: discovery.Static},
		{Name: "api", ID: "dyn-1", Port: 70000},
	} {
		if err := r.Update(ctx, bad); !errors.Is(err, discovery.ErrInvalidInstance) {
			t.Fatalf("Update(%+v) = %v, want ErrInvalidInstance", bad, err)
		}
	}
	if _, err := d.Register(ctx, dyn); !errors.Is(err, discovery.ErrAlreadyRegistered) {
		t.Fatalf("second Register of dyn-1 = %v", err)
	}

	// Leave deletes; the Registration is then spent.
	for _, r := range []*discovery.Registration{r, static, perm} {
		if err := r.Leave(ctx); err != nil {
			t.Fatal(err)
		}
		if _, st := node(t, s, r.Path()); st != nil {
			t.Fatalf("%s still there after Leave", r.Path())
		}
	}
	if err := r.Leave(ctx); !errors.Is(err, discovery.ErrUnregistered) {
		t.Fatalf("second Leave = %v", err)
	}
	if err := r.Update(ctx, got); !errors.Is(err, discovery.ErrUnregistered) {
		t.Fatalf("Update after Leave = %v", err)
	}
	// The id can be registered again.
	r2 := register(t, d, dyn)
	if err := r2.Leave(ctx); err != nil {
		t.Fatal(err)
	}
}

// A node already at the path (a previous run of the instance whose session
// has not expired, or another registrant) is replaced by Register, as
// Curator does; Leave then deletes only our own node.
func TestRegisterReplaces(t *testing.T) {
	e := ensemble(t)
	ctx := ctxT(t, time.Minute)
	s := connect(t, e.Addrs())
	old := connect(t, e.Addrs())
	base := basePath(t)
	d := newDiscovery(t, s, base)
	dOld := newDiscovery(t, old, base)

	inst := discovery.Instance{Name: "api", ID: "i-1", Port: 1}
	rOld := register(t, dOld, inst)
	_, stOld := node(t, s, rOld.Path())
	inst.Port = 2
	r := register(t, d, inst)
	data, st := node(t, s, r.Path())
	if st == nil || st.EphemeralOwner != s.ID() || st.Czxid == stOld.Czxid {
		t.Fatalf("Register did not replace the old node: %+v", st)
	}
	if got, _ := discovery.Unmarshal(data); got.Port != 2 {
		t.Fatalf("node holds %s", data)
	}
	// The displaced registration neither deletes nor re-creates ours.
	if err := rOld.Leave(ctx); err != nil {
		t.Fatal(err)
	}
	if _, st2 := node(t, s, r.Path()); st2 == nil || st2.Czxid != st.Czxid {
		t.Fatalf("the displaced registration's Leave touched our node: %+v", st2)
	}
	// A persistent node at the path is replaced too.
	if _, err := s.Conn().Create(base+"/api/i-2", []byte("{}"), 0, testutil.ACL()); err != nil {
		t.Fatal(err)
	}
	r2 := register(t, d, discovery.Instance{Name: "api", ID: "i-2"})
	if _, st := node(t, s, r2.Path()); st == nil || st.EphemeralOwner != s.ID() {
		t.Fatalf("persistent node not replaced: %+v", st)
	}
	for _, r := range []*discovery.Registration{r, r2} {
		if err := r.Leave(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// A Dynamic registration survives the loss of its session: the node is
// created again on the next session, with the latest data, and updates made
// while the session was gone are not lost.
func TestReRegisterAfterExpiry(t *testing.T) {
	e := ensemble(t)
	ctx := ctxT(t, 2*time.Minute)
	link, err := e.NewLink("discovery-expiry")
	if err != nil {
		t.Fatal(err)
	}
	s := connect(t, link.Addrs())
	watcher := connect(t, e.Addrs())
	d := newDiscovery(t, s, basePath(t))
	r := register(t, d, discovery.Instance{Name: "api", ID: "i-1", Port: 1})
	static := register(t, d, discovery.Instance{Name: "api", ID: "s-1", Port: 2, ServiceType: discovery.Static})
	_, st := node(t, watcher, r.Path())
	_, stStatic := node(t, watcher, static.Path())

	if r.Present().Err() != nil || static.Present().Err() != nil {
		t.Fatal("Present done while the nodes are there")
	}
	for round := range 2 {
		old := s.ID()
		present := r.Present()
		if err := link.ExpireSession(ctx, old); err != nil {
			t.Fatal(err)
		}
		select {
		case <-present.Done():
		case <-ctx.Done():
			t.Fatal("Present not done after the session expired")
		}
		if cause := context.Cause(present); !errors.Is(cause, recipes.ErrSessionLost) {
			t.Fatalf("Present's cause %v, want ErrSessionLost", cause)
		}
		// The server deleted the node with the session (ExpireSession
		// returns once the server has expired it); the Registration
		// creates it again under the next session. The node on the server
		// is not yet the Registration knowing it: its persistent.Node
		// publishes a new Present once its watch has seen the node ours,
		// after its create returns; an Update racing that return is
		// written first (seen in the secured pass), and Present is the
		// old, done one until the watch. So wait for both.
		waitFor(t, 30*time.Second, "the node on the new session, and Present again", func() bool {
			_, st := node(t, watcher, r.Path())
			return st != nil && st.EphemeralOwner != old && st.EphemeralOwner == s.ID() && r.Present().Err() == nil
		})
		inst := r.Instance()
		inst.Port = 100 + round
		if err := r.Update(ctx, inst); err != nil {
			t.Fatal(err)
		}
		data, st2 := node(t, watcher, r.Path())
		if got, _ := discovery.Unmarshal(data); got.Port != 100+round || st2.Czxid == st.Czxid {
			t.Fatalf("round %d: node %s (czxid %d, was %d)", round, data, st2.Czxid, st.Czxid)
		}
		st = st2
		if r.Present().Err() != nil {
			t.Fatalf("Present done once the node is back: %v", context.Cause(r.Present()))
		}
		if _, st := node(t, watcher, static.Path()); st == nil || st.Czxid != stStatic.Czxid || static.Present().Err() != nil {
			t.Fatalf("the static node changed across the expiry: %+v (present: %v)", st, static.Present().Err())
		}
	}
	for _, r := range []*discovery.Registration{r, static} {
		if err := r.Leave(ctx); err != nil {
			t.Fatal(err)
		}
		if cause := context.Cause(r.Present()); !errors.Is(cause, recipes.ErrReleased) {
			t.Fatalf("Present after Leave: %v, want ErrReleased", cause)
		}
	}
	if _, st := node(t, watcher, r.Path()); st != nil {
		t.Fatal("node left after Leave")
	}
}

// An update made while the session is gone reaches the node created on the
// next session.
func TestUpdateWhileExpired(t *testing.T) {
	e := ensemble(t)
	ctx := ctxT(t, 2*time.Minute)
	link, err := e.NewLink("discovery-update-expired")
	if err != nil {
		t.Fatal(err)
	}
	s := connect(t, link.Addrs())
	watcher := connect(t, e.Addrs())
	d := newDiscovery(t, s, basePath(t))
	r := register(t, d, discovery.Instance{Name: "api", ID: "i-1", Port: 1})
	old := s.ID()
	if err := link.Blackhole(); err != nil {
		t.Fatal(err)
	}
	// The server expires the session while the client cannot reach it.
	waitFor(t, 30*time.Second, "the server to expire the session", func() bool {
		_, st := node(t, watcher, r.Path())
		return st == nil
	})
	done := make(chan error, 1)
	go func() {
		inst := r.Instance()
		inst.Port = 7
		done <- r.Update(ctx, inst) // waits for a session
	}()
	if err := link.Heal(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the node with the update", func() bool {
		data, st := node(t, watcher, r.Path())
		got, _ := discovery.Unmarshal(data)
		return st != nil && st.EphemeralOwner != old && got.Port == 7
	})
	if err := r.Leave(ctx); err != nil {
		t.Fatal(err)
	}
}

// Deleted by someone else, the node comes back; held by another
// registrant of the same id, it is left alone until that one goes.
func TestReCreateAfterDeletion(t *testing.T) {
	e := ensemble(t)
	ctx := ctxT(t, time.Minute)
	s := connect(t, e.Addrs())
	other := connect(t, e.Addrs())
	base := basePath(t)
	d := newDiscovery(t, s, base)
	r := register(t, d, discovery.Instance{Name: "api", ID: "i-1", Port: 1})
	for range 3 {
		_, st := node(t, other, r.Path())
		present := r.Present()
		if err := other.Conn().Delete(r.Path(), -1); err != nil {
			t.Fatal(err)
		}
		<-present.Done()
		if cause := context.Cause(present); !errors.Is(cause, recipes.ErrNodeDeleted) {
			t.Fatalf("Present's cause %v, want ErrNodeDeleted", cause)
		}
		waitFor(t, 10*time.Second, "the node again", func() bool {
			_, st2 := node(t, other, r.Path())
			return st2 != nil && st2.Czxid != st.Czxid && st2.EphemeralOwner == s.ID()
		})
	}
	// Another registrant takes the id over: ours leaves its node alone.
	rOther := register(t, newDiscovery(t, other, base), discovery.Instance{Name: "api", ID: "i-1", Port: 2})
	_, st := node(t, other, r.Path())
	if st.EphemeralOwner != other.ID() {
		t.Fatalf("owner 0x%x", st.EphemeralOwner)
	}
	waitFor(t, 10*time.Second, "Present done while another registrant holds the path", func() bool { return r.Present().Err() != nil })
	// Give ours a chance to interfere: an update of the other's data
	// fires our watch.
	inst := rOther.Instance()
	inst.Port = 3
	if err := rOther.Update(ctx, inst); err != nil {
		t.Fatal(err)
	}
	if insts, err := d.Instances(ctx, "api"); err != nil || len(insts) != 1 || insts[0].Port != 3 {
		t.Fatalf("Instances = %+v, %v", insts, err)
	}
	if _, st2 := node(t, other, r.Path()); st2 == nil || st2.Czxid != st.Czxid {
		t.Fatalf("the other registrant's node was replaced: %+v", st2)
	}
	// Once the other one leaves, ours is back.
	if err := rOther.Leave(ctx); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "our node again", func() bool {
		data, st := node(t, other, r.Path())
		got, _ := discovery.Unmarshal(data)
		return st != nil && st.EphemeralOwner == s.ID() && got.Port == 1 && r.Present().Err() == nil
	})
	if err := r.Leave(ctx); err != nil {
		t.Fatal(err)
	}
}

// Closing the session ends a Dynamic registration's keeper (no goroutine
// is left, checked by ensemble) and its node goes with the session.
func TestRegistrationEndsWithSession(t *testing.T) {
	e := ensemble(t)
	ctx := ctxT(t, time.Minute)
	s := connect(t, e.Addrs())
	watcher := connect(t, e.Addrs())
	d := newDiscovery(t, s, basePath(t))
	r := register(t, d, discovery.Instance{Name: "api", ID: "i-1"})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, st := node(t, watcher, r.Path()); st != nil {
		t.Fatal("node left after the session closed")
	}
	if err := r.Leave(ctx); !errors.Is(err, recipes.ErrClosed) {
		t.Fatalf("Leave on a closed session = %v, want ErrClosed", err)
	}
	if _, err := d.Register(ctx, discovery.Instance{Name: "api", ID: "i-2"}); !errors.Is(err, recipes.ErrClosed) {
		t.Fatalf("Register on a closed session = %v", err)
	}
	p, err := d.NewProvider("api")
	if err != nil {
		t.Fatal(err)
	}
	w := &watched{p, p.Watch(ctx)}
	w.ended(t)
	if err := w.st.Err(); !errors.Is(err, recipes.ErrClosed) {
		t.Fatalf("Provider.Watch on a closed session ended with %v", err)
	}
	if _, err := p.Pick(); !errors.Is(err, recipes.ErrClosed) || !errors.Is(err, discovery.ErrProviderClosed) {
		t.Fatalf("Pick after that = %v", err)
	}
}
