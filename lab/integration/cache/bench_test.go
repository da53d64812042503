package cache_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/cache"
	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"github.com/zkrecipes/zkrecipes/lab/internal/zkcount"
)

// BenchmarkTreeCacheLoad starts a tree cache on a tree of 1+10+100 nodes
// b.N times (one session; the watches stay set from the first run, so the
// later ones read without setting any) and reports nodes loaded per second
// and requests per node.
func BenchmarkTreeCacheLoad(b *testing.B) {
	e := ensemble(b)
	w := connect(b, e.Addrs())
	s, counter := testutil.CountedSession(b, e.Addrs())
	root := testPath(b)
	n := buildTree(b, w, root, 10, 2)
	before := counter.Snapshot()
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		c := newTree(b, s, root)
		st := c.Watch(ctxT(b, time.Minute))
		for ev := range st.C {
			if ev.Type == cache.EventInitialized {
				break
			}
		}
		st.Stop()
		for range st.C {
		}
	}
	elapsed := time.Since(start)
	b.StopTimer()
	d := counter.Snapshot().Sub(before)
	b.ReportMetric(float64(n*b.N)/elapsed.Seconds(), "nodes/s")
	b.ReportMetric(float64(d.Total())/float64(n*b.N), "requests/node")
}

// BenchmarkTreeCacheChanges: 4 writers set the data of the 100 leaves of a
// 1+10+100 tree, b.N sets in all, as fast as they can, while a tree cache
// watches; it reports the writes per second, how long after the last
// write the cache had all of them (catch-up), the events it reported per
// write (below 1: changes coalesced) and its requests per write.
func BenchmarkTreeCacheChanges(b *testing.B) {
	e := ensemble(b)
	w := connect(b, e.Addrs())
	s, counter := testutil.CountedSession(b, e.Addrs())
	root := testPath(b)
	buildTree(b, w, root, 10, 2)
	c := newTree(b, s, root)
	r := record(b, c.Watch(ctxT(b, 10*time.Minute)))
	r.waitCount(b, 10*time.Second, cache.EventInitialized, 1)
	leaves := make([]string, 0, 100)
	for i := range 10 {
		for j := range 10 {
			leaves = append(leaves, fmt.Sprintf("%s/c%d/c%d", root, i, j))
		}
	}
	events, before := len(r.all()), counter.Snapshot()
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := g; i < b.N; i += 4 {
				if _, err := w.Conn().Set(leaves[i%len(leaves)], []byte(fmt.Sprint(i)), -1); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	wrote := time.Since(start)
	converge(b, time.Minute, w, root, treeShape, c.Nodes)
	caught := time.Since(start) - wrote
	b.StopTimer()
	d := counter.Snapshot().Sub(before)
	b.ReportMetric(float64(b.N)/wrote.Seconds(), "writes/s")
	b.ReportMetric(float64(caught.Milliseconds()), "catch-up-ms")
	b.ReportMetric(float64(len(r.all())-events)/float64(b.N), "events/write")
	b.ReportMetric(float64(d.Req(zkcount.OpGetData))/float64(b.N), "getData/write")
}
