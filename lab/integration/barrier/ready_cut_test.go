package barrier_test

import (
	"context"
	"errors"
	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"strconv"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/barrier"
	"github.com/zkrecipes/zkrecipes/internal/hooks"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// TestLeaveCutOffBeforeReadyDelete: a lone member's connection drops just
// before it deletes "ready", and its ctx ends while it is disconnected.
// Leave must not report success (the node's fate is unknown to it): it
// returns ctx's error. It had not read the node, so nothing goes on in the
// background, and the node stays until the barrier is used again.
func TestLeaveCutOffBeforeReadyDelete(t *testing.T) {
	testutil.RequireHooks(t)
	e := ensemble(t)
	ctx := ctxT(t, time.Minute)
	path := testPath(t) + "/" + strconv.FormatInt(time.Now().UnixNano(), 36)
	ready := path + "/" + barrier.ReadyNode
	obs := connect(t, e.Addrs())
	t.Cleanup(func() { _ = obs.Conn().Delete(ready, -1) })
	l, err := e.NewLink("cutoff")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	s := connect(t, l.Addrs())
	d := newDouble(t, s, path, 1)
	if err := d.Enter(ctx); err != nil {
		t.Fatalf("Enter: %v", err)
	}
	leaveCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	hookErr := make(chan error, 1)
	t.Cleanup(hooks.SetBeforeReadyDelete(func(p string) {
		if p != ready {
			return
		}
		defer cancel()
		hookErr <- func() error {
			if err := l.Cut(); err != nil {
				return err
			}
			return waitState(ctx, s, func(st recipes.State) bool { return st != recipes.StateConnected && st != recipes.StateReconnected })
		}()
	}))
	err = d.Leave(leaveCtx)
	if herr := <-hookErr; herr != nil {
		t.Fatalf("cutting the link: %v", herr)
	}
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Leave = %v, want ctx's error", err)
	}
	if err := l.Restore(); err != nil {
		t.Fatal(err)
	}
	if ok, _, err := obs.Conn().Exists(ready); err != nil || !ok {
		t.Fatalf("ready: exists %v, %v; want it left (nothing was sent)", ok, err)
	}
}

// TestLeaveHandsReadyDeleteOver: a lone member has read "ready" (its czxid)
// and its delete is lost with the connection; its ctx has ended. Leave
// returns ctx's error, and the delete goes on in the background once the
// session is usable again.
func TestLeaveHandsReadyDeleteOver(t *testing.T) {
	testutil.RequireHooks(t)
	e := ensemble(t)
	ctx := ctxT(t, time.Minute)
	path := testPath(t) + "/" + strconv.FormatInt(time.Now().UnixNano(), 36)
	ready := path + "/" + barrier.ReadyNode
	obs := connect(t, e.Addrs())
	t.Cleanup(func() { _ = obs.Conn().Delete(ready, -1) })
	l, err := e.NewLink("handover")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	s := connect(t, l.Addrs())
	d := newDouble(t, s, path, 1)
	if err := d.Enter(ctx); err != nil {
		t.Fatalf("Enter: %v", err)
	}
	leaveCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	hookErr := make(chan error, 1)
	t.Cleanup(hooks.SetBeforeReadyDelete(func(p string) {
		if p != ready {
			return
		}
		cancel()
		hookErr <- func() error {
			// A request just answered: no ping is due for a third of the
			// session timeout, so the next frame the server sends is the
			// reply to Leave's exists, and its delete is lost.
			if _, err := s.Conn().Sync(path); err != nil {
				return err
			}
			return l.CutAfterNextFrame()
		}()
	}))
	err = d.Leave(leaveCtx)
	if herr := <-hookErr; herr != nil {
		t.Fatalf("cutting the link: %v", herr)
	}
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Leave = %v, want ctx's error", err)
	}
	if err := l.Heal(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the background delete of ready", func() bool {
		ok, _, err := obs.Conn().Exists(ready)
		return err == nil && !ok
	})
}

// waitState waits until s's state satisfies cond, or ctx is done.
func waitState(ctx context.Context, s *recipes.Session, cond func(recipes.State) bool) error {
	for !cond(s.State()) {
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-time.After(10 * time.Millisecond):
		}
	}
	return nil
}
