package interop

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/chaos/checkers"
	"github.com/zkrecipes/zkrecipes/chaos/history"
	"github.com/zkrecipes/zkrecipes/lab/internal/peers"
	"github.com/zkrecipes/zkrecipes/partition"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// goPartitioner is a Go member beside kazoo's: it records each Partition
// it holds as holdings of its items and releases when asked.
type goPartitioner struct {
	id   string
	st   *recipes.Stream[*partition.Partition]
	done chan struct{}

	mu  sync.Mutex
	cur *partition.Partition
}

func startGoPartitioner(t *testing.T, ctx context.Context, s *recipes.Session, h *holdings, path, id string, items []string) *goPartitioner {
	t.Helper()
	p, err := partition.New(s, path, items, partition.WithDialect(recipes.Kazoo), partition.WithID(id), partition.WithBoundary(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	g := &goPartitioner{id: id, st: p.Run(ctx), done: make(chan struct{})}
	go func() {
		defer close(g.done)
		for part := range g.st.C {
			t0 := history.Now()
			live := part.Context().Err() == nil
			if live {
				for _, item := range part.Items() {
					h.rec.Add(history.Event{Client: id, Kind: history.KindAcquired, Key: item, Token: part.Fence(item).Token, Time: t0})
				}
				g.mu.Lock()
				g.cur = part
				g.mu.Unlock()
			}
			<-part.Context().Done()
			t1 := history.Now()
			g.mu.Lock()
			g.cur = nil
			g.mu.Unlock()
			if live {
				for _, item := range part.Items() {
					h.rec.Add(history.Event{Client: id, Kind: history.KindReleased, Key: item, Time: t1})
				}
			}
			_ = part.Release(context.WithoutCancel(ctx))
		}
	}()
	t.Cleanup(g.stop)
	return g
}

func (g *goPartitioner) stop() {
	g.st.Stop()
	<-g.done
}

// share returns the items and members of the Partition held now, if any.
func (g *goPartitioner) share() (items, members []string, ok bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.cur == nil || g.cur.Context().Err() != nil {
		return nil, nil, false
	}
	return g.cur.Items(), g.cur.Members(), true
}

// kazooShares returns what each kazoo partitioner of p holds now, by its
// latest event: the items of a part-acquired not followed by a
// part-released.
func kazooShares(p *peers.Peer) map[string][]string {
	out := map[string][]string{}
	for _, ev := range p.Events() {
		if len(ev.Rest) == 0 {
			continue
		}
		switch ev.Name {
		case "part-acquired":
			out[ev.Rest[0]] = append([]string{}, ev.Rest[1:]...)
		case "part-released", "part-failed":
			delete(out, ev.Rest[0])
		}
	}
	return out
}

// kazooHoldings adds the holdings kazoo's partitioners reported to h,
// checking that their times lie within [begin, end] of the Go side's
// CLOCK_MONOTONIC.
func kazooHoldings(t *testing.T, h *holdings, p *peers.Peer, begin, end int64) {
	t.Helper()
	held := map[string][]string{}
	for _, ev := range p.Events() {
		if !strings.HasPrefix(ev.Name, "part-") || len(ev.Rest) == 0 {
			continue
		}
		if ev.T < begin || ev.T > end {
			t.Fatalf("kazoo event %s at %d outside the run [%d, %d]: not the same monotonic clock", ev.Name, ev.T, begin, end)
		}
		id := ev.Rest[0]
		switch ev.Name {
		case "part-acquired":
			held[id] = ev.Rest[1:]
			for _, item := range ev.Rest[1:] {
				h.rec.Add(history.Event{Client: id, Kind: history.KindAcquired, Key: item, Time: ev.T})
			}
		case "part-released":
			for _, item := range held[id] {
				h.rec.Add(history.Event{Client: id, Kind: history.KindReleased, Key: item, Time: ev.T})
			}
			delete(held, id)
		}
	}
}

// TestPartitionerWithKazooSetPartitioner: Go members (the kazoo dialect)
// and kazoo 2.8's SetPartitioner split one set on one path: once the
// members held still, every member (Go or kazoo) holds exactly its Stride
// share of the same member list, so every item is owned exactly once, and
// each item's lock has one node. When a kazoo member, then a Go member,
// leave, the rest split the set again. No item is held by two members at
// any instant (mutual exclusion over the Go Partitions and kazoo's
// acquired sets, on one monotonic clock).
func TestPartitionerWithKazooSetPartitioner(t *testing.T) {
	forEachRelease(t, func(t *testing.T, rel peers.Release) {
		e := ensemble(t)
		ctx := ctxFor(t, 4*time.Minute)
		path := uniquePath(t, "partition")
		items := []string{"i0", "i1", "i2", "i3", "i4", "i5", "i6", "i7"}
		py := startPeer(t, rel, peers.Kazoo, e.ConnectString())
		admin := session(t, e.Addrs())
		h := newHistory()
		begin := history.Now()
		gos := map[string]*goPartitioner{}
		for _, id := range []string{"go-1", "go-2"} {
			gos[id] = startGoPartitioner(t, ctx, session(t, e.Addrs()), h, path, id, items)
		}
		for _, id := range []string{"py-1", "py-2"} {
			if _, err := py.Do(ctx, fmt.Sprintf("partitioner-start %s %s 1 %s", path, id, strings.Join(items, ","))); err != nil {
				t.Fatal(err)
			}
		}
		stopped := map[string]bool{}
		t.Cleanup(func() {
			for _, id := range []string{"py-1", "py-2"} {
				if !stopped[id] {
					_, _ = py.Do(context.Background(), "partitioner-stop "+id)
				}
			}
		})

		converge := func(members []string) {
			t.Helper()
			var last string
			deadline := time.Now().Add(90 * time.Second)
			for {
				ok := true
				var state []string
				ks := kazooShares(py)
				owned := map[string]int{}
				for _, id := range members {
					want := partition.Stride(id, members, items)
					var got []string
					if g := gos[id]; g != nil {
						var ms []string
						got, ms, _ = g.share()
						ok = ok && slices.Equal(ms, members)
					} else {
						got = ks[id]
					}
					ok = ok && slices.Equal(got, want) && len(got) > 0
					for _, it := range got {
						owned[it]++
					}
					state = append(state, fmt.Sprintf("%s=%v", id, got))
				}
				for _, it := range items {
					ok = ok && owned[it] == 1
				}
				last = strings.Join(state, " ")
				if ok {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("no split among %v: %s", members, last)
				}
				time.Sleep(50 * time.Millisecond)
			}
			t.Logf("split among %v: %s", members, last)
			for _, it := range items {
				kids, _, err := admin.Conn().Children(path + "/locks/" + it)
				if err != nil || len(kids) != 1 {
					t.Errorf("%s: lock nodes %v, %v", it, kids, err)
				}
			}
		}

		converge([]string{"go-1", "go-2", "py-1", "py-2"})
		if _, err := py.Do(ctx, "partitioner-stop py-2"); err != nil {
			t.Fatal(err)
		}
		stopped["py-2"] = true
		converge([]string{"go-1", "go-2", "py-1"})
		gos["go-2"].stop()
		delete(gos, "go-2")
		converge([]string{"go-1", "py-1"})

		gos["go-1"].stop()
		if _, err := py.Do(ctx, "partitioner-stop py-1"); err != nil {
			t.Fatal(err)
		}
		stopped["py-1"] = true
		kazooHoldings(t, h, py, begin, history.Now())
		for _, ev := range py.Events() {
			if ev.Name == "part-failed" {
				t.Errorf("kazoo partitioner %v failed", ev.Rest)
			}
		}
		h.check(t, checkers.MutualExclusion(1), 3*len(items))
	})
}
