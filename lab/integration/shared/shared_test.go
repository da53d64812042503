package shared_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"github.com/zkrecipes/zkrecipes/lock"
	"github.com/zkrecipes/zkrecipes/recipes"
	"github.com/zkrecipes/zkrecipes/shared"
)

// TestCuratorLayout: the node is created with the seed on first use, a
// Count's data is Curator's 4 bytes big endian, a Value's data is its bytes.
func TestCuratorLayout(t *testing.T) {
	e := ensemble(t)
	ctx := ctxT(t, time.Minute)
	s := connect(t, e.Addrs())
	path := testPath(t)

	c := newCount(t, s, path+"/count", 258)
	got, err := c.Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got.Value != 258 || got.Version != 0 {
		t.Fatalf("Get = %+v, want 258 at version 0", got)
	}
	if data, _, err := s.Conn().Get(path + "/count"); err != nil || !bytes.Equal(data, []byte{0, 0, 1, 2}) {
		t.Fatalf("node data = %x, %v; want 00000102", data, err)
	}
	if _, err := c.Set(ctx, -2); err != nil {
		t.Fatal(err)
	}
	if data, _, _ := s.Conn().Get(path + "/count"); !bytes.Equal(data, []byte{0xff, 0xff, 0xff, 0xfe}) {
		t.Fatalf("node data after Set(-2) = %x", data)
	}

	v := newValue(t, s, path+"/value", []byte("seed"))
	if got, err := v.Get(ctx); err != nil || string(got.Value) != "seed" {
		t.Fatalf("Get = %q, %v", got.Value, err)
	}
	// A node written by someone else (Curator) is read as is.
	if _, err := s.Conn().Set(path+"/value", []byte("from java"), -1); err != nil {
		t.Fatal(err)
	}
	if got, err := v.Get(ctx); err != nil || string(got.Value) != "from java" || got.Version != 1 {
		t.Fatalf("Get = %q v%d, %v", got.Value, got.Version, err)
	}
}

// TestTrySetConflict: of two writers that read the same version, the
// second's TrySet fails and returns the first's value, and its retry on
// that value succeeds.
func TestTrySetConflict(t *testing.T) {
	e := ensemble(t)
	ctx := ctxT(t, time.Minute)
	path := testPath(t)
	a := newCount(t, connect(t, e.Addrs()), path, 0)
	b := newCount(t, connect(t, e.Addrs()), path, 0)
	ra, err := a.Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rb, err := b.Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wa, ok, err := a.TrySet(ctx, ra, 5)
	if err != nil || !ok || wa.Value != 5 || wa.Version != 1 {
		t.Fatalf("first TrySet = %+v, %v, %v", wa, ok, err)
	}
	cur, ok, err := b.TrySet(ctx, rb, 7)
	if err != nil || ok {
		t.Fatalf("stale TrySet = %+v, %v, %v; want false", cur, ok, err)
	}
	if cur.Value != 5 || cur.Version != 1 || cur.Zxid != wa.Zxid {
		t.Fatalf("stale TrySet returned %+v, want the first writer's %+v", cur, wa)
	}
	if wb, ok, err := b.TrySet(ctx, cur, cur.Value+2); err != nil || !ok || wb.Value != 7 {
		t.Fatalf("retry = %+v, %v, %v", wb, ok, err)
	}
}

// increment adds one to c with a compare-and-set loop.
func increment(ctx context.Context, c *shared.Count) error {
	cur, err := c.Get(ctx)
	for err == nil {
		var ok bool
		if cur, ok, err = c.TrySet(ctx, cur, cur.Value+1); ok {
			return nil
		}
	}
	return err
}

// TestIncrementsLoseNothing: concurrent compare-and-set increments from
// several sessions add up exactly.
func TestIncrementsLoseNothing(t *testing.T) {
	e := ensemble(t)
	ctx := ctxT(t, 2*time.Minute)
	path := testPath(t)
	const writers, each = 4, 25
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for range writers {
		c := newCount(t, connect(t, e.Addrs()), path, 0)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				if err := increment(ctx, c); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	got, err := newCount(t, connect(t, e.Addrs()), path, 0).Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got.Value != writers*each || got.Version != writers*each {
		t.Fatalf("count = %d at version %d, want %d", got.Value, got.Version, writers*each)
	}
}

// TestWatchNeverGoesBack: a watcher sees the current value first, then
// changes in zxid order, never an older one, and always the latest; a node
// deleted and created again (its version back at 0) does not make it go
// back either.
func TestWatchNeverGoesBack(t *testing.T) {
	e := ensemble(t)
	ctx := ctxT(t, time.Minute)
	path := testPath(t)
	s := connect(t, e.Addrs())
	c := newCount(t, s, path, 100)
	w := newCount(t, connect(t, e.Addrs()), path, 100).Watch(ctx)
	defer w.Stop()

	var seen []shared.Versioned[int32]
	next := func(what string, until func(shared.Versioned[int32]) bool) {
		t.Helper()
		deadline := time.After(20 * time.Second)
		for {
			select {
			case v, ok := <-w.C:
				if !ok {
					t.Fatalf("stream closed waiting for %s: %v", what, w.Err())
				}
				if n := len(seen); n > 0 && v.Zxid <= seen[n-1].Zxid {
					t.Fatalf("went back: %+v after %+v", v, seen[n-1])
				}
				seen = append(seen, v)
				if until(v) {
					return
				}
			case <-deadline:
				t.Fatalf("timed out waiting for %s; seen %+v", what, seen)
			}
		}
	}
	next("the seed", func(v shared.Versioned[int32]) bool { return true })
	if seen[0].Value != 100 {
		t.Fatalf("first value %+v, want the seed 100", seen[0])
	}
	for i := int32(1); i <= 30; i++ {
		if _, err := c.Set(ctx, 100+i); err != nil {
			t.Fatal(err)
		}
	}
	next("the last write", func(v shared.Versioned[int32]) bool { return v.Value == 130 })
	for i := 1; i < len(seen); i++ {
		if seen[i].Value <= seen[i-1].Value {
			t.Fatalf("values out of order: %+v", seen)
		}
	}
	// Delete and create again: the version starts over, the zxid does not.
	if err := s.Conn().Delete(path, -1); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Conn().Create(path, shared.EncodeCount(7), 0, testutil.ACL()); err != nil && !errors.Is(err, zk.ErrNodeExists) {
		t.Fatal(err)
	}
	if _, err := s.Conn().Set(path, shared.EncodeCount(8), -1); err != nil {
		t.Fatal(err)
	}
	next("the re-created node's value", func(v shared.Versioned[int32]) bool { return v.Value == 8 })
	if last := seen[len(seen)-1]; last.Version > 1 {
		t.Fatalf("version of the re-created node = %d", last.Version)
	}
	w.Stop()
	for range w.C {
	}
	if err := w.Err(); err != nil {
		t.Fatalf("Err after Stop = %v", err)
	}
	t.Logf("saw %d values for 33 writes", len(seen))
}

// TestFencedTrySet: a fenced write commits while the lock is held, and is
// rejected by ZooKeeper (recipes.ErrFenced) once the holder's node is gone,
// leaving the value unchanged.
func TestFencedTrySet(t *testing.T) {
	e := ensemble(t)
	ctx := ctxT(t, time.Minute)
	path := testPath(t)
	s := connect(t, e.Addrs())
	admin := connect(t, e.Addrs())
	m, err := lock.New(s, path+"/lock")
	if err != nil {
		t.Fatal(err)
	}
	v := newValue(t, s, path+"/value", []byte("a"))
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	cur, err := v.Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cur, ok, err := v.FencedTrySet(ctx, m, cur, []byte("b"))
	if err != nil || !ok || string(cur.Value) != "b" {
		t.Fatalf("fenced write while held = %q, %v, %v", cur.Value, ok, err)
	}
	// Someone deletes the holder's node (an operator, or the session's
	// expiry): the next fenced write must not commit.
	if err := admin.Conn().Delete(m.Node(), -1); err != nil {
		t.Fatal(err)
	}
	_, ok, err = v.FencedTrySet(ctx, m, cur, []byte("c"))
	if ok || !errors.Is(err, recipes.ErrFenced) {
		t.Fatalf("fenced write after loss = %v, %v; want recipes.ErrFenced", ok, err)
	}
	if got, err := v.Get(ctx); err != nil || string(got.Value) != "b" {
		t.Fatalf("value after rejected write = %q, %v", got.Value, err)
	}
	// A stale version under a live holding: false with the current value.
	m2, err := lock.New(admin, path+"/lock")
	if err != nil {
		t.Fatal(err)
	}
	if err := m2.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	defer m2.Unlock(ctx)
	stale := cur
	stale.Version--
	got, ok, err := newValue(t, admin, path+"/value", nil).FencedTrySet(ctx, m2, stale, []byte("d"))
	if err != nil || ok || string(got.Value) != "b" {
		t.Fatalf("stale fenced write = %q, %v, %v; want false and %q", got.Value, ok, err, "b")
	}
}

// TestUncertainWrite: the set reaches ZooKeeper but its answer is lost
// (half-open link). TrySet must not report false (the write was applied)
// nor true (it cannot know): it returns ErrUncertain, and a read after the
// link heals shows where things stand.
func TestUncertainWrite(t *testing.T) {
	e := ensemble(t)
	path := testPath(t)
	admin := connect(t, e.Addrs())
	link, err := e.NewLink("uncertain")
	if err != nil {
		t.Fatal(err)
	}
	defer link.Close()
	s := connect(t, link.Addrs())
	ctx := ctxT(t, time.Minute)
	c := newCount(t, s, path, 1)
	cur, err := c.Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := link.HalfOpen(); err != nil {
		t.Fatal(err)
	}
	_, ok, err := c.TrySet(ctx, cur, 2)
	if ok || !errors.Is(err, shared.ErrUncertain) {
		t.Fatalf("TrySet over a half-open link = %v, %v; want ErrUncertain", ok, err)
	}
	if data, _, err := admin.Conn().Get(path); err != nil || !bytes.Equal(data, shared.EncodeCount(2)) {
		t.Fatalf("node data = %x, %v; the write should have been applied", data, err)
	}
	if err := link.Heal(); err != nil {
		t.Fatal(err)
	}
	if got, err := c.Get(ctx); err != nil || got.Value != 2 {
		t.Fatalf("Get after heal = %+v, %v", got, err)
	}
}

// TestCorruptCount: a node holding anything but 4 bytes makes Get fail
// with ErrCorrupt and ends a Watch with it.
func TestCorruptCount(t *testing.T) {
	e := ensemble(t)
	ctx := ctxT(t, time.Minute)
	path := testPath(t)
	s := connect(t, e.Addrs())
	c := newCount(t, s, path, 1)
	w := c.Watch(ctx)
	defer w.Stop()
	select {
	case v := <-w.C:
		if v.Value != 1 {
			t.Fatalf("first value %+v", v)
		}
	case <-ctx.Done():
		t.Fatal("no first value")
	}
	if _, err := s.Conn().Set(path, []byte("abc"), -1); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Get(ctx); !errors.Is(err, shared.ErrCorrupt) {
		t.Fatalf("Get = %v, want ErrCorrupt", err)
	}
	for range w.C {
	}
	if !errors.Is(w.Err(), shared.ErrCorrupt) {
		t.Fatalf("watch ended with %v, want ErrCorrupt", w.Err())
	}
}

// TestDoneCtxSendsNothing: every call with a done ctx returns its cause and
// sends no request; a Watch started with one ends at once with ctx's error.
func TestDoneCtxSendsNothing(t *testing.T) {
	e := ensemble(t)
	s, counter := testutil.CountedSession(t, e.Addrs())
	path := testPath(t)
	done, cancel := context.WithCancel(context.Background())
	cancel()
	c := newCount(t, s, path+"/c", 0)
	v := newValue(t, s, path+"/v", nil)
	m, err := lock.New(s, path+"/lock")
	if err != nil {
		t.Fatal(err)
	}
	calls := []struct {
		name string
		f    func() error
	}{
		{"Count.Get", func() error { _, err := c.Get(done); return err }},
		{"Count.TrySet", func() error { _, _, err := c.TrySet(done, shared.Versioned[int32]{}, 1); return err }},
		{"Count.Set", func() error { _, err := c.Set(done, 1); return err }},
		{"Value.Get", func() error { _, err := v.Get(done); return err }},
		{"Value.TrySet", func() error { _, _, err := v.TrySet(done, shared.Versioned[[]byte]{}, nil); return err }},
		{"Value.FencedTrySet", func() error { _, _, err := v.FencedTrySet(done, m, shared.Versioned[[]byte]{}, nil); return err }},
	}
	for _, call := range calls {
		before := counter.Snapshot()
		err := call.f()
		if diff := counter.Snapshot().Sub(before); diff.Total() != 0 {
			t.Errorf("%s with a done ctx sent %v", call.name, diff.Requests)
		}
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a done ctx: %v", call.name, err)
		}
	}
	before := counter.Snapshot()
	w := c.Watch(done)
	for range w.C {
		t.Error("a Watch with a done ctx delivered a value")
	}
	if err := w.Err(); !errors.Is(err, context.Canceled) {
		t.Errorf("Watch with a done ctx: Err = %v, want context.Canceled", err)
	}
	if diff := counter.Snapshot().Sub(before); diff.Total() != 0 {
		t.Errorf("Watch with a done ctx sent %v", diff.Requests)
	}
}

// TestBadInput: the constructors validate and send nothing; a closed
// session fails every call with recipes.ErrClosed.
func TestBadInput(t *testing.T) {
	e := ensemble(t)
	ctx := ctxT(t, time.Minute)
	s, counter := testutil.CountedSession(t, e.Addrs())
	before := counter.Snapshot()
	for _, tc := range []struct {
		path string
		seed []byte
		want error
	}{
		{"", nil, recipes.ErrInvalidPath},
		{"/", nil, recipes.ErrInvalidPath},
		{"relative", nil, recipes.ErrInvalidPath},
		{"/a//b", nil, recipes.ErrInvalidPath},
		{"/zookeeper/x", nil, recipes.ErrInvalidPath},
		{"/ok", make([]byte, recipes.DefaultMaxData), recipes.ErrDataTooLarge},
	} {
		if _, err := shared.NewValue(s, tc.path, tc.seed); !errors.Is(err, tc.want) {
			t.Errorf("NewValue(%q, %d bytes) = %v, want %v", tc.path, len(tc.seed), err, tc.want)
		}
	}
	if _, err := shared.NewCount(nil, "/x", 0); !errors.Is(err, recipes.ErrNilSession) {
		t.Errorf("NewCount(nil) = %v", err)
	}
	if _, err := shared.NewCount(s, "/"+strings.Repeat("x", recipes.MaxPathLen), 0); !errors.Is(err, recipes.ErrInvalidPath) && !errors.Is(err, recipes.ErrDataTooLarge) {
		t.Errorf("NewCount(too long) = %v", err)
	}
	v := newValue(t, s, testPath(t), nil)
	if _, _, err := v.TrySet(ctx, shared.Versioned[[]byte]{}, make([]byte, recipes.DefaultMaxData)); !errors.Is(err, recipes.ErrDataTooLarge) {
		t.Errorf("TrySet(too large) = %v", err)
	}
	if _, _, err := v.FencedTrySet(ctx, nil, shared.Versioned[[]byte]{}, nil); !errors.Is(err, recipes.ErrBadArgument) {
		t.Errorf("FencedTrySet(nil holding) = %v", err)
	}
	var nilCount *shared.Count
	if _, err := nilCount.Get(ctx); !errors.Is(err, shared.ErrNilReceiver) {
		t.Errorf("nil Count Get = %v", err)
	}
	if diff := counter.Snapshot().Sub(before); diff.Total() != 0 {
		t.Errorf("bad input sent %v", diff.Requests)
	}
	closed := connect(t, e.Addrs())
	c := newCount(t, closed, testPath(t)+"/closed", 0)
	closed.Close()
	if _, err := c.Get(ctx); !errors.Is(err, recipes.ErrClosed) {
		t.Errorf("Get on a closed session = %v", err)
	}
	w := c.Watch(ctx)
	for range w.C {
	}
	if !errors.Is(w.Err(), recipes.ErrClosed) {
		t.Errorf("Watch on a closed session: Err = %v", w.Err())
	}
}

// TestTrySetRefusesAnyVersion: ZooKeeper reads version -1 as "any
// version", so a compare-and-set against it would be a blind set. Every
// compare-and-set of Value and Count, fenced or not, refuses it with
// recipes.ErrBadArgument and sends nothing; the node keeps its value. Other
// negative versions are compared as they are (a node's version goes
// negative after 2^31 writes), so a stale one fails as any stale version.
func TestTrySetRefusesAnyVersion(t *testing.T) {
	e := ensemble(t)
	ctx := ctxT(t, time.Minute)
	s, counter := testutil.CountedSession(t, e.Addrs())
	admin := connect(t, e.Addrs())
	path := testPath(t)
	v := newValue(t, s, path+"/value", []byte("a"))
	c := newCount(t, s, path+"/count", 1)
	if _, err := v.Get(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Get(ctx); err != nil {
		t.Fatal(err)
	}
	// Both nodes moved on from their seeds: version 1.
	if _, err := admin.Conn().Set(path+"/value", []byte("b"), -1); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Conn().Set(path+"/count", shared.EncodeCount(2), -1); err != nil {
		t.Fatal(err)
	}
	m, err := lock.New(s, path+"/lock")
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	defer m.Unlock(ctx)

	anyValue := shared.Versioned[[]byte]{Value: []byte("b"), Version: -1}
	anyCount := shared.Versioned[int32]{Value: 2, Version: -1}
	for _, call := range []struct {
		name string
		f    func() (bool, error)
	}{
		{"Value.TrySet", func() (bool, error) { _, ok, err := v.TrySet(ctx, anyValue, []byte("x")); return ok, err }},
		{"Value.FencedTrySet", func() (bool, error) { _, ok, err := v.FencedTrySet(ctx, m, anyValue, []byte("x")); return ok, err }},
		{"Count.TrySet", func() (bool, error) { _, ok, err := c.TrySet(ctx, anyCount, 9); return ok, err }},
		{"Count.FencedTrySet", func() (bool, error) { _, ok, err := c.FencedTrySet(ctx, m, anyCount, 9); return ok, err }},
	} {
		before := counter.Snapshot()
		ok, err := call.f()
		if ok || !errors.Is(err, recipes.ErrBadArgument) {
			t.Errorf("%s at version -1 = %v, %v; want recipes.ErrBadArgument", call.name, ok, err)
		}
		if diff := counter.Snapshot().Sub(before); diff.Total() != 0 {
			t.Errorf("%s at version -1 sent %v", call.name, diff.Requests)
		}
	}
	if data, st, err := admin.Conn().Get(path + "/value"); err != nil || string(data) != "b" || st.Version != 1 {
		t.Fatalf("value node = %q, %+v, %v; want %q at version 1", data, st, err, "b")
	}
	if data, st, err := admin.Conn().Get(path + "/count"); err != nil || !bytes.Equal(data, shared.EncodeCount(2)) || st.Version != 1 {
		t.Fatalf("count node = %x, %+v, %v; want 2 at version 1", data, st, err)
	}

	// -2 is a version like any other: stale here, so false and the value.
	if got, ok, err := v.TrySet(ctx, shared.Versioned[[]byte]{Version: -2}, []byte("x")); err != nil || ok || string(got.Value) != "b" {
		t.Errorf("Value.TrySet at version -2 = %q, %v, %v; want false and %q", got.Value, ok, err, "b")
	}
	if got, ok, err := v.FencedTrySet(ctx, m, shared.Versioned[[]byte]{Version: -2}, []byte("x")); err != nil || ok || string(got.Value) != "b" {
		t.Errorf("Value.FencedTrySet at version -2 = %q, %v, %v; want false and %q", got.Value, ok, err, "b")
	}
	if got, ok, err := c.TrySet(ctx, shared.Versioned[int32]{Version: -2}, 9); err != nil || ok || got.Value != 2 {
		t.Errorf("Count.TrySet at version -2 = %+v, %v, %v; want false and 2", got, ok, err)
	}
	if data, _, err := admin.Conn().Get(path + "/value"); err != nil || string(data) != "b" {
		t.Fatalf("value node = %q, %v; want %q", data, err, "b")
	}
}
