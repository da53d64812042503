package recipes_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/zkrecipes/leader"
	"github.com/zkrecipes/zkrecipes/lock"
	"github.com/zkrecipes/zkrecipes/queue"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// TestHeldShape holds the promises of recipes.Held for every holding type:
// the core's Holding, a semaphore lease, a leadership term and a queue
// claim. While held: Context is not done, Fence names a node that exists
// with the fence's czxid and session, and FencedMulti writes. Release
// cancels Context with ErrReleased before the node goes (whoever sees the
// deletion sees Context done), the node goes, and FencedMulti is then
// rejected with ErrFenced.
func TestHeldShape(t *testing.T) {
	e := ensemble(t)
	admin := connect(t, e.Addrs())
	ctx := context.Background()
	base := testPath(t)
	counter := base + "/counter"
	for _, p := range []string{"/zkrecipes-test", base, counter} {
		if _, err := admin.Conn().Create(p, nil, 0, zk.WorldACL(zk.PermAll)); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			t.Fatal(err)
		}
	}
	kinds := []struct {
		name    string
		acquire func(t *testing.T, s *recipes.Session) recipes.Held
	}{
		{"recipes.Holding", func(t *testing.T, s *recipes.Session) recipes.Held {
			h, err := recipes.Acquire(ctx, s, recipes.Spec{Path: base + "/holding"})
			if err != nil {
				t.Fatal(err)
			}
			return h
		}},
		{"lock.Lease", func(t *testing.T, s *recipes.Session) recipes.Held {
			sem, err := lock.NewSemaphore(s, base+"/semaphore", 1)
			if err != nil {
				t.Fatal(err)
			}
			l, err := sem.Acquire(ctx)
			if err != nil {
				t.Fatal(err)
			}
			return l
		}},
		{"leader.Term", func(t *testing.T, s *recipes.Session) recipes.Held {
			el, err := leader.New(s, base+"/election")
			if err != nil {
				t.Fatal(err)
			}
			term, err := el.Campaign(ctx)
			if err != nil {
				t.Fatal(err)
			}
			return term
		}},
		{"queue.Claim", func(t *testing.T, s *recipes.Session) recipes.Held {
			q, err := queue.New(s, base+"/queue")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := q.Put(ctx, []byte("item")); err != nil {
				t.Fatal(err)
			}
			c, err := q.Claim(ctx)
			if err != nil {
				t.Fatal(err)
			}
			return c
		}},
	}
	for i, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			s := connect(t, e.Addrs())
			h := k.acquire(t, s)
			if err := h.Context().Err(); err != nil {
				t.Fatalf("Context done right after acquiring: %v", context.Cause(h.Context()))
			}
			f := h.Fence()
			ok, st, err := admin.Conn().Exists(f.Path)
			if err != nil || !ok || st.Czxid != f.Token || st.EphemeralOwner != f.SessionID || f.SessionID != s.ID() {
				t.Fatalf("Fence %+v: node exists %v, stat %+v, err %v (session 0x%x)", f, ok, st, err, s.ID())
			}
			if _, err := h.FencedMulti(ctx, &zk.SetDataRequest{Path: counter, Data: []byte{byte(i)}, Version: -1}); err != nil {
				t.Fatalf("FencedMulti while held: %v", err)
			}
			_, _, deleted, err := admin.Conn().GetW(f.Path)
			if err != nil {
				t.Fatal(err)
			}
			released := make(chan error, 1)
			go func() { released <- h.Release(ctx) }()
			select {
			case ev := <-deleted:
				if ev.Type != zk.EventNodeDeleted {
					t.Fatalf("watch on the holding's node: %v", ev)
				}
				if h.Context().Err() == nil {
					t.Fatal("the node was deleted while Context was not done")
				}
			case <-time.After(30 * time.Second):
				t.Fatal("the node was not deleted after Release")
			}
			if err := <-released; err != nil {
				t.Fatalf("Release = %v", err)
			}
			if cause := context.Cause(h.Context()); !errors.Is(cause, recipes.ErrReleased) {
				t.Fatalf("cause after Release = %v, want ErrReleased", cause)
			}
			if _, err := h.FencedMulti(ctx, &zk.SetDataRequest{Path: counter, Data: []byte{byte(i)}, Version: -1}); !errors.Is(err, recipes.ErrFenced) {
				t.Fatalf("FencedMulti after Release = %v, want ErrFenced", err)
			}
		})
	}
}

// TestHoldingFencedMultiNil: a nil Holding's FencedMulti sends nothing.
func TestHoldingFencedMultiNil(t *testing.T) {
	var h *recipes.Holding
	if _, err := h.FencedMulti(context.Background()); !errors.Is(err, recipes.ErrFenced) {
		t.Fatalf("nil Holding FencedMulti = %v, want ErrFenced", err)
	}
}
