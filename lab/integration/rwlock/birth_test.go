package rwlock_test

import (
	"context"
	"errors"
	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/internal/hooks"
	"github.com/zkrecipes/zkrecipes/recipes"
	"github.com/zkrecipes/zkrecipes/testenv"
)

// cutAtBirth sets the core's before-hold hook so that, the first time a node
// under path is about to become a holding, the link is cut and the hook
// waits until s reports the suspension. The returned channel gets the
// hook's outcome. The hook is removed at the end of the test.
func cutAtBirth(t *testing.T, path string, link *testenv.Link, s *recipes.Session) <-chan error {
	testutil.RequireHooks(t)
	t.Helper()
	var once sync.Once
	fault := make(chan error, 1)
	t.Cleanup(hooks.SetBeforeHold(func(p string) {
		if !strings.HasPrefix(p, path+"/") {
			return
		}
		once.Do(func() {
			if err := link.Cut(); err != nil {
				fault <- err
				return
			}
			deadline := time.Now().Add(20 * time.Second)
			for s.State() != recipes.StateSuspended {
				if time.Now().After(deadline) {
					fault <- errors.New("no suspension")
					return
				}
				time.Sleep(10 * time.Millisecond)
			}
			fault <- nil
		})
	}))
	return fault
}

func waitFault(t *testing.T, fault <-chan error) {
	t.Helper()
	if err := recv(t, fault, time.Minute, "the hook's fault"); err != nil {
		t.Fatalf("fault: %v", err)
	}
}

// TestLockSuspendedAtBirth: the connection is suspended between the listing
// that shows the writer first and its holding. Lock must not return success
// with Context() already done; it waits for the connection, re-verifies the
// node and returns a live write holding.
func TestLockSuspendedAtBirth(t *testing.T) {
	e := ensemble(t)
	path := testPath(t)
	link, err := e.NewLink("write-suspended-at-birth")
	if err != nil {
		t.Fatal(err)
	}
	defer link.Close()
	s := connect(t, link.Addrs())
	m := newRW(t, s, path)
	ctx := testCtx(t, 2*time.Minute)
	fault := cutAtBirth(t, path, link, s)
	done := async(func() error { return m.Lock(ctx) })
	waitFault(t, fault)
	if err := link.Restore(); err != nil {
		t.Fatal(err)
	}
	if err := recv(t, done, waitLong, "Lock"); err != nil {
		t.Fatalf("Lock = %v", err)
	}
	if err := m.Context().Err(); err != nil {
		t.Fatalf("Lock returned success with Context() already done: %v", context.Cause(m.Context()))
	}
	if m.Fence().SessionID != s.ID() {
		t.Fatalf("write node of session 0x%x, session is 0x%x", m.Fence().SessionID, s.ID())
	}
	if err := m.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestDowngradeSuspendedAtBirth: the connection is suspended while a
// downgrade creates its read node; the write holding steps down with it.
// RLock must not return success with RContext() already done: the read node
// was never guarded by a live write holding, so RLock fails with the
// suspension and leaves no read node.
func TestDowngradeSuspendedAtBirth(t *testing.T) {
	e := ensemble(t)
	path := testPath(t)
	admin := connect(t, e.Addrs())
	link, err := e.NewLink("downgrade-suspended-at-birth")
	if err != nil {
		t.Fatal(err)
	}
	defer link.Close()
	s := connect(t, link.Addrs())
	m := newRW(t, s, path)
	ctx := testCtx(t, 2*time.Minute)
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	fault := cutAtBirth(t, path, link, s)
	done := async(func() error { return m.Reader().Lock(ctx) })
	waitFault(t, fault)
	if err := link.Restore(); err != nil {
		t.Fatal(err)
	}
	err = recv(t, done, waitLong, "RLock (downgrade)")
	if err == nil {
		t.Fatalf("RLock (downgrade) returned success; RContext: %v", context.Cause(m.Reader().Context()))
	}
	if !errors.Is(err, recipes.ErrSuspended) {
		t.Fatalf("RLock (downgrade) = %v, want ErrSuspended", err)
	}
	waitFor(t, waitLong, "no read node left", func() bool {
		for _, c := range rawChildren(t, admin, path) {
			if strings.Contains(c, "__READ__") {
				return false
			}
		}
		return true
	})
	if err := m.Unlock(ctx); !errors.Is(err, recipes.ErrReleased) || !errors.Is(err, recipes.ErrSuspended) {
		t.Fatalf("Unlock of the suspended write holding = %v, want recipes.ErrReleased and recipes.ErrSuspended", err)
	}
}
