package recipes_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/internal/zkpath"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// TestCallLoop: recipes.Do sends a call again after it failed with a
// connection error (the link is cut under the first attempt), once the
// session is usable again; and it stops, without sending anything more,
// when its ctx ends while it waits on a cut link, with an error matching
// context.Canceled that recipes.Stopped recognises.
func TestCallLoop(t *testing.T) {
	e := ensemble(t)
	link, err := e.NewLink("callloop")
	if err != nil {
		t.Fatal(err)
	}
	defer link.Close()
	s := connect(t, link.Addrs())
	p := testPath(t)
	parent, _ := zkpath.Split(p)
	if err := s.EnsureParents(parent); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Conn().Create(p, []byte("v1"), 0, s.ACL()); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Conn().Delete(p, -1) }()

	// Retry across a connection loss.
	var attempts atomic.Int32
	failed := make(chan error, 1)
	type result struct {
		data []byte
		err  error
	}
	done := make(chan result, 1)
	go func() {
		data, err := recipes.Do(context.Background(), s, func(conn *zk.Conn, _ int64) ([]byte, error) {
			n := attempts.Add(1)
			if n == 1 {
				if err := link.Cut(); err != nil {
					return nil, err
				}
			}
			data, _, err := conn.Get(p)
			if n == 1 {
				failed <- err
			}
			return data, err
		})
		done <- result{data, err}
	}()
	select {
	case err := <-failed:
		if !recipes.IsConnErr(err) {
			t.Fatalf("first attempt under a cut link: %v, want a connection error", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("first attempt did not fail within 30s")
	}
	if err := link.Restore(); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-done:
		if r.err != nil || string(r.data) != "v1" {
			t.Fatalf("Do after restore = %q, %v; want v1, nil", r.data, r.err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Do did not return within 30s of the restore")
	}
	if n := attempts.Load(); n < 2 {
		t.Fatalf("%d attempts, want at least 2 (the failed one and a retry)", n)
	}

	// ctx's end while the link is cut: Do stops, sends nothing more.
	sub := s.Subscribe()
	defer sub.Close()
	if err := link.Cut(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = link.Restore() }()
	wctx, wcancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer wcancel()
	for s.State() != recipes.StateSuspended {
		if _, err := sub.Next(wctx); err != nil {
			t.Fatalf("waiting for the session to be suspended: %v", err)
		}
	}
	attempts.Store(0)
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan error, 1)
	go func() {
		_, err := recipes.Do(ctx, s, func(conn *zk.Conn, _ int64) ([]byte, error) {
			attempts.Add(1)
			data, _, err := conn.Get(p)
			return data, err
		})
		stopped <- err
	}()
	cancel()
	select {
	case err := <-stopped:
		if !errors.Is(err, context.Canceled) || !recipes.Stopped(err) {
			t.Fatalf("Do after cancel = %v; want context.Canceled, Stopped", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Do did not stop within 10s of its ctx's end")
	}
	if n := attempts.Load(); n != 0 {
		t.Fatalf("%d calls sent on a suspended session, want 0", n)
	}

	// A done ctx sends nothing even on a connected session.
	if err := link.Restore(); err != nil {
		t.Fatal(err)
	}
	for s.State() == recipes.StateSuspended {
		if _, err := sub.Next(wctx); err != nil {
			t.Fatalf("waiting for the session to come back: %v", err)
		}
	}
	_, err = recipes.Do(ctx, s, func(conn *zk.Conn, _ int64) (struct{}, error) {
		attempts.Add(1)
		return struct{}{}, nil
	})
	if !errors.Is(err, context.Canceled) || attempts.Load() != 0 {
		t.Fatalf("Do with a done ctx = %v after %d calls; want context.Canceled, 0 calls", err, attempts.Load())
	}
}
