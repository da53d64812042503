package barrier_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/zkrecipes/barrier"
	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// TestDoneCtxSendsNothing: every entry point called with a done ctx returns
// its cause and sends no request.
func TestDoneCtxSendsNothing(t *testing.T) {
	e := ensemble(t)
	ctx := ctxT(t, time.Minute)
	s, counter := testutil.CountedSession(t, e.Addrs())
	path := ownPath(t)
	done, cancel := context.WithCancel(ctx)
	cancel()

	b := newBarrier(t, s, path+"/b")
	d := newDouble(t, s, path+"/d", 1)
	calls := []struct {
		name string
		f    func() error
	}{
		{"Set", func() error { return b.Set(done) }},
		{"Remove", func() error { return b.Remove(done) }},
		{"Wait", func() error { return b.Wait(done) }},
		{"Enter", func() error { return d.Enter(done) }},
	}
	for _, c := range calls {
		before := counter.Snapshot()
		err := c.f()
		if diff := counter.Snapshot().Sub(before); diff.Total() != 0 {
			t.Errorf("%s with a done ctx sent %v", c.name, diff.Requests)
		}
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a done ctx: %v", c.name, err)
		}
	}
	if err := d.Enter(ctx); err != nil {
		t.Fatal(err)
	}
	before := counter.Snapshot()
	if err := d.Leave(done); !errors.Is(err, context.Canceled) {
		t.Errorf("Leave with a done ctx: %v", err)
	}
	if diff := counter.Snapshot().Sub(before); diff.Total() != 0 {
		t.Errorf("Leave with a done ctx sent %v", diff.Requests)
	}
	if err := d.Leave(ctx); err != nil { // still a member: Leave works
		t.Fatal(err)
	}
}

// TestBadInputSendsNothing: bad arguments (nil session, invalid or
// reserved paths, paths too long for a request, n < 1) make the
// constructors fail with a sentinel, never panic, and send nothing; a
// closed session makes every method fail with recipes.ErrClosed.
func TestBadInputSendsNothing(t *testing.T) {
	e := ensemble(t)
	ctx := ctxT(t, time.Minute)
	s, counter := testutil.CountedSession(t, e.Addrs())
	path := ownPath(t)
	tooLong := "/" + strings.Repeat("x", recipes.MaxPathLen-1) // valid, but its create is over the limit

	before := counter.Snapshot()
	for _, tc := range []struct {
		path string
		want error
	}{
		{"", recipes.ErrInvalidPath},
		{"/", recipes.ErrInvalidPath},
		{"relative", recipes.ErrInvalidPath},
		{"/zookeeper", recipes.ErrInvalidPath},
		{"/zookeeper/b", recipes.ErrInvalidPath},
		{path + "/\U0001F600", recipes.ErrInvalidPath},
		{path + "/a\x00", recipes.ErrInvalidPath},
		{"/" + strings.Repeat("x", 1<<20), recipes.ErrDataTooLarge},
		{tooLong, recipes.ErrDataTooLarge},
	} {
		if b, err := barrier.New(s, tc.path); b != nil || !errors.Is(err, tc.want) {
			t.Errorf("New(%.40q) = %v, %.200v; want %v", tc.path, b, err, tc.want)
		}
		if d, err := barrier.NewDouble(s, tc.path, 2); d != nil || !errors.Is(err, tc.want) {
			t.Errorf("NewDouble(%.40q) = %v, %.200v; want %v", tc.path, d, err, tc.want)
		}
	}
	// A member node under a path just short enough for the barrier's own
	// create would not fit: NewDouble refuses it.
	mid := "/" + strings.Repeat("y", recipes.MaxPathLen-60)
	if _, err := barrier.NewDouble(s, mid, 1); !errors.Is(err, recipes.ErrDataTooLarge) {
		t.Errorf("double barrier on a long path: %.200v", err)
	}
	for _, n := range []int{0, -1, -1 << 62} {
		if _, err := barrier.NewDouble(s, path, n); !errors.Is(err, barrier.ErrMembers) || !errors.Is(err, recipes.ErrBadArgument) {
			t.Errorf("n = %d: %v", n, err)
		}
	}
	if _, err := barrier.New(nil, path); !errors.Is(err, recipes.ErrNilSession) {
		t.Errorf("New(nil session): %v", err)
	}
	if _, err := barrier.NewDouble(nil, path, 1); !errors.Is(err, recipes.ErrNilSession) {
		t.Errorf("NewDouble(nil session): %v", err)
	}
	if diff := counter.Snapshot().Sub(before); diff.Total() != 0 || diff.Connects != 0 {
		t.Errorf("bad arguments sent %v, %d reconnections", diff.Requests, diff.Connects)
	}
	closed := connect(t, e.Addrs())
	testutil.CloseSession(t, closed)
	b, d := newBarrier(t, closed, path), newDouble(t, closed, path, 1)
	for name, err := range map[string]error{
		"Set": b.Set(ctx), "Wait": b.Wait(ctx), "Remove": b.Remove(ctx), "Enter": d.Enter(ctx),
	} {
		if !errors.Is(err, recipes.ErrClosed) {
			t.Errorf("%s on a closed session: %v", name, err)
		}
	}
}

// TestRequestAtLimit: a barrier whose create is exactly at the server's
// limit is set and removed; one byte longer is refused before sending.
// The barrier is not made directly under "/": the root is world-open, and
// in the secured pass an authenticated Session refuses to create under it
// (recipes.ErrOpenParent).
func TestRequestAtLimit(t *testing.T) {
	e := ensemble(t)
	ctx := ctxT(t, time.Minute)
	s, counter := testutil.CountedSession(t, e.Addrs())
	over, err := recipes.RequestSize(&zk.CreateRequest{Path: "/", Acl: s.ACL()})
	if err != nil {
		t.Fatal(err)
	}
	// Outside the tree TestBadInput checks.
	parent := ownPath(t)
	at := parent + "/" + strings.Repeat("z", s.MaxData()-over-len(parent)) // a create of exactly MaxData bytes
	b := newBarrier(t, s, at)
	if err := b.Set(ctx); err != nil {
		t.Fatalf("Set at the limit: %.200v", err)
	}
	if err := b.Remove(ctx); err != nil {
		t.Fatalf("Remove at the limit: %.200v", err)
	}
	before := counter.Snapshot()
	if _, err := barrier.New(s, at+"z"); !errors.Is(err, recipes.ErrDataTooLarge) {
		t.Errorf("New one byte over: %.200v", err)
	}
	if diff := counter.Snapshot().Sub(before); diff.Total() != 0 || diff.Connects != 0 {
		t.Errorf("one byte over: sent %v, %d reconnections", diff.Requests, diff.Connects)
	}
}

// ownPath is a path outside testPath's tree, which TestBadInput checks is
// left empty.
func ownPath(t *testing.T) string {
	return "/zkrecipes-test/barrier-badinput/" + t.Name()
}
