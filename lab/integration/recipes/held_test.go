package recipes_test

import (
	"context"
	"errors"
	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/zkrecipes/leader"
	"github.com/zkrecipes/zkrecipes/lock"
	"github.com/zkrecipes/zkrecipes/queue"
	"github.com/zkrecipes/zkrecipes/recipes"
	"github.com/zkrecipes/zkrecipes/rwlock"
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
		if _, err := admin.Conn().Create(p, nil, 0, testutil.ACL()); err != nil && !errors.Is(err, zk.ErrNodeExists) {
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
		{"lock.Permit", func(t *testing.T, s *recipes.Session) recipes.Held {
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

// releasable is one holding type under the Release rule of recipes.Held:
// acquire takes a new holding on s, whose node, Context and release (its
// Release, or the locker's Unlock / RUnlock) the test drives; sentinel is
// the package's own error for a second release, if any.
type releasable struct {
	name     string
	sentinel error
	revoke   bool // a write into the node ends the holding (ErrRevoked)
	acquire  func(t *testing.T, s *recipes.Session, path string) (node string, held func() context.Context, release func(context.Context) error)
}

// releasables are every holding type of the library.
func releasables(ctx context.Context) []releasable {
	held := func(h recipes.Held) (string, func() context.Context, func(context.Context) error) {
		return h.Fence().Path, h.Context, h.Release
	}
	return []releasable{
		{"recipes.Holding", nil, true, func(t *testing.T, s *recipes.Session, path string) (string, func() context.Context, func(context.Context) error) {
			h, err := recipes.Acquire(ctx, s, recipes.Spec{Path: path})
			if err != nil {
				t.Fatal(err)
			}
			return held(h)
		}},
		{"lock.Permit", lock.ErrNotHeld, true, func(t *testing.T, s *recipes.Session, path string) (string, func() context.Context, func(context.Context) error) {
			sem, err := lock.NewSemaphore(s, path, 1)
			if err != nil {
				t.Fatal(err)
			}
			l, err := sem.Acquire(ctx)
			if err != nil {
				t.Fatal(err)
			}
			return held(l)
		}},
		{"leader.Term", leader.ErrResigned, true, func(t *testing.T, s *recipes.Session, path string) (string, func() context.Context, func(context.Context) error) {
			el, err := leader.New(s, path)
			if err != nil {
				t.Fatal(err)
			}
			term, err := el.Campaign(ctx)
			if err != nil {
				t.Fatal(err)
			}
			return held(term)
		}},
		{"queue.Claim", queue.ErrClaimLost, false, func(t *testing.T, s *recipes.Session, path string) (string, func() context.Context, func(context.Context) error) {
			q, err := queue.New(s, path)
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
			return held(c)
		}},
		{"lock.Mutex.Unlock", lock.ErrNotHeld, true, func(t *testing.T, s *recipes.Session, path string) (string, func() context.Context, func(context.Context) error) {
			m, err := lock.New(s, path)
			if err != nil {
				t.Fatal(err)
			}
			if err := m.Lock(ctx); err != nil {
				t.Fatal(err)
			}
			return m.Node(), m.Context, m.Unlock
		}},
		{"rwlock.RWMutex.Unlock", rwlock.ErrNotHeld, true, func(t *testing.T, s *recipes.Session, path string) (string, func() context.Context, func(context.Context) error) {
			m, err := rwlock.New(s, path)
			if err != nil {
				t.Fatal(err)
			}
			if err := m.Lock(ctx); err != nil {
				t.Fatal(err)
			}
			return m.Node(), m.Context, m.Unlock
		}},
		{"rwlock.Reader.Unlock", rwlock.ErrNotHeld, true, func(t *testing.T, s *recipes.Session, path string) (string, func() context.Context, func(context.Context) error) {
			m, err := rwlock.New(s, path)
			if err != nil {
				t.Fatal(err)
			}
			if err := m.Reader().Lock(ctx); err != nil {
				t.Fatal(err)
			}
			return m.Reader().Node(), m.Reader().Context, m.Reader().Unlock
		}},
	}
}

// TestReleaseTwice holds the Release rule of recipes.Held for every
// holding type: Release returns nil only when it ends a live holding. A
// second Release sends nothing and returns an error that errors.Is
// recipes.ErrReleased (and the package's own sentinel, if it has one). A
// Release of a holding whose node someone else deleted sends nothing and
// returns an error that errors.Is recipes.ErrReleased and
// recipes.ErrNodeDeleted. A Release of a holding revoked by a write into
// its node (its node still there) returns an error that errors.Is
// recipes.ErrReleased and recipes.ErrRevoked, and the node goes.
func TestReleaseTwice(t *testing.T) {
	e := ensemble(t)
	admin := connect(t, e.Addrs())
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	base := testPath(t)
	for _, k := range releasables(ctx) {
		t.Run(k.name, func(t *testing.T) {
			s, counter := countedSession(t, e.Addrs())
			path := base + "/" + strings.ReplaceAll(k.name, ".", "_")
			second := func(what string, release func(context.Context) error) {
				t.Helper()
				before := counter.Snapshot()
				err := release(ctx)
				if !errors.Is(err, recipes.ErrReleased) || (k.sentinel != nil && !errors.Is(err, k.sentinel)) {
					t.Errorf("%s: second release = %v, want recipes.ErrReleased and %v", what, err, k.sentinel)
				}
				if d := counter.Snapshot().Sub(before); d.Total() != 0 {
					t.Errorf("%s: second release sent %v", what, d.Requests)
				}
			}

			// Live: nil, then ErrReleased.
			node, held, release := k.acquire(t, s, path)
			if err := release(ctx); err != nil {
				t.Fatalf("release of a live holding = %v, want nil", err)
			}
			if cause := context.Cause(held()); !errors.Is(cause, recipes.ErrReleased) {
				t.Errorf("cause after release = %v, want recipes.ErrReleased", cause)
			}
			if ok, _, err := admin.Conn().Exists(node); err != nil || ok {
				t.Errorf("node %s after release: exists %v, err %v", node, ok, err)
			}
			second("live", release)

			// Lost, its node deleted by someone else: nothing to send.
			node, held, release = k.acquire(t, s, path)
			hctx := held() // arms the node watch
			if err := admin.Conn().Delete(node, -1); err != nil {
				t.Fatal(err)
			}
			waitFor(t, 30*time.Second, "the holding ends with its node", func() bool { return hctx.Err() != nil })
			before := counter.Snapshot()
			err := release(ctx)
			if !errors.Is(err, recipes.ErrReleased) || !errors.Is(err, recipes.ErrNodeDeleted) {
				t.Errorf("release after the node was deleted = %v, want recipes.ErrReleased and recipes.ErrNodeDeleted", err)
			}
			if d := counter.Snapshot().Sub(before); d.Total() != 0 {
				t.Errorf("release after the node was deleted sent %v", d.Requests)
			}
			second("deleted", release)

			if !k.revoke {
				return
			}
			// Revoked, its node still there: the release still deletes it.
			node, held, release = k.acquire(t, s, path)
			hctx = held()
			if _, err := admin.Conn().Set(node, recipes.RevokeMessage, -1); err != nil {
				t.Fatal(err)
			}
			waitFor(t, 30*time.Second, "the holding ends when revoked", func() bool { return hctx.Err() != nil })
			if err := release(ctx); !errors.Is(err, recipes.ErrReleased) || !errors.Is(err, recipes.ErrRevoked) {
				t.Errorf("release after a revocation = %v, want recipes.ErrReleased and recipes.ErrRevoked", err)
			}
			waitFor(t, 30*time.Second, "the revoked holding's node goes", func() bool {
				ok, _, err := admin.Conn().Exists(node)
				return err == nil && !ok
			})
			second("revoked", release)
		})
	}
}
