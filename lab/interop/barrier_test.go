package interop

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/barrier"
	"github.com/zkrecipes/zkrecipes/chaos/history"
	"github.com/zkrecipes/zkrecipes/lab/internal/peers"
)

// TestDoubleBarrierWithCurator: 2 Curator DistributedDoubleBarrier members
// enter first and must wait for the 2 Go members; nobody gets past Enter
// before the last member began entering, nor past Leave before the last
// began leaving.
func TestDoubleBarrierWithCurator(t *testing.T) {
	forEachRelease(t, func(t *testing.T, rel peers.Release) {
		const members = 4
		e := ensemble(t)
		ctx := ctxFor(t, 3*time.Minute)
		path := uniquePath(t, "double-barrier")
		begin := history.Now()
		var wg sync.WaitGroup
		errs := make(chan error, members)
		var javas []*peers.Peer
		for i := range 2 {
			p := startPeer(t, rel, peers.Curator, e.ConnectString())
			javas = append(javas, p)
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := p.Do(ctx, fmt.Sprintf("dbarrier %s %d", path, members)); err != nil {
					errs <- fmt.Errorf("curator-%d: %w", i+1, err)
				}
			}()
		}
		// The Java members are in (their nodes exist) before any Go one starts.
		s0 := session(t, e.Addrs())
		for {
			children, _, _ := s0.Conn().Children(path)
			if len(children) >= 2 {
				break
			}
			select {
			case <-ctx.Done():
				t.Fatalf("Curator members never entered (children %v)", children)
			case <-time.After(20 * time.Millisecond):
			}
		}
		var mu sync.Mutex
		var enterStart, entered, leaveStart, left []int64
		note := func(list *[]int64, t int64) {
			mu.Lock()
			*list = append(*list, t)
			mu.Unlock()
		}
		for g := range 2 {
			b, err := barrier.NewDouble(session(t, e.Addrs()), path, members)
			if err != nil {
				t.Fatal(err)
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				note(&enterStart, history.Now())
				if err := b.Enter(ctx); err != nil {
					errs <- fmt.Errorf("go-%d enter: %w", g+1, err)
					return
				}
				note(&entered, history.Now())
				note(&leaveStart, history.Now())
				if err := b.Leave(ctx); err != nil {
					errs <- fmt.Errorf("go-%d leave: %w", g+1, err)
					return
				}
				note(&left, history.Now())
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		for _, p := range javas {
			for _, ev := range p.Events() {
				if ev.T < begin {
					t.Fatalf("Curator event %+v before the run: not the same monotonic clock", ev)
				}
				switch ev.Name {
				case "entered":
					entered = append(entered, ev.T)
					leaveStart = append(leaveStart, ev.T) // the peer leaves at once
				case "left":
					left = append(left, ev.T)
				}
			}
		}
		if len(entered) != members || len(left) != members {
			t.Fatalf("entered %d, left %d; want %d each", len(entered), len(left), members)
		}
		lastEnter, lastLeave := maxOf(enterStart), maxOf(leaveStart)
		for _, at := range entered {
			if at < lastEnter {
				t.Fatalf("a member got past Enter %v before the last member began entering", time.Duration(lastEnter-at))
			}
		}
		for _, at := range left {
			if at < lastLeave {
				t.Fatalf("a member got past Leave %v before the last member began leaving", time.Duration(lastLeave-at))
			}
		}
		children, _, _ := s0.Conn().Children(path)
		for _, c := range children {
			if c != barrier.ReadyNode {
				t.Fatalf("member %s left under %s after everyone left", c, path)
			}
		}
	})
}

func maxOf(xs []int64) int64 {
	var m int64
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}
