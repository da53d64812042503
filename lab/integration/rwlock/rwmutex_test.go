package rwlock_test

import (
	"context"
	"errors"
	"fmt"
	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/lock"
	"github.com/zkrecipes/zkrecipes/recipes"
	"github.com/zkrecipes/zkrecipes/rwlock"
)

const waitLong = 20 * time.Second

// waitChildren waits until path has n children.
func waitChildren(t *testing.T, s *recipes.Session, path string, n int) {
	t.Helper()
	waitFor(t, waitLong, fmt.Sprintf("%d children under %s", n, path), func() bool {
		return len(rawChildren(t, s, path)) == n
	})
}

// TestReadersCoexist: three readers hold at once; a writer cannot TryLock
// (and writes nothing), then waits for all three.
func TestReadersCoexist(t *testing.T) {
	e := ensemble(t)
	path := testPath(t)
	ctx := testCtx(t, time.Minute)
	admin := connect(t, e.Addrs())
	var rs []*rwlock.RWMutex
	for range 3 {
		m := newRW(t, connect(t, e.Addrs()), path)
		if err := m.Reader().Lock(ctx); err != nil {
			t.Fatal(err)
		}
		rs = append(rs, m)
	}
	for i, m := range rs {
		if err := m.Reader().Context().Err(); err != nil {
			t.Fatalf("reader %d: RContext done: %v", i, context.Cause(m.Reader().Context()))
		}
		if m.Context().Err() == nil || m.Fence().Valid() || !m.Reader().Fence().Valid() {
			t.Errorf("reader %d reports a write holding", i)
		}
	}
	w := newRW(t, connect(t, e.Addrs()), path)
	if err := w.TryLock(ctx); !errors.Is(err, rwlock.ErrLocked) || !errors.Is(err, lock.ErrLocked) {
		t.Fatalf("TryLock with readers = %v, want ErrLocked", err)
	}
	waitChildren(t, admin, path, 3)
	// Another reader still gets in at once.
	r4 := newRW(t, connect(t, e.Addrs()), path)
	if err := r4.Reader().TryLock(ctx); err != nil {
		t.Fatalf("TryRLock with readers = %v", err)
	}
	rs = append(rs, r4)
	done := async(func() error { return w.Lock(ctx) })
	waitChildren(t, admin, path, 5)
	for i, m := range rs {
		if !pending(done) {
			t.Fatalf("writer got the lock with %d readers left", len(rs)-i)
		}
		if err := m.Reader().Unlock(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if err := recv(t, done, waitLong, "writer"); err != nil {
		t.Fatal(err)
	}
	if err := w.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	waitChildren(t, admin, path, 0)
}

type interval struct {
	owner    int // one operation: its read and write parts may overlap
	write    bool
	from, to time.Time
}

// TestNoOverlap: 6 sessions x 100 mixed operations (RLock, Lock, TryRLock,
// TryLock, downgrade). On one monotonic clock, a write interval (from the
// acquisition returning to the release being called) overlaps no interval of
// another operation. Writers increment a counter with fenced writes: it
// ends at exactly the number of write intervals.
func TestNoOverlap(t *testing.T) {
	e := ensemble(t)
	const sessions, rounds = 6, 100
	path := testPath(t)
	admin := connect(t, e.Addrs())
	counter := path + "-counter"
	ensurePath(t, admin, counter)
	if _, err := admin.Conn().Set(counter, []byte("0"), -1); err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t, 2*time.Minute)
	var (
		mu        sync.Mutex
		intervals []interval
		readPeak  int
		readers   int
		wg        sync.WaitGroup
		errs      = make(chan error, sessions)
	)
	record := func(iv interval) {
		mu.Lock()
		intervals = append(intervals, iv)
		mu.Unlock()
	}
	enterRead := func() {
		mu.Lock()
		readers++
		readPeak = max(readPeak, readers)
		mu.Unlock()
	}
	leaveRead := func() {
		mu.Lock()
		readers--
		mu.Unlock()
	}
	for i := range sessions {
		ss := connect(t, e.Addrs())
		m := newRW(t, ss, path)
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(i), 42))
			for round := range rounds {
				owner := i*rounds + round
				if err := operate(ctx, ss, m, counter, rng.IntN(10), owner, record, enterRead, leaveRead); err != nil {
					errs <- fmt.Errorf("session %d round %d: %w", i, round, err)
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
	slices.SortFunc(intervals, func(a, b interval) int { return a.from.Compare(b.from) })
	writes := 0
	for i, a := range intervals {
		if !a.write {
			continue
		}
		writes++
		for _, b := range intervals {
			if b.owner != a.owner && a.from.Before(b.to) && b.from.Before(a.to) {
				t.Fatalf("write interval %d (op %d, %v..%v) overlaps op %d (write %v, %v..%v)",
					i, a.owner, a.from, a.to, b.owner, b.write, b.from, b.to)
			}
		}
	}
	t.Logf("%d intervals, %d writes, up to %d readers at once", len(intervals), writes, readPeak)
	if writes == 0 || writes == len(intervals) {
		t.Errorf("the mix has %d writes of %d intervals", writes, len(intervals))
	}
	if b, _, err := admin.Conn().Get(counter); err != nil || string(b) != fmt.Sprint(writes) {
		t.Errorf("counter %q (%v), want %d: a fenced increment was lost", b, err, writes)
	}
	waitChildren(t, admin, path, 0)
}

// operate runs one random operation of TestNoOverlap.
func operate(ctx context.Context, s *recipes.Session, m *rwlock.RWMutex, counter string, kind, owner int, record func(interval), enterRead, leaveRead func()) error {
	// Holders work on a counter node: readers read it, writers increment
	// it with a fenced write (so the final value counts the writes).
	work := func(held context.Context, write bool) error {
		b, st, err := s.Conn().Get(counter)
		if err != nil {
			return err
		}
		if write {
			var n int
			fmt.Sscan(string(b), &n)
			if _, err := m.FencedMulti(ctx, &zk.SetDataRequest{Path: counter, Data: fmt.Append(nil, n+1), Version: st.Version}); err != nil {
				return err
			}
		}
		if err := held.Err(); err != nil {
			return fmt.Errorf("holding lost: %w", context.Cause(held))
		}
		return nil
	}
	switch kind {
	case 0, 1, 2, 3, 4: // read
		var err error
		if kind == 4 {
			err = m.Reader().TryLock(ctx)
			if errors.Is(err, rwlock.ErrLocked) {
				return nil
			}
		} else {
			err = m.Reader().Lock(ctx)
		}
		if err != nil {
			return err
		}
		from := time.Now()
		enterRead()
		err = work(m.Reader().Context(), false)
		leaveRead()
		record(interval{owner: owner, from: from, to: time.Now()})
		return errors.Join(err, m.Reader().Unlock(ctx))
	case 5, 6, 7: // write
		var err error
		if kind == 7 {
			err = m.TryLock(ctx)
			if errors.Is(err, rwlock.ErrLocked) {
				return nil
			}
		} else {
			err = m.Lock(ctx)
		}
		if err != nil {
			return err
		}
		from := time.Now()
		err = work(m.Context(), true)
		record(interval{owner: owner, write: true, from: from, to: time.Now()})
		return errors.Join(err, m.Unlock(ctx))
	default: // downgrade: write, read inside it, release write, release read
		if err := m.Lock(ctx); err != nil {
			return err
		}
		wFrom := time.Now()
		if err := m.Reader().Lock(ctx); err != nil {
			return err
		}
		rFrom := time.Now()
		err := work(m.Context(), true)
		record(interval{owner: owner, write: true, from: wFrom, to: time.Now()})
		if err := m.Unlock(ctx); err != nil {
			return err
		}
		enterRead()
		err = errors.Join(err, work(m.Reader().Context(), false))
		leaveRead()
		record(interval{owner: owner, from: rFrom, to: time.Now()})
		return errors.Join(err, m.Reader().Unlock(ctx))
	}
}

// TestFairness: with a reader holding and a writer queued, a later reader
// waits for the writer (TryRLock fails without writing); the writer gets
// the lock before it.
func TestFairness(t *testing.T) {
	e := ensemble(t)
	path := testPath(t)
	ctx := testCtx(t, time.Minute)
	admin := connect(t, e.Addrs())
	a := newRW(t, connect(t, e.Addrs()), path)
	b := newRW(t, connect(t, e.Addrs()), path)
	c := newRW(t, connect(t, e.Addrs()), path)
	d := newRW(t, connect(t, e.Addrs()), path)
	if err := a.Reader().Lock(ctx); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var order []string
	note := func(s string) { mu.Lock(); order = append(order, s); mu.Unlock() }
	bDone := async(func() error {
		err := b.Lock(ctx)
		note("b write")
		return err
	})
	waitChildren(t, admin, path, 2)
	if err := d.Reader().TryLock(ctx); !errors.Is(err, rwlock.ErrLocked) {
		t.Fatalf("TryRLock behind a queued writer = %v, want ErrLocked", err)
	}
	waitChildren(t, admin, path, 2) // TryRLock wrote nothing
	cDone := async(func() error {
		err := c.Reader().Lock(ctx)
		note("c read")
		return err
	})
	waitChildren(t, admin, path, 3)
	if !pending(bDone) || !pending(cDone) {
		t.Fatal("the writer or the later reader got in while the first reader holds")
	}
	if err := a.Reader().Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := recv(t, bDone, waitLong, "writer"); err != nil {
		t.Fatal(err)
	}
	if !pending(cDone) {
		t.Fatal("the later reader got in together with the writer")
	}
	note("b unlock")
	if err := b.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := recv(t, cDone, waitLong, "later reader"); err != nil {
		t.Fatal(err)
	}
	if err := c.Reader().Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(order, ", "); got != "b write, b unlock, c read" {
		t.Errorf("order: %s", got)
	}
}

// TestDowngrade: with only a reader queued behind us, RLock while writing
// succeeds at once and Unlock deletes the write node: the queued reader
// joins us while we still read; a writer then waits for both.
func TestDowngrade(t *testing.T) {
	e := ensemble(t)
	path := testPath(t)
	ctx := testCtx(t, time.Minute)
	admin := connect(t, e.Addrs())
	a := newRW(t, connect(t, e.Addrs()), path)
	c := newRW(t, connect(t, e.Addrs()), path)
	if err := a.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	writeHeld := a.Context()
	cDone := async(func() error { return c.Reader().Lock(ctx) })
	waitChildren(t, admin, path, 2)
	if err := a.Reader().Lock(ctx); err != nil {
		t.Fatalf("RLock while writing: %v", err)
	}
	if a.Context().Err() != nil || a.Reader().Context().Err() != nil {
		t.Fatal("downgrade: a holding ended")
	}
	if err := a.Reader().Lock(ctx); !errors.Is(err, rwlock.ErrAlreadyHeld) {
		t.Errorf("second RLock = %v, want ErrAlreadyHeld", err)
	}
	if err := a.Lock(ctx); !errors.Is(err, rwlock.ErrAlreadyHeld) {
		t.Errorf("Lock while holding both = %v, want ErrAlreadyHeld", err)
	}
	if !pending(cDone) {
		t.Fatal("reader got in while we write")
	}
	readHeld := a.Reader().Context()
	if err := a.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if !errors.Is(context.Cause(writeHeld), recipes.ErrReleased) {
		t.Errorf("write Context cause after Unlock: %v", context.Cause(writeHeld))
	}
	if err := recv(t, cDone, waitLong, "queued reader"); err != nil {
		t.Fatal(err)
	}
	if readHeld.Err() != nil {
		t.Fatalf("downgraded read holding ended: %v", context.Cause(readHeld))
	}
	waitChildren(t, admin, path, 2) // our read node and c's: the write node is gone
	b := newRW(t, connect(t, e.Addrs()), path)
	bDone := async(func() error { return b.Lock(ctx) })
	waitChildren(t, admin, path, 3)
	if err := a.Reader().Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if !errors.Is(context.Cause(readHeld), recipes.ErrReleased) {
		t.Errorf("read RContext cause after RUnlock: %v", context.Cause(readHeld))
	}
	if !pending(bDone) {
		t.Fatal("writer got in while c reads")
	}
	if err := c.Reader().Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := recv(t, bDone, waitLong, "writer"); err != nil {
		t.Fatal(err)
	}
	if err := b.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	waitChildren(t, admin, path, 0)
}

// TestDowngradeQueuedWriter: a writer queued behind our write node must not
// hold while our downgraded read holding lives (Curator lets it): Unlock
// keeps the write node until RUnlock.
func TestDowngradeQueuedWriter(t *testing.T) {
	e := ensemble(t)
	path := testPath(t)
	ctx := testCtx(t, time.Minute)
	admin := connect(t, e.Addrs())
	a := newRW(t, connect(t, e.Addrs()), path)
	b := newRW(t, connect(t, e.Addrs()), path)
	c := newRW(t, connect(t, e.Addrs()), path)
	if err := a.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	writeNode := a.Node()
	bDone := async(func() error { return b.Lock(ctx) })
	waitChildren(t, admin, path, 2)
	if err := a.Reader().TryLock(ctx); err != nil { // downgrade through TryRLock
		t.Fatal(err)
	}
	if err := a.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if a.Context().Err() == nil || a.Node() != "" {
		t.Error("write holding still reported after Unlock")
	}
	if err := a.Unlock(ctx); !errors.Is(err, rwlock.ErrNotHeld) {
		t.Errorf("second Unlock = %v, want ErrNotHeld", err)
	}
	if err := a.Lock(ctx); !errors.Is(err, rwlock.ErrUpgrade) {
		t.Errorf("Lock while reading = %v, want ErrUpgrade", err)
	}
	if ok, _, err := admin.Conn().Exists(writeNode); err != nil || !ok {
		t.Fatalf("write node kept as a barrier: exists=%v err=%v", ok, err)
	}
	cDone := async(func() error { return c.Reader().Lock(ctx) })
	waitChildren(t, admin, path, 4) // a's write and read nodes, b, c
	if !pending(bDone) || !pending(cDone) {
		t.Fatal("queued writer or later reader got in while the downgraded reader holds")
	}
	readHeld := a.Reader().Context()
	if readHeld.Err() != nil {
		t.Fatalf("downgraded read holding ended: %v", context.Cause(readHeld))
	}
	if err := a.Reader().Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := recv(t, bDone, waitLong, "queued writer"); err != nil {
		t.Fatal(err)
	}
	waitChildren(t, admin, path, 2) // both of a's nodes are gone
	if !pending(cDone) {
		t.Fatal("reader got in with the writer")
	}
	if err := b.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := recv(t, cDone, waitLong, "reader"); err != nil {
		t.Fatal(err)
	}
	if err := c.Reader().Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	waitChildren(t, admin, path, 0)
}

// TestUpgradeAndMisuse: Lock or TryLock while reading returns ErrUpgrade and
// writes nothing; releasing what is not held returns ErrNotHeld; RUnlock
// before Unlock after a downgrade keeps the write holding.
func TestUpgradeAndMisuse(t *testing.T) {
	e := ensemble(t)
	path := testPath(t)
	ctx := testCtx(t, time.Minute)
	admin := connect(t, e.Addrs())
	m := newRW(t, connect(t, e.Addrs()), path)
	if err := m.Unlock(ctx); !errors.Is(err, rwlock.ErrNotHeld) {
		t.Errorf("Unlock before anything = %v", err)
	}
	if err := m.Reader().Unlock(ctx); !errors.Is(err, rwlock.ErrNotHeld) {
		t.Errorf("RUnlock before anything = %v", err)
	}
	// One acquisition at a time per RWMutex.
	other := newRW(t, connect(t, e.Addrs()), path)
	if err := other.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	waiting := async(func() error { return m.Reader().Lock(ctx) })
	waitChildren(t, admin, path, 2)
	for name, f := range map[string]func(context.Context) error{"Lock": m.Lock, "TryLock": m.TryLock, "RLock": m.Reader().Lock, "TryRLock": m.Reader().TryLock} {
		if err := f(ctx); !errors.Is(err, rwlock.ErrAlreadyHeld) {
			t.Errorf("%s during RLock = %v, want ErrAlreadyHeld", name, err)
		}
	}
	if err := m.Reader().Unlock(ctx); !errors.Is(err, rwlock.ErrNotHeld) {
		t.Errorf("RUnlock during RLock = %v, want ErrNotHeld", err)
	}
	if err := other.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := recv(t, waiting, waitLong, "RLock"); err != nil {
		t.Fatal(err)
	}
	for name, f := range map[string]func(context.Context) error{"Lock": m.Lock, "TryLock": m.TryLock} {
		if err := f(ctx); !errors.Is(err, rwlock.ErrUpgrade) {
			t.Errorf("%s while reading = %v, want ErrUpgrade", name, err)
		}
	}
	if err := m.Reader().TryLock(ctx); !errors.Is(err, rwlock.ErrAlreadyHeld) {
		t.Errorf("TryRLock while reading = %v, want ErrAlreadyHeld", err)
	}
	if err := m.Unlock(ctx); !errors.Is(err, rwlock.ErrNotHeld) {
		t.Errorf("Unlock while reading = %v, want ErrNotHeld", err)
	}
	waitChildren(t, admin, path, 1)
	if err := m.Reader().Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := m.Reader().Unlock(ctx); !errors.Is(err, rwlock.ErrNotHeld) {
		t.Errorf("double RUnlock = %v, want ErrNotHeld", err)
	}
	// Downgrade, then release the read part first: the write holding stays.
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := m.TryLock(ctx); !errors.Is(err, rwlock.ErrAlreadyHeld) {
		t.Errorf("TryLock while writing = %v, want ErrAlreadyHeld", err)
	}
	if err := m.Reader().Lock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := m.Reader().Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := m.Context().Err(); err != nil {
		t.Fatalf("write holding ended by RUnlock: %v", context.Cause(m.Context()))
	}
	waitChildren(t, admin, path, 1)
	if err := m.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := m.Unlock(ctx); !errors.Is(err, rwlock.ErrNotHeld) {
		t.Errorf("double Unlock = %v, want ErrNotHeld", err)
	}
	waitChildren(t, admin, path, 0)
}

// TestBadInput: invalid paths, a nil or closed session, a cancelled ctx:
// sentinel errors, no panic, nothing written.
func TestBadInput(t *testing.T) {
	e := ensemble(t)
	ctx := testCtx(t, time.Minute)
	s := connect(t, e.Addrs())
	for _, p := range []string{"", "relative", "/trailing/", "/a//b", "/a/../b", "/a/./b", "/zookeeper/x", "/nul\x00"} {
		if m, err := rwlock.New(s, p); m != nil || !errors.Is(err, recipes.ErrInvalidPath) {
			t.Errorf("New(%q) = %v, %v; want ErrInvalidPath", p, m, err)
		}
	}
	if _, err := rwlock.New(nil, "/x"); !errors.Is(err, recipes.ErrNilSession) {
		t.Errorf("nil session: %v", err)
	}
	big := make([]byte, s.MaxData()+1)
	if _, err := rwlock.New(s, "/x", rwlock.WithData(big)); !errors.Is(err, recipes.ErrDataTooLarge) {
		t.Errorf("data too large: %v", err)
	}
	path := testPath(t)
	ensurePath(t, s, path)
	if z := newRW(t, s, path, rwlock.WithDialect(recipes.Dialect{})); z.Lock(ctx) != nil {
		t.Errorf("zero dialect (Curator) rejected")
	} else if err := newRW(t, s, path).Unlock(ctx); !errors.Is(err, rwlock.ErrNotHeld) {
		t.Errorf("Unlock on another RWMutex = %v", err)
	} else if err := z.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	done, cancel := context.WithCancelCause(context.Background())
	cause := errors.New("test: gave up")
	cancel(cause)
	m := newRW(t, s, path)
	for name, f := range map[string]func(context.Context) error{
		"Lock": m.Lock, "RLock": m.Reader().Lock, "TryLock": m.TryLock, "TryRLock": m.Reader().TryLock,
	} {
		if err := f(done); !errors.Is(err, cause) {
			t.Errorf("%s with cancelled ctx = %v, want its cause", name, err)
		}
	}
	if n := len(rawChildren(t, s, path)); n != 0 {
		t.Errorf("cancelled calls left %d nodes", n)
	}
	// A ctx cancelled while waiting deletes our node.
	w := newRW(t, connect(t, e.Addrs()), path)
	if err := w.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	waitCtx, stop := context.WithCancelCause(ctx)
	rDone := async(func() error { return m.Reader().Lock(waitCtx) })
	waitChildren(t, s, path, 2)
	stop(cause)
	if err := recv(t, rDone, waitLong, "cancelled RLock"); !errors.Is(err, cause) {
		t.Errorf("RLock cancelled while waiting = %v", err)
	}
	waitChildren(t, s, path, 1)
	if err := w.Unlock(ctx); err != nil {
		t.Fatal(err)
	}

	closed := connect(t, e.Addrs())
	if err := closed.Close(); err != nil {
		t.Fatal(err)
	}
	if err := newRW(t, closed, path).Reader().Lock(ctx); !errors.Is(err, recipes.ErrClosed) {
		t.Errorf("closed session: %v", err)
	}
	waitChildren(t, s, path, 0)
}

// TestSessionExpiry: when a holder's session expires, its holding's
// context is cancelled with a session-lost cause, its fenced writes are
// rejected, and the waiters behind it get the lock.
func TestSessionExpiry(t *testing.T) {
	e := ensemble(t)
	path := testPath(t)
	ctx := testCtx(t, 2*time.Minute)
	admin := connect(t, e.Addrs())
	ensurePath(t, admin, path)
	for _, write := range []bool{true, false} {
		t.Run(fmt.Sprintf("write=%v", write), func(t *testing.T) {
			link, err := e.NewLink(t.Name())
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = link.Close() })
			hs := connect(t, link.Addrs(), recipes.WithLossPolicy(recipes.StepDownOnLost))
			holder := newRW(t, hs, path)
			var held context.Context
			var fenced func() error
			if write {
				err = holder.Lock(ctx)
				held = holder.Context()
				fenced = func() error { _, err := holder.FencedMulti(ctx); return err }
			} else {
				err = holder.Reader().Lock(ctx)
				held = holder.Reader().Context()
				fenced = func() error { _, err := holder.Reader().FencedMulti(ctx); return err }
			}
			if err != nil {
				t.Fatal(err)
			}
			// Waiters: a writer (and, behind a writer, a reader).
			w := newRW(t, connect(t, e.Addrs()), path)
			r := newRW(t, connect(t, e.Addrs()), path)
			wDone := async(func() error { return w.Lock(ctx) })
			waitChildren(t, admin, path, 2)
			rDone := async(func() error { return r.Reader().Lock(ctx) })
			waitChildren(t, admin, path, 3)
			sid := hs.ID()
			if err := link.ExpireSession(ctx, sid); err != nil {
				t.Fatal(err)
			}
			waitFor(t, waitLong, "holding cancelled", func() bool { return held.Err() != nil })
			// Even under StepDownOnLost the holding ends at the session's
			// lease deadline, before the server expires the session.
			if cause := context.Cause(held); !errors.Is(cause, recipes.ErrLeaseExpired) {
				t.Errorf("cause %v, want ErrLeaseExpired", cause)
			}
			if write {
				// No downgrade from a lost write holding.
				if err := holder.Reader().Lock(ctx); !errors.Is(err, recipes.ErrLeaseExpired) {
					t.Errorf("RLock after the write holding was lost = %v, want ErrLeaseExpired", err)
				}
			}
			// Write once the client has learned of the expiry.
			waitFor(t, waitLong, "the expiry to be learned", func() bool { return hs.ID() != sid })
			if err := recv(t, wDone, waitLong, "waiting writer"); err != nil {
				t.Fatal(err)
			}
			if err := fenced(); !errors.Is(err, recipes.ErrFenced) {
				t.Errorf("fenced write of the expired holder = %v, want ErrFenced", err)
			}
			if err := w.Unlock(ctx); err != nil {
				t.Fatal(err)
			}
			if err := recv(t, rDone, waitLong, "waiting reader"); err != nil {
				t.Fatal(err)
			}
			if err := r.Reader().Unlock(ctx); err != nil {
				t.Fatal(err)
			}
			// The expired holder's release sends nothing and says that the
			// holding was lost before it.
			if write {
				err = holder.Unlock(ctx)
			} else {
				err = holder.Reader().Unlock(ctx)
			}
			if !errors.Is(err, recipes.ErrReleased) || !errors.Is(err, recipes.ErrLeaseExpired) {
				t.Errorf("release after expiry: %v, want recipes.ErrReleased and recipes.ErrLeaseExpired", err)
			}
			// Its session was replaced: it can take the lock again.
			if err := holder.Lock(ctx); err != nil {
				t.Fatal(err)
			}
			if holder.Fence().SessionID == sid {
				t.Error("new holding under the expired session")
			}
			if err := holder.Unlock(ctx); err != nil {
				t.Fatal(err)
			}
			waitChildren(t, admin, path, 0)
		})
	}
}

// TestRevocation: with WithRevocation, Revoke on a reader's node closes
// RRevoked and cancels RContext with ErrRevoked; the reader unlocks and the
// writer that asked gets the lock.
func TestRevocation(t *testing.T) {
	e := ensemble(t)
	path := testPath(t)
	ctx := testCtx(t, time.Minute)
	rs := connect(t, e.Addrs())
	r := newRW(t, rs, path, rwlock.WithRevocation(), rwlock.WithData([]byte("reader")))
	if err := r.Reader().Lock(ctx); err != nil {
		t.Fatal(err)
	}
	ws := connect(t, e.Addrs())
	w := newRW(t, ws, path, rwlock.WithRevocation())
	wDone := async(func() error { return w.Lock(ctx) })
	waitChildren(t, ws, path, 2)
	ps, err := w.Participants(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 2 || ps[0].Role != recipes.RoleRead || string(ps[0].Data) != "reader" || ps[0].SessionID != rs.ID() || ps[1].Role != recipes.RoleWrite {
		t.Fatalf("participants: %+v", ps)
	}
	go func() {
		<-r.Reader().Revoked()
		_ = r.Reader().Unlock(context.WithoutCancel(ctx))
	}()
	held := r.Reader().Context()
	if err := rwlock.Revoke(ctx, ws, ps[0].Node); err != nil {
		t.Fatal(err)
	}
	if err := recv(t, wDone, waitLong, "writer after revocation"); err != nil {
		t.Fatal(err)
	}
	if !errors.Is(context.Cause(held), recipes.ErrRevoked) {
		t.Errorf("RContext cause %v, want ErrRevoked", context.Cause(held))
	}
	select {
	case <-w.Revoked():
		t.Error("writer revoked")
	default:
	}
	if err := w.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	waitChildren(t, ws, path, 0)
}

// TestKazooDialect: names on the wire are kazoo's, and kazoo's Lock nodes
// (written here by hand) block readers.
func TestKazooDialect(t *testing.T) {
	e := ensemble(t)
	path := testPath(t)
	ctx := testCtx(t, time.Minute)
	s := connect(t, e.Addrs())
	ensurePath(t, s, path)
	r := newRW(t, s, path, rwlock.WithDialect(recipes.Kazoo))
	if err := r.Reader().Lock(ctx); err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`/[0-9a-f]{32}__rlock__\d{10}$`).MatchString(r.Reader().Node()) {
		t.Errorf("kazoo read node %q", r.Reader().Node())
	}
	if err := r.Reader().Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	// A kazoo Lock holder (as kazoo would write it) blocks our reader.
	kz, err := s.Conn().Create(path+"/0123456789abcdef0123456789abcdef__lock__", nil, zk.FlagEphemeralSequential, testutil.ACL())
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Reader().TryLock(ctx); !errors.Is(err, rwlock.ErrLocked) {
		t.Errorf("TryRLock behind kazoo Lock = %v", err)
	}
	rDone := async(func() error { return r.Reader().Lock(ctx) })
	waitChildren(t, s, path, 2)
	if err := s.Conn().Delete(kz, -1); err != nil {
		t.Fatal(err)
	}
	if err := recv(t, rDone, waitLong, "reader"); err != nil {
		t.Fatal(err)
	}
	if err := r.Reader().Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	w := newRW(t, s, path, rwlock.WithDialect(recipes.Kazoo))
	if err := w.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`/[0-9a-f]{32}__lock__\d{10}$`).MatchString(w.Node()) {
		t.Errorf("kazoo write node %q", w.Node())
	}
	if err := w.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestCuratorNames: the default names are Curator's.
func TestCuratorNames(t *testing.T) {
	e := ensemble(t)
	ctx := testCtx(t, time.Minute)
	m := newRW(t, connect(t, e.Addrs()), testPath(t))
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := m.Reader().Lock(ctx); err != nil {
		t.Fatal(err)
	}
	uuid := `[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`
	if !regexp.MustCompile(`/_c_` + uuid + `-__WRIT__\d{10}$`).MatchString(m.Node()) {
		t.Errorf("write node %q", m.Node())
	}
	if !regexp.MustCompile(`/_c_` + uuid + `-__READ__\d{10}$`).MatchString(m.Reader().Node()) {
		t.Errorf("read node %q", m.Reader().Node())
	}
	if err := errors.Join(m.Unlock(ctx), m.Reader().Unlock(ctx)); err != nil {
		t.Fatal(err)
	}
}

// TestDowngradeLosesWriteNode: while a kept write node guards a downgraded
// read holding, its deletion by someone else lets the queued writer in, so
// the read holding ends with a node-deleted cause.
func TestDowngradeLosesWriteNode(t *testing.T) {
	e := ensemble(t)
	path := testPath(t)
	ctx := testCtx(t, time.Minute)
	admin := connect(t, e.Addrs())
	a := newRW(t, connect(t, e.Addrs()), path)
	b := newRW(t, connect(t, e.Addrs()), path)
	if err := a.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	writeNode := a.Node()
	bDone := async(func() error { return b.Lock(ctx) })
	waitChildren(t, admin, path, 2)
	if err := errors.Join(a.Reader().Lock(ctx), a.Unlock(ctx)); err != nil {
		t.Fatal(err)
	}
	readHeld := a.Reader().Context()
	if err := admin.Conn().Delete(writeNode, -1); err != nil {
		t.Fatalf("delete kept write node: %v", err)
	}
	waitFor(t, waitLong, "read holding cancelled", func() bool { return readHeld.Err() != nil })
	if cause := context.Cause(readHeld); !errors.Is(cause, recipes.ErrNodeDeleted) {
		t.Errorf("cause %v, want ErrNodeDeleted", cause)
	}
	if err := recv(t, bDone, waitLong, "queued writer"); err != nil {
		t.Fatal(err)
	}
	// The read holding ended with the write node it relied on: RUnlock
	// says so, and still deletes the read node.
	if err := a.Reader().Unlock(ctx); !errors.Is(err, recipes.ErrReleased) || !errors.Is(err, recipes.ErrNodeDeleted) {
		t.Errorf("RUnlock after the write node was deleted = %v, want recipes.ErrReleased and recipes.ErrNodeDeleted", err)
	}
	if err := b.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	waitChildren(t, admin, path, 0)
}

// TestDowngradeUnlockUnlistedKeepsWriteNode guards RWMutex.Unlock's promise
// after a downgrade: "It first lists the path: if no writer is queued between
// our write node and our read node, the write node is deleted [...]
// Otherwise the write node is kept until RUnlock: deleting it would let the
// writer queued right behind it hold while we still read", and with it the
// invariant that no reader holds while a writer does. When Unlock cannot
// list (here its ctx is already done, as it is when the connection is down
// until ctx ends), it cannot know that no writer is queued between, so it
// must keep the write node. The check watches the write node for a while:
// an Unlock that gave it up deletes it in the background at once.
func TestDowngradeUnlockUnlistedKeepsWriteNode(t *testing.T) {
	e := ensemble(t)
	path := testPath(t)
	ctx := testCtx(t, time.Minute)
	admin := connect(t, e.Addrs())
	a := newRW(t, connect(t, e.Addrs()), path)
	b := newRW(t, connect(t, e.Addrs()), path)
	if err := a.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	writeNode := a.Node()
	bDone := async(func() error { return b.Lock(ctx) })
	waitChildren(t, admin, path, 2)
	if err := a.Reader().Lock(ctx); err != nil { // downgrade: our read node is queued behind b
		t.Fatal(err)
	}
	done, cancel := context.WithCancel(ctx)
	cancel()
	_ = a.Unlock(done) // cannot list: the outcome may be an error, the write node must stay
	ok, _, gone, err := admin.Conn().ExistsW(writeNode)
	if err != nil || !ok {
		t.Fatalf("write node given up by an Unlock that could not list: exists=%v err=%v", ok, err)
	}
	window := time.NewTimer(3 * time.Second) // an Unlock that gave the node up deletes it at once
	defer window.Stop()
	select {
	case ev := <-gone:
		t.Fatalf("write node %s: %v while the downgraded read holds and writer b is queued behind it", writeNode, ev.Type)
	case err := <-bDone:
		t.Fatalf("queued writer got the lock while the downgraded reader holds (Lock = %v)", err)
	case <-window.C:
	}
	if readHeld := a.Reader().Context(); readHeld.Err() != nil {
		t.Fatalf("downgraded read holding ended: %v", context.Cause(readHeld))
	}
	if err := a.Reader().Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := recv(t, bDone, waitLong, "queued writer"); err != nil {
		t.Fatal(err)
	}
	if err := b.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	waitChildren(t, admin, path, 0)
}
