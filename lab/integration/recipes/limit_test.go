package recipes_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// TestRequestLimitOnServer: on a real server (default jute.maxbuffer), a
// write at the limit is sent and answered; one byte more is refused with
// ErrDataTooLarge before anything is sent, and the connection stays up
// (the server would have closed it). A 1 MB path is refused at once.
func TestRequestLimitOnServer(t *testing.T) {
	e := ensemble(t)
	s, counter := testutil.CountedSession(t, e.Addrs())
	ctx := testutil.Ctx(t, time.Minute)
	base := testPath(t)
	if err := s.EnsureParents(base); err != nil {
		t.Fatal(err)
	}
	conn := s.Conn()
	own, err := conn.Create(base+"/own", nil, zk.FlagEphemeral, s.ACL())
	if err != nil {
		t.Fatal(err)
	}
	target := base + "/target"
	if _, err := conn.Create(target, nil, 0, s.ACL()); err != nil {
		t.Fatal(err)
	}
	f := recipes.Fence{Path: own, SessionID: s.ID(), Version: 0}
	set := &zk.SetDataRequest{Path: target, Version: -1}
	empty, err := recipes.MultiSize(f.Check(), set)
	if err != nil {
		t.Fatal(err)
	}
	set.Data = make([]byte, s.MaxData()-empty) // the multi is exactly at the limit
	if _, err := recipes.FencedMulti(ctx, s, f, set); err != nil {
		t.Fatalf("fenced multi at the limit: %v", err)
	}

	refused := func(what string, want error, f func() error) {
		t.Helper()
		before := counter.Snapshot()
		start := time.Now()
		err := f()
		d := counter.Snapshot().Sub(before)
		if !errors.Is(err, want) || time.Since(start) > time.Second {
			t.Errorf("%s: %.300v after %v, want %v at once", what, err, time.Since(start), want)
		}
		if d.Total() != 0 || d.Connects != 0 {
			t.Errorf("%s: sent %v, %d reconnections", what, d.Requests, d.Connects)
		}
		if st := s.State(); st != recipes.StateConnected {
			t.Errorf("%s: session %v", what, st)
		}
	}
	refused("fenced multi one byte over", recipes.ErrDataTooLarge, func() error {
		set.Data = append(set.Data, 0)
		_, err := recipes.FencedMulti(ctx, s, f, set)
		return err
	})
	refused("EnsureParents of a 1 MB path", recipes.ErrDataTooLarge, func() error {
		return s.EnsureParents("/" + strings.Repeat("x", 1<<20))
	})
	refused("EnsureParents of a path too long to create", recipes.ErrDataTooLarge, func() error {
		return s.EnsureParents("/" + strings.Repeat("x", recipes.MaxPathLen-1))
	})
	refused("EnsureParents in /zookeeper", recipes.ErrInvalidPath, func() error {
		return s.EnsureParents("/zookeeper/x")
	})
	refused("EnsureParents of an invalid path", recipes.ErrInvalidPath, func() error {
		return s.EnsureParents(base + "/\U0001F600")
	})
	// A contender's create: its data fits the data limit, but with the
	// protected name, path and ACL the create request is one byte over.
	lockPath := base + "/lock"
	probe := &zk.CreateRequest{Path: lockPath + "/_c_" + strings.Repeat("0", 36) + "-lock-", Acl: s.ACL()}
	head, err := recipes.RequestSize(probe)
	if err != nil {
		t.Fatal(err)
	}
	atLimit := make([]byte, s.MaxData()-head)
	h, err := recipes.Acquire(ctx, s, recipes.Spec{Path: lockPath, Data: atLimit})
	if err != nil {
		t.Fatalf("Acquire with its create at the limit: %v", err)
	}
	if err := h.Release(ctx); err != nil {
		t.Fatal(err)
	}
	refused("Acquire with its create one byte over", recipes.ErrDataTooLarge, func() error {
		_, err := recipes.Acquire(ctx, s, recipes.Spec{Path: lockPath, Data: append(atLimit, 0)})
		return err
	})
	// Still usable: the answer to a read.
	if _, _, err := conn.Get(target); err != nil {
		t.Fatal(err)
	}
}
