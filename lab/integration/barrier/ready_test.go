package barrier_test

import (
	"context"
	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/zkrecipes/barrier"
	"github.com/zkrecipes/zkrecipes/internal/hooks"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// TestLeaveSparesNextRoundsReady: the next round of a double barrier
// enters (and creates its own "ready") between the listing in which a
// member of the round before saw every member gone and that member's
// delete of "ready". The delete must leave the next round's node alone:
// deleted, a member of the next round still in Enter (one that lost its
// watch, or came late) would wait for members that have moved on. Before,
// the delete went by path and removed it.
func TestLeaveSparesNextRoundsReady(t *testing.T) {
	testutil.RequireHooks(t)
	e := ensemble(t)
	ctx := ctxT(t, time.Minute)
	path := testPath(t)
	ready := path + "/" + barrier.ReadyNode
	obs := connect(t, e.Addrs())
	readyCzxid := func() (int64, error) { // 0: no ready node
		ok, st, err := obs.Conn().Exists(ready)
		if err != nil || !ok {
			return 0, err
		}
		return st.Czxid, nil
	}
	member := func() *barrier.DoubleBarrier { return newDouble(t, connect(t, e.Addrs()), path, 2) }
	enterAll := func(ds ...*barrier.DoubleBarrier) error {
		errs := make(chan error, len(ds))
		for _, d := range ds {
			go func() { errs <- d.Enter(ctx) }()
		}
		var first error
		for range ds {
			if err := <-errs; err != nil && first == nil {
				first = err
			}
		}
		return first
	}

	a, b := member(), member()
	if err := enterAll(a, b); err != nil {
		t.Fatalf("round 1: Enter: %v", err)
	}
	round1, err := readyCzxid()
	if err != nil || round1 == 0 {
		t.Fatalf("round 1's ready: czxid 0x%x, %v", round1, err)
	}

	// The first of round 1's members to reach the delete stops there
	// until the other one has left (its Leave returned, round 1 is over)
	// and round 2 has entered.
	c, d := member(), member()
	var (
		left    atomic.Int32
		first   atomic.Bool
		round2  atomic.Int64
		hookErr = make(chan error, 1)
	)
	t.Cleanup(hooks.SetBeforeReadyDelete(func(p string) {
		if p != ready || !first.CompareAndSwap(false, true) {
			return
		}
		hookErr <- func() error {
			wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
			defer cancel()
			for left.Load() != 1 {
				select {
				case <-wctx.Done():
					return context.Cause(wctx)
				case <-time.After(10 * time.Millisecond):
				}
			}
			if err := enterAll(c, d); err != nil {
				return err
			}
			z, err := readyCzxid()
			round2.Store(z)
			return err
		}()
	}))
	var wg sync.WaitGroup
	for i, m := range []*barrier.DoubleBarrier{a, b} {
		wg.Go(func() {
			if err := m.Leave(ctx); err != nil {
				t.Errorf("round 1, member %d: Leave: %v", i, err)
			}
			left.Add(1)
		})
	}
	wg.Wait()
	select {
	case err := <-hookErr:
		if err != nil {
			t.Fatalf("round 2 between the listing and the delete: %v", err)
		}
	default:
		t.Fatal("no Leave of round 1 reached the delete of ready")
	}
	r2 := round2.Load()
	if r2 == 0 || r2 == round1 {
		t.Fatalf("round 2's ready: czxid 0x%x (round 1's 0x%x)", r2, round1)
	}
	if got, err := readyCzxid(); err != nil || got != r2 {
		t.Fatalf("after round 1's Leave, ready has czxid 0x%x (%v), want round 2's 0x%x", got, err, r2)
	}

	// Round 2 leaves and deletes its own ready: the barrier is clean.
	for _, m := range []*barrier.DoubleBarrier{c, d} {
		wg.Go(func() {
			if err := m.Leave(ctx); err != nil {
				t.Errorf("round 2: Leave: %v", err)
			}
		})
	}
	wg.Wait()
	if got := children(t, obs, path); len(got) != 0 {
		t.Fatalf("round 2 left %v behind", got)
	}
}

// TestLeaveDeletesReadyBeforeReturning: the ctx of every member's Leave
// ends after each has seen every member gone (its last listing still shows
// "ready") and before any has deleted "ready"; each closes its session as
// soon as Leave returns, as a process that is shutting down does. The round
// is over and every Leave reports success, so its ready must be gone:
// otherwise the barrier's path keeps a ready that nobody will delete
// (chaos's barrier/latency-low found it: the run's ctx ended there).
// Before, each Leave handed the delete to the background on its done ctx
// and returned nil, and closing the session stopped the background.
func TestLeaveDeletesReadyBeforeReturning(t *testing.T) {
	testutil.RequireHooks(t)
	e := ensemble(t)
	ctx := ctxT(t, time.Minute)
	path := testPath(t) + "/" + strconv.FormatInt(time.Now().UnixNano(), 36) // a fresh barrier, as each chaos round's
	ready := path + "/" + barrier.ReadyNode
	obs := connect(t, e.Addrs())
	t.Cleanup(func() { _ = obs.Conn().Delete(ready, -1) }) // a failed run's litter
	sessions := []*recipes.Session{connect(t, e.Addrs()), connect(t, e.Addrs())}
	var ds []*barrier.DoubleBarrier
	errs := make(chan error, len(sessions))
	for _, s := range sessions {
		d := newDouble(t, s, path, len(sessions))
		ds = append(ds, d)
		go func() { errs <- d.Enter(ctx) }()
	}
	for range sessions {
		if err := <-errs; err != nil {
			t.Fatalf("Enter: %v", err)
		}
	}

	// Every member stops before the delete until all have got there; then
	// their ctx ends.
	leaveCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var arrived atomic.Int32
	all := make(chan struct{})
	hookErr := make(chan error, len(sessions))
	t.Cleanup(hooks.SetBeforeReadyDelete(func(p string) {
		if p != ready {
			return
		}
		if arrived.Add(1) == int32(len(sessions)) {
			close(all)
		}
		wctx, wcancel := context.WithTimeout(ctx, 20*time.Second)
		defer wcancel()
		select {
		case <-all:
			hookErr <- nil
		case <-wctx.Done():
			hookErr <- context.Cause(wctx)
		}
		cancel()
	}))
	var wg sync.WaitGroup
	for i, d := range ds {
		wg.Go(func() {
			err := d.Leave(leaveCtx)
			cctx, ccancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer ccancel()
			_ = sessions[i].CloseContext(cctx) // at once, as the chaos workload does
			if err != nil {
				t.Errorf("member %d: Leave: %v", i, err)
			}
		})
	}
	wg.Wait()
	if n := arrived.Load(); n != int32(len(sessions)) {
		t.Fatalf("%d of %d members reached the delete of ready", n, len(sessions))
	}
	for range sessions {
		if err := <-hookErr; err != nil {
			t.Fatalf("waiting for every member at the delete: %v", err)
		}
	}
	if ok, st, err := obs.Conn().Exists(ready); err != nil || ok {
		t.Fatalf("every member left and closed its session; ready still there: %v (czxid 0x%x), %v", ok, czxidOf(st), err)
	}
}

func czxidOf(st *zk.Stat) int64 {
	if st == nil {
		return 0
	}
	return st.Czxid
}
