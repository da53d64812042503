package rwlock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/recipes"
	"github.com/zkrecipes/zkrecipes/rwlock"
)

// locker is what a caller written for a lock.Mutex uses.
type locker interface {
	Lock(ctx context.Context) error
	TryLock(ctx context.Context) error
	Unlock(ctx context.Context) error
	Context() context.Context
	Fence() recipes.Fence
	Node() string
	FencedMulti(ctx context.Context, ops ...any) ([]zk.MultiResponse, error)
}

// TestViews: the read and write sides of RWMutexes, used through a
// Mutex-shaped interface, share and exclude as RLock and Lock do: two
// readers hold together, a writer's TryLock is refused while they hold
// and its Lock waits until both release; a reader's fenced write is
// rejected once it released; a downgrade through the views keeps the
// read holding after the write side's Unlock.
func TestViews(t *testing.T) {
	e := ensemble(t)
	path := testPath(t)
	ctx := testCtx(t, time.Minute)
	r1 := newRW(t, connect(t, e.Addrs()), path)
	r2 := newRW(t, connect(t, e.Addrs()), path)
	w := newRW(t, connect(t, e.Addrs()), path)
	var readers []locker = []locker{r1.Reader(), r2.Reader()}
	var writer locker = w.Writer()
	for i, r := range readers {
		if err := r.Lock(ctx); err != nil {
			t.Fatalf("reader %d: %v", i, err)
		}
		if r.Context().Err() != nil || !r.Fence().Valid() || r.Node() == "" {
			t.Fatalf("reader %d holds nothing", i)
		}
	}
	if r1.Context().Err() == nil {
		t.Error("a reader's write side holds")
	}
	if err := writer.TryLock(ctx); !errors.Is(err, rwlock.ErrLocked) {
		t.Fatalf("writer's TryLock with readers = %v, want ErrLocked", err)
	}
	locked := async(func() error { return writer.Lock(ctx) })
	if err := readers[0].Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := readers[0].FencedMulti(ctx, &zk.CheckVersionRequest{Path: path, Version: -1}); !errors.Is(err, rwlock.ErrNotHeld) {
		t.Errorf("FencedMulti after Unlock = %v, want ErrNotHeld", err)
	}
	if !pending(locked) {
		t.Fatalf("the writer holds with a reader left: %v", <-locked)
	}
	if err := readers[1].Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := recv(t, locked, waitLong, "the writer's Lock"); err != nil {
		t.Fatal(err)
	}
	if writer.Node() != w.Node() || writer.Fence() != w.Fence() {
		t.Error("Writer() is not the RWMutex's own write side")
	}
	// Downgrade through the views.
	if err := w.Reader().Lock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := writer.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := w.Reader().Context().Err(); err != nil {
		t.Fatalf("downgraded read holding ended: %v", context.Cause(w.Reader().Context()))
	}
	if err := w.Reader().Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}
