package recipes_test

import (
	"context"
	"errors"
	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/internal/hooks"
	"github.com/zkrecipes/zkrecipes/internal/zkpath"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// TestFindOwn covers the resolution of an ambiguous create: a node with our
// GUID owned by another (older) session is deleted and not adopted; our own
// is adopted; extra nodes with our GUID are deleted.
func TestFindOwn(t *testing.T) {
	testutil.RequireHooks(t)
	e := ensemble(t)
	ctx := context.Background()
	parent := testPath(t)
	old, cur := connect(t, e.Addrs()), connect(t, e.Addrs())
	if _, err := recipes.Acquire(ctx, cur, recipes.Spec{Path: parent}); err != nil { // creates the parents
		t.Fatal(err)
	}
	guid := recipes.Curator.NewGUID()
	prefix, _ := recipes.Curator.NodePrefix(guid, recipes.RoleLock)
	acl := testutil.ACL()
	if _, err := old.Conn().Create(zkpath.Join(parent, prefix), nil, zk.FlagEphemeralSequential, acl); err != nil {
		t.Fatal(err)
	}
	if _, found, err := hooks.FindOwn(ctx, cur, parent, guid); err != nil || found {
		t.Fatalf("FindOwn adopted another session's node: %v %v", found, err)
	}
	for _, c := range rawChildren(t, cur, parent) {
		if recipes.Curator.HasGUID(c, guid) {
			t.Fatalf("node of the other session not deleted: %s", c)
		}
	}
	var mine []string
	for range 2 {
		p, err := cur.Conn().Create(zkpath.Join(parent, prefix), nil, zk.FlagEphemeralSequential, acl)
		if err != nil {
			t.Fatal(err)
		}
		mine = append(mine, p)
	}
	p, found, err := hooks.FindOwn(ctx, cur, parent, guid)
	if err != nil || !found || p != mine[0] {
		t.Fatalf("FindOwn = %q %v %v, want %q", p, found, err, mine[0])
	}
	if ok, _, _ := cur.Conn().Exists(mine[1]); ok {
		t.Fatalf("duplicate %s not deleted", mine[1])
	}
}

// TestLazyParents: Acquire creates missing parents (as containers) and the
// contender node under them.
func TestLazyParents(t *testing.T) {
	e := ensemble(t)
	ctx := context.Background()
	s := connect(t, e.Addrs())
	parent := testPath(t) + "/a/b"
	h, err := recipes.Acquire(ctx, s, recipes.Spec{Path: parent})
	if err != nil {
		t.Fatal(err)
	}
	_, st, err := s.Conn().Get(parent)
	if err != nil || st.EphemeralOwner != 0 {
		t.Fatalf("parent: %+v %v", st, err)
	}
	if h.Fence().Token == 0 || h.Fence().SessionID != s.ID() || !h.Fence().Valid() {
		t.Fatalf("fence %+v", h.Fence())
	}
	if _, st, _ := s.Conn().Get(h.Path()); st.Czxid != h.Fence().Token || st.EphemeralOwner != s.ID() {
		t.Fatalf("fence token %d, node czxid %d owner 0x%x", h.Fence().Token, st.Czxid, st.EphemeralOwner)
	}
	if err := h.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := h.Release(ctx); !errors.Is(err, recipes.ErrReleased) {
		t.Fatalf("second Release = %v", err)
	}
}

// TestReadWritePredicates runs the core with the Read and Exclusive
// predicates on Curator's read/write names: readers share, a writer waits
// for the readers ahead, and a reader behind a writer waits for it.
func TestReadWritePredicates(t *testing.T) {
	e := ensemble(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	parent := testPath(t)
	s := connect(t, e.Addrs())
	read := recipes.Spec{Path: parent, Role: recipes.RoleRead, Predicate: recipes.Read()}
	write := recipes.Spec{Path: parent, Role: recipes.RoleWrite, Predicate: recipes.Exclusive()}
	r1, err := recipes.Acquire(ctx, s, read)
	if err != nil {
		t.Fatal(err)
	}
	r2, err := recipes.Acquire(ctx, s, read)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := recipes.TryAcquire(ctx, s, write); !errors.Is(err, recipes.ErrWouldBlock) {
		t.Fatalf("TryAcquire(write) with readers = %v", err)
	}
	var mu sync.Mutex
	var order []string
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		w, err := recipes.Acquire(ctx, s, write)
		if err != nil {
			t.Error(err)
			return
		}
		mu.Lock()
		order = append(order, "writer")
		mu.Unlock()
		_ = w.Release(ctx)
	}()
	waitFor(t, 10*time.Second, "writer queued", func() bool { return len(rawChildren(t, s, parent)) == 3 })
	wg.Add(1)
	go func() {
		defer wg.Done()
		r3, err := recipes.Acquire(ctx, s, read)
		if err != nil {
			t.Error(err)
			return
		}
		mu.Lock()
		order = append(order, "reader")
		mu.Unlock()
		_ = r3.Release(ctx)
	}()
	waitFor(t, 10*time.Second, "reader queued", func() bool { return len(rawChildren(t, s, parent)) == 4 })
	_ = r1.Release(ctx)
	_ = r2.Release(ctx)
	wg.Wait()
	if !slices.Equal(order, []string{"writer", "reader"}) {
		t.Fatalf("order = %v", order)
	}
	cs, err := recipes.Contenders(ctx, s, recipes.Curator, parent, recipes.RoleRead, recipes.RoleWrite)
	if err != nil || len(cs) != 0 {
		t.Fatalf("contenders left: %v %v", cs, err)
	}
}

// TestSemaphorePredicate: the core's semaphore(n) predicate holds n at once.
func TestSemaphorePredicate(t *testing.T) {
	e := ensemble(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s := connect(t, e.Addrs())
	spec := recipes.Spec{Path: testPath(t), Role: recipes.RoleLease, Predicate: recipes.FirstN(2)}
	var hs []*recipes.Holding
	for range 2 {
		h, err := recipes.TryAcquire(ctx, s, spec)
		if err != nil {
			t.Fatal(err)
		}
		hs = append(hs, h)
	}
	if _, err := recipes.TryAcquire(ctx, s, spec); !errors.Is(err, recipes.ErrWouldBlock) {
		t.Fatalf("third TryAcquire = %v", err)
	}
	done := make(chan *recipes.Holding, 1)
	go func() {
		h, err := recipes.Acquire(ctx, s, spec)
		if err != nil {
			t.Error(err)
		}
		done <- h
	}()
	waitFor(t, 10*time.Second, "third queued", func() bool { return len(rawChildren(t, s, spec.Path)) == 3 })
	_ = hs[0].Release(ctx)
	h := <-done
	if h == nil {
		t.FailNow()
	}
	for _, h := range append(hs[1:], h) {
		if err := h.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
}
