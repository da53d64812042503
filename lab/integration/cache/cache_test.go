package cache_test

import (
	"errors"
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/cache"
	"github.com/zkrecipes/zkrecipes/internal/zkpath"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// TestNodeCache: the node's life (missing, created, set, deleted, created
// again) reaches the cache in order, and Current equals the node.
func TestNodeCache(t *testing.T) {
	e := ensemble(t)
	s, w := connect(t, e.Addrs()), connect(t, e.Addrs())
	root := testPath(t)
	mkdirs(t, w, root)
	p := root + "/n"
	c := newNode(t, s, p)
	r := record(t, c.Watch(ctxT(t, time.Minute)))
	r.waitCount(t, 10*time.Second, cache.EventInitialized, 1)
	if _, ok := c.Current(); ok {
		t.Fatal("a missing node is cached")
	}
	create(t, w, p, "a")
	converge(t, 10*time.Second, w, p, nodeShape, nodeList(c))
	set(t, w, p, "b")
	converge(t, 10*time.Second, w, p, nodeShape, nodeList(c))
	del(t, w, p)
	converge(t, 10*time.Second, w, p, nodeShape, nodeList(c))
	create(t, w, p, "c")
	converge(t, 10*time.Second, w, p, nodeShape, nodeList(c))
	got := r.history(t, p, 4)
	if want := "[added a updated b removed b added c]"; got != want {
		t.Fatalf("events %s, want %s", got, want)
	}
}

// TestChildrenCache: children created, set and deleted, and the parent
// deleted and created again, reach the cache; the parent is not cached.
func TestChildrenCache(t *testing.T) {
	e := ensemble(t)
	s, w := connect(t, e.Addrs()), connect(t, e.Addrs())
	root := testPath(t)
	mkdirs(t, w, root)
	p := root + "/parent"
	create(t, w, p, "parent data")
	create(t, w, p+"/a", "a1")
	c := newChildren(t, s, p)
	r := record(t, c.Watch(ctxT(t, time.Minute)))
	r.waitCount(t, 10*time.Second, cache.EventInitialized, 1)
	converge(t, 10*time.Second, w, p, childrenShape, c.Current)
	create(t, w, p+"/b", "b1")
	create(t, w, p+"/b/deep", "not cached")
	set(t, w, p+"/a", "a2")
	converge(t, 10*time.Second, w, p, childrenShape, c.Current)
	rmr(t, w, p)
	converge(t, 10*time.Second, w, p, childrenShape, c.Current)
	create(t, w, p, "")
	create(t, w, p+"/c", "c1")
	converge(t, 10*time.Second, w, p, childrenShape, c.Current)
	if _, ok := c.Get(p); ok {
		t.Fatal("the parent is cached")
	}
	if n, ok := c.Get(p + "/c"); !ok || string(n.Data) != "c1" {
		t.Fatalf("Get(c) = %v, %v", n, ok)
	}
}

// TestTreeCacheConverges: a writer changes a tree at random (creates,
// sets, deletes, at every depth) while a tree cache watches it; after
// each burst the cache equals ZooKeeper's state.
func TestTreeCacheConverges(t *testing.T) {
	e := ensemble(t)
	s, w := connect(t, e.Addrs()), connect(t, e.Addrs())
	root := testPath(t)
	mkdirs(t, w, root)
	c := newTree(t, s, root)
	r := record(t, c.Watch(ctxT(t, 2*time.Minute)))
	r.waitCount(t, 10*time.Second, cache.EventInitialized, 1)
	rng := rand.New(rand.NewSource(1))
	paths := []string{root}
	for burst := range 5 {
		for range 60 {
			randomOp(t, w, rng, &paths)
		}
		converge(t, 20*time.Second, w, root, treeShape, c.Nodes)
		t.Logf("burst %d: %d nodes, %d events", burst, len(paths), len(r.all()))
	}
}

// randomOp applies one random change under the nodes in *paths (which it
// keeps up to date; (*paths)[0] is the root, which stays): create a child
// (up to 5 levels below the root), set a node's data, or delete a subtree.
func randomOp(tb testing.TB, w *recipes.Session, rng *rand.Rand, paths *[]string) {
	tb.Helper()
	ps := *paths
	root := ps[0]
	switch x := rng.Intn(100); {
	case x < 45 || len(ps) < 3:
		parent := ps[rng.Intn(len(ps))]
		if strings.Count(parent[len(root):], "/") >= 5 {
			parent = root
		}
		p := zkpath.Join(parent, fmt.Sprintf("n%d", rng.Intn(1000)))
		if _, err := w.Conn().Create(p, []byte(fmt.Sprint(rng.Int63())), 0, acl); err == nil {
			*paths = append(ps, p)
		} else if !errors.Is(err, zk.ErrNodeExists) {
			tb.Fatalf("create %s: %v", p, err)
		}
	case x < 80:
		set(tb, w, ps[1+rng.Intn(len(ps)-1)], fmt.Sprint(rng.Int63()))
	default:
		p := ps[1+rng.Intn(len(ps)-1)]
		rmr(tb, w, p)
		kept := ps[:0]
		for _, q := range ps {
			if q != p && !strings.HasPrefix(q, p+"/") {
				kept = append(kept, q)
			}
		}
		*paths = kept
	}
}
