package discovery_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"github.com/zkrecipes/zkrecipes/testenv"

	"github.com/zkrecipes/zkrecipes/discovery"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// watched is a Provider with the Stream of its Watch.
type watched struct {
	*discovery.Provider
	st *recipes.Stream[[]discovery.Instance]
}

// newProvider is Discovery.NewProvider and Provider.Watch for arguments
// the test knows to be valid, returned once the first value (the load)
// arrived; the Stream is stopped at cleanup.
func newProvider(tb testing.TB, d *discovery.Discovery, name string, opts ...discovery.ProviderOption) *watched {
	tb.Helper()
	p, err := d.NewProvider(name, opts...)
	if err != nil {
		tb.Fatal(err)
	}
	w := &watched{p, p.Watch(context.Background())}
	tb.Cleanup(func() { w.stop(tb) })
	select {
	case _, ok := <-w.st.C:
		if !ok {
			tb.Fatalf("Watch ended before the load: %v", w.st.Err())
		}
	case <-ctxT(tb, time.Minute).Done():
		tb.Fatal("no load within a minute")
	}
	return w
}

// stop stops w's Stream and waits (with a deadline) for C to close.
func (w *watched) stop(tb testing.TB) {
	w.st.Stop()
	w.ended(tb)
}

// ended waits (with a deadline) for w's C to close, for a Stream that
// ends on its own (bad input, a closed session, a done ctx).
func (w *watched) ended(tb testing.TB) {
	tb.Helper()
	ctx := ctxT(tb, 30*time.Second)
	for {
		select {
		case _, ok := <-w.st.C:
			if !ok {
				return
			}
		case <-ctx.Done():
			tb.Fatal("the provider's Stream still open after 30 s")
		}
	}
}

// The provider follows registrations, updates and unregistrations made by
// another client, starting before the service exists.
func TestProviderFollows(t *testing.T) {
	e := ensemble(t)
	ctx := ctxT(t, 2*time.Minute)
	s := connect(t, e.Addrs())
	reg := connect(t, e.Addrs())
	base := basePath(t)
	p := newProvider(t, newDiscovery(t, s, base), "api")
	if len(p.Instances()) != 0 {
		t.Fatal("instances before any registration")
	}
	if _, err := p.Pick(); !errors.Is(err, discovery.ErrNoInstances) {
		t.Fatalf("Pick with none = %v", err)
	}
	if st, _ := node(t, s, base+"/api"); st != nil {
		t.Fatal("the provider created the service node")
	}
	d := newDiscovery(t, reg, base)
	var regs []*discovery.Registration
	for i := range 3 {
		regs = append(regs, register(t, d, discovery.Instance{Name: "api", ID: fmt.Sprintf("i-%d", i), Port: 1000 + i}))
	}
	register(t, d, discovery.Instance{Name: "other", ID: "x"}) // another service: not ours
	waitInstances(t, p, "i-0,i-1,i-2")

	// A data change.
	inst := regs[1].Instance()
	inst.Port = 2001
	if err := regs[1].Update(ctx, inst); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the update", func() bool {
		all := p.Instances()
		return len(all) == 3 && all[1].Port == 2001
	})
	// Disabled: cached, not usable.
	inst.Disabled = true
	if err := regs[1].Update(ctx, inst); err != nil {
		t.Fatal(err)
	}
	waitInstances(t, p, "i-0,i-2")
	inst.Disabled = false
	if err := regs[1].Update(ctx, inst); err != nil {
		t.Fatal(err)
	}
	waitInstances(t, p, "i-0,i-1,i-2")
	// Gone.
	if err := regs[0].Leave(ctx); err != nil {
		t.Fatal(err)
	}
	waitInstances(t, p, "i-1,i-2")
	// A node that is not an instance is left out; fixed, it is in.
	if _, err := reg.Conn().Create(base+"/api/junk", []byte("{"), 0, testutil.ACL()); err != nil {
		t.Fatal(err)
	}
	good, _ := discovery.Marshal(discovery.Instance{Name: "api", ID: "junk"})
	if _, err := reg.Conn().Set(base+"/api/junk", good, -1); err != nil {
		t.Fatal(err)
	}
	waitInstances(t, p, "i-1,i-2,junk")
	if err := reg.Conn().Delete(base+"/api/junk", -1); err != nil {
		t.Fatal(err)
	}
	// Every instance gone, then the service node itself: the provider
	// waits for it to come back.
	for _, r := range regs[1:] {
		if err := r.Leave(ctx); err != nil {
			t.Fatal(err)
		}
	}
	waitInstances(t, p, "")
	if err := reg.Conn().Delete(base+"/api", -1); err != nil {
		t.Fatal(err)
	}
	r := register(t, d, discovery.Instance{Name: "api", ID: "back"})
	waitInstances(t, p, "back")
	if err := r.Leave(ctx); err != nil {
		t.Fatal(err)
	}
	waitInstances(t, p, "")
	if err := p.st.Err(); err != nil {
		t.Fatalf("Err while running = %v", err)
	}
}

// Stopping the Stream of Watch stops the Provider: C closes, Err is nil,
// Pick fails, Instances keeps the last state, its goroutines are gone
// (ensemble checks); stopping again is fine, and so is a second Watch,
// which ends at once.
func TestProviderStop(t *testing.T) {
	e := ensemble(t)
	s := connect(t, e.Addrs())
	d := newDiscovery(t, s, basePath(t))
	register(t, d, discovery.Instance{Name: "api", ID: "i"})
	p := newProvider(t, d, "api")
	if ids(p.Instances()) != "i" {
		t.Fatalf("the first value came before the load: [%s]", ids(p.Instances()))
	}
	p.stop(t)
	if err := p.st.Err(); err != nil {
		t.Fatalf("Err after Stop = %v", err)
	}
	if _, err := p.Pick(); !errors.Is(err, discovery.ErrProviderClosed) {
		t.Fatalf("Pick after Stop = %v", err)
	}
	if ids(p.Instances()) != "i" {
		t.Fatalf("Instances after Stop = [%s], want the last state", ids(p.Instances()))
	}
	p.stop(t)
	again := &watched{p.Provider, p.Watch(ctxT(t, time.Minute))}
	again.ended(t)
	if err := again.st.Err(); !errors.Is(err, discovery.ErrProviderClosed) {
		t.Fatalf("a second Watch ended with %v, want ErrProviderClosed", err)
	}

	// Stopped by the session's close: Err says so.
	s2 := connect(t, e.Addrs())
	p2 := newProvider(t, newDiscovery(t, s2, basePath(t)), "api")
	if err := s2.Close(); err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t, 10*time.Second)
	for open := true; open; {
		select {
		case _, open = <-p2.st.C:
		case <-ctx.Done():
			t.Fatal("the provider did not stop with its session")
		}
	}
	if err := p2.st.Err(); !errors.Is(err, recipes.ErrClosed) {
		t.Fatalf("Err after the session closed = %v", err)
	}
	if _, err := p2.Pick(); !errors.Is(err, discovery.ErrProviderClosed) || !errors.Is(err, recipes.ErrClosed) {
		t.Fatalf("Pick after the session closed = %v", err)
	}
}

// The strategies over a real cache: round robin visits every instance in
// node-name order; sticky stays until its instance goes (or is noted
// down); random reaches every instance.
func TestProviderStrategies(t *testing.T) {
	e := ensemble(t)
	ctx := ctxT(t, time.Minute)
	s := connect(t, e.Addrs())
	base := basePath(t)
	d := newDiscovery(t, s, base)
	regs := map[string]*discovery.Registration{}
	for _, id := range []string{"c", "a", "b"} {
		regs[id] = register(t, d, discovery.Instance{Name: "api", ID: id})
	}
	rr := newProvider(t, d, "api")
	sticky := newProvider(t, d, "api", discovery.WithStrategy(discovery.Sticky(nil)), discovery.WithDownPolicy(time.Hour, 1))
	random := newProvider(t, d, "api", discovery.WithStrategy(discovery.Random()))
	for _, p := range []*watched{rr, sticky, random} {
		waitInstances(t, p, "a,b,c")
	}
	var got []string
	for range 6 {
		inst, err := rr.Pick()
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, inst.ID)
	}
	if fmt.Sprint(got) != "[a b c a b c]" {
		t.Fatalf("round robin picked %v", got)
	}
	pick := func(p *watched) string {
		inst, err := p.Pick()
		if err != nil {
			t.Fatal(err)
		}
		return inst.ID
	}
	first := pick(sticky)
	for range 5 {
		if id := pick(sticky); id != first {
			t.Fatalf("sticky moved from %s to %s", first, id)
		}
	}
	// Its instance gone: it moves, and sticks again.
	if err := regs[first].Leave(ctx); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the sticky provider to see it gone", func() bool { return len(sticky.Instances()) == 2 })
	second := pick(sticky)
	if second == first || pick(sticky) != second {
		t.Fatalf("sticky after %s left: %s then %s", first, second, pick(sticky))
	}
	// Noted down (threshold 1): it moves again.
	sticky.NoteError(second)
	third := pick(sticky)
	if third == second || third == first {
		t.Fatalf("sticky after noting %s down picked %s", second, third)
	}
	if n := len(sticky.Instances()); n != 1 {
		t.Fatalf("%d usable after a note, want 1", n)
	}
	seen := map[string]bool{}
	waitFor(t, 10*time.Second, "random to reach both remaining instances", func() bool {
		seen[pick(random)] = true
		return len(seen) == 2
	})
	// A filter.
	f := newProvider(t, d, "api", discovery.WithFilter(func(i discovery.Instance) bool { return i.ID != third }))
	if got := ids(f.Instances()); got == "" || got == third {
		t.Fatalf("filtered provider has [%s]", got)
	}
}

// providerOnLink starts, for a test that cuts a provider off or expires
// its session, a provider of "api" on session s behind a link of its own
// (name) and, on another session, d with instance "a" registered (r) and
// seen by the provider.
func providerOnLink(t *testing.T, name string) (link *testenv.Link, s *recipes.Session, d *discovery.Discovery, r *discovery.Registration, p *watched) {
	t.Helper()
	e := ensemble(t)
	link, err := e.NewLink(name)
	if err != nil {
		t.Fatal(err)
	}
	s = connect(t, link.Addrs())
	base := basePath(t)
	d = newDiscovery(t, connect(t, e.Addrs()), base)
	r = register(t, d, discovery.Instance{Name: "api", ID: "a"})
	p = newProvider(t, newDiscovery(t, s, base), "api")
	waitInstances(t, p, "a")
	return link, s, d, r, p
}

// After its session expires, a provider reloads on the next session and
// sees what changed meanwhile.
func TestProviderAfterExpiry(t *testing.T) {
	ctx := ctxT(t, 2*time.Minute)
	link, s, d, r1, p := providerOnLink(t, "discovery-provider-expiry")
	if err := link.Blackhole(); err != nil {
		t.Fatal(err)
	}
	// Changes while the provider cannot hear of them.
	r2 := register(t, d, discovery.Instance{Name: "api", ID: "b"})
	inst := r1.Instance()
	inst.Port = 5
	if err := r1.Update(ctx, inst); err != nil {
		t.Fatal(err)
	}
	old := s.ID()
	if err := link.ExpireSession(ctx, old); err != nil { // still cut off until expired
		t.Fatal(err)
	}
	all := waitInstances(t, p, "a,b")
	waitFor(t, 10*time.Second, "the update made while away", func() bool {
		all = p.Instances()
		return len(all) == 2 && all[0].Port == 5
	})
	if s.ID() == old {
		t.Fatal("the session did not change")
	}
	// And it still follows on the new session.
	if err := r2.Leave(ctx); err != nil {
		t.Fatal(err)
	}
	waitInstances(t, p, "a")
	if err := r1.Leave(ctx); err != nil {
		t.Fatal(err)
	}
	waitInstances(t, p, "")
}

// A provider whose session expires keeps the instances that did not
// change meanwhile: the reload on the new session reports only the
// differences (package cache), so what was read before the expiry and is
// still there must stay. Provider: "the cache only changes to what
// ZooKeeper held at some moment [...] after a reconnection or a session
// expiry it is read again, and changes to what was read". Instance "a"
// is registered the whole time, on another session: no sample of the
// provider may lack it, and once "b" (registered during the outage) is
// in, both must be.
func TestProviderKeepsUnchangedThroughExpiry(t *testing.T) {
	ctx := ctxT(t, 2*time.Minute)
	link, s, d, _, p := providerOnLink(t, "discovery-provider-keeps")

	stop := make(chan struct{})
	lacked := make(chan string, 1)
	sampled := make(chan struct{})
	// the sampler ends with the test, whichever way it ends
	endSampling := sync.OnceFunc(func() { close(stop); <-sampled })
	defer endSampling()
	go func() {
		defer close(sampled)
		for {
			if got := ids(p.Instances()); !strings.Contains(","+got+",", ",a,") {
				select {
				case lacked <- got:
				default:
				}
			}
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	if err := link.Blackhole(); err != nil {
		t.Fatal(err)
	}
	register(t, d, discovery.Instance{Name: "api", ID: "b"})
	old := s.ID()
	if err := link.ExpireSession(ctx, old); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the provider's new session", func() bool { return s.ID() != old && s.ID() != 0 })
	waitInstances(t, p, "a,b")
	endSampling()
	select {
	case got := <-lacked:
		t.Fatalf("the provider lacked the unchanged instance a at some moment: [%s]", got)
	default:
	}
}
