package cache_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/cache"
	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// TestNoGoroutinePerNode backs the package doc's claim: a running cache
// has one goroutine of package cache, its stream's producer, and none per
// node. Each cache below, once initialized and idle, adds exactly one
// goroutine running package cache's code, whether it holds 1 node or 85,
// and Stop takes it away.
func TestNoGoroutinePerNode(t *testing.T) {
	e := ensemble(t)
	w := connect(t, e.Addrs())
	s := connect(t, e.Addrs())
	count := func() int {
		return len(testutil.Goroutines(func(stack string) bool { return strings.Contains(stack, "zkrecipes/cache.") }))
	}
	small, big := testPath(t), testPath(t)
	mkdirs(t, w, small)
	n := buildTree(t, w, big, 4, 3) // 85 nodes
	before := testutil.SteadyCount(count)
	for _, tc := range []struct {
		name  string
		start func() *recipes.Stream[cache.Event]
	}{
		{"a tree of 1 node", func() *recipes.Stream[cache.Event] { return newTree(t, s, small).Watch(ctxT(t, time.Minute)) }},
		{fmt.Sprintf("a tree of %d nodes", n), func() *recipes.Stream[cache.Event] { return newTree(t, s, big).Watch(ctxT(t, time.Minute)) }},
		{"the 4 children of the root", func() *recipes.Stream[cache.Event] { return newChildren(t, s, big).Watch(ctxT(t, time.Minute)) }},
		{"one node", func() *recipes.Stream[cache.Event] { return newNode(t, s, big).Watch(ctxT(t, time.Minute)) }},
	} {
		r := record(t, tc.start())
		r.waitCount(t, 10*time.Second, cache.EventInitialized, 1)
		if got := testutil.SteadyCount(count) - before; got != 1 {
			t.Errorf("%s: %d goroutines in package cache once initialized, want 1", tc.name, got)
		}
		r.stop()
		if left := testutil.SteadyCount(count); left != before {
			t.Errorf("%s: %d goroutines in package cache after Stop, want %d", tc.name, left, before)
		}
	}
}
