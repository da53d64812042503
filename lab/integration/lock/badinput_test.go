package lock_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/zkrecipes/lab/internal/zkcount"
	"github.com/zkrecipes/zkrecipes/lock"
	"github.com/zkrecipes/zkrecipes/recipes"
	sharedrecipe "github.com/zkrecipes/zkrecipes/shared"
)

// noPanic runs f and turns a panic into an error.
func noPanic(f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	return f()
}

// TestFencedMultiTypedNilOp: Mutex.FencedMulti and Lease.FencedMulti
// refuse a typed nil op ((*zk.SetDataRequest)(nil), ...) with
// recipes.ErrBadArgument and send nothing. They panicked before (nil
// pointer dereference).
func TestFencedMultiTypedNilOp(t *testing.T) {
	e := ensemble(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, counter := countedSession(t, e.Addrs())
	path := testPath(t)
	m := newMutex(t, s, path+"/mutex")
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = m.Unlock(context.Background()) }()
	l, err := newSemaphore(t, s, path+"/sem", 1).Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Release(context.Background()) }()
	before := counter.Snapshot()
	for _, op := range []any{
		(*zk.CreateRequest)(nil), (*zk.SetDataRequest)(nil), (*zk.DeleteRequest)(nil), (*zk.CheckVersionRequest)(nil),
	} {
		for name, call := range map[string]func() error{
			"Mutex.FencedMulti": func() error { _, err := m.FencedMulti(ctx, op); return err },
			"Lease.FencedMulti": func() error { _, err := l.FencedMulti(ctx, op); return err },
		} {
			if err := noPanic(call); !errors.Is(err, recipes.ErrBadArgument) {
				t.Errorf("%s(%T(nil)) = %v, want ErrBadArgument", name, op, err)
			}
		}
	}
	if d := counter.Snapshot().Sub(before); d.Total() != 0 {
		t.Errorf("refused calls sent %v", d.Requests)
	}
}

// TestSemaphoreQtyNeverGranted: an AcquireN or TryAcquireN that cannot be
// granted fails at once with ErrPermits (and recipes.ErrBadArgument) and
// writes nothing. A qty above math.MaxInt32 (and, fixed n, above n) sends
// nothing at all: count-based it panicked before ("makeslice: cap out of
// range"). Count-based, a qty above the count costs the one getData of the
// count: before, AcquireN(100000) with a count of 2 created leases until
// its ctx ended, holding the mutex. A count lowered below qty while
// AcquireN waits fails it the same way, its nodes deleted.
func TestSemaphoreQtyNeverGranted(t *testing.T) {
	e := ensemble(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	admin := connect(t, e.Addrs())
	path := testPath(t)
	s, counter := countedSession(t, e.Addrs())
	setter, err := sharedrecipe.NewCount(admin, path+"-max", 2)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := setter.Set(ctx, 2); err != nil { // creates the node
		t.Fatal(err)
	}
	count, err := sharedrecipe.NewCount(s, path+"-max", 2)
	if err != nil {
		t.Fatal(err)
	}
	csem, err := lock.NewSemaphoreCount(s, path, count)
	if err != nil {
		t.Fatal(err)
	}
	fixed := newSemaphore(t, s, path+"-fixed", 2)
	refused := func(what string, call func() (lock.Permits, error), want map[zkcount.Op]int64) {
		t.Helper()
		before := counter.Snapshot()
		var ls lock.Permits
		err := noPanic(func() (err error) { ls, err = call(); return err })
		if !errors.Is(err, lock.ErrPermits) || !errors.Is(err, recipes.ErrBadArgument) || ls != nil {
			t.Errorf("%s = %v, %v; want ErrPermits", what, ls, err)
		}
		total := int64(0)
		for _, n := range want {
			total += n
		}
		if d := counter.Snapshot().Sub(before); d.Total() != total || func() bool {
			for op, n := range want {
				if d.Req(op) != n {
					return true
				}
			}
			return false
		}() {
			t.Errorf("%s sent %v, want %v", what, d.Requests, want)
		}
	}
	for _, qty := range []int{math.MaxInt32 + 1, math.MaxInt} {
		refused(fmt.Sprintf("count-based AcquireN(%d)", qty), func() (lock.Permits, error) { return csem.AcquireN(ctx, qty) }, nil)
		refused(fmt.Sprintf("count-based TryAcquireN(%d)", qty), func() (lock.Permits, error) { return csem.TryAcquireN(ctx, qty) }, nil)
		refused(fmt.Sprintf("fixed AcquireN(%d)", qty), func() (lock.Permits, error) { return fixed.AcquireN(ctx, qty) }, nil)
	}
	getData := map[zkcount.Op]int64{zkcount.OpGetData: 1}
	for _, qty := range []int{3, 100000} {
		refused(fmt.Sprintf("AcquireN(%d) with a count of 2", qty), func() (lock.Permits, error) { return csem.AcquireN(ctx, qty) }, getData)
	}
	refused("TryAcquireN(3) with a count of 2", func() (lock.Permits, error) { return csem.TryAcquireN(ctx, 3) },
		map[zkcount.Op]int64{zkcount.OpGetChildren2: 1, zkcount.OpGetData: 1})
	if n := len(rawChildren(t, admin, path+"/leases")) + len(rawChildren(t, admin, path+"/locks")); n != 0 {
		t.Fatalf("refused acquisitions left %d nodes", n)
	}

	// Lowered below qty while AcquireN waits: it fails, leaving no node.
	held, err := csem.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	done := acquired(func() (lock.Permits, error) { return csem.AcquireN(ctx, 2) })
	waitFor(t, 10*time.Second, "AcquireN(2) waiting", func() bool { return len(leaseNodes(t, admin, path)) == 3 })
	pending(t, "AcquireN(2) with 1 of 2 held", done)
	if _, err := setter.Set(ctx, 1); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-done:
		if !errors.Is(r.err, lock.ErrPermits) || r.v != nil {
			t.Fatalf("AcquireN(2) after the count went to 1 = %v, %v; want ErrPermits", r.v, r.err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("AcquireN(2) still waiting 30 s after the count went to 1")
	}
	waitFor(t, 10*time.Second, "the refused AcquireN's nodes deleted", func() bool {
		return len(leaseNodes(t, admin, path)) == 1 && len(rawChildren(t, admin, path+"/locks")) == 0
	})
	if err := held.Context().Err(); err != nil {
		t.Fatalf("the holder lost its lease: %v", context.Cause(held.Context()))
	}
	if err := held.Release(ctx); err != nil {
		t.Fatal(err)
	}
}
