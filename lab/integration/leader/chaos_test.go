package leader_test

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"github.com/zkrecipes/zkrecipes/leader"
	"github.com/zkrecipes/zkrecipes/recipes"
	"github.com/zkrecipes/zkrecipes/testenv"
)

// termRec is one term as its participant saw it, on the monotonic clock:
// from Campaign's return to the moment it stopped believing it leads (its
// context done, or its decision to resign, whichever came first).
type termRec struct {
	who        int
	start, end time.Time
	fence      int64
	cause      error
	term       *leader.Term
}

// chaosParticipant campaigns in a loop on its own session and link.
type chaosParticipant struct {
	i      int
	link   *testenv.Link
	s      *recipes.Session
	el     *leader.Election
	resign chan struct{}
}

// TestTwentyLeadershipChanges forces 20 leadership changes on a 3-server
// ensemble with 5 participants, cycling through a graceful resign, killing
// the ZooKeeper server the leader is connected to, expiring the leader's
// session, and killing the ZooKeeper leader. No two terms may overlap and
// fences must strictly grow.
func TestTwentyLeadershipChanges(t *testing.T) {
	if testing.Short() {
		t.Skip("needs a real 3-server ZooKeeper ensemble")
	}
	e := testutil.NewEnsemble(t, testenv.Config{Servers: 3})
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	runCtx, stopRun := context.WithCancel(ctx)
	defer stopRun()
	const path = "/leader-chaos"

	var (
		mu   sync.Mutex
		recs []*termRec
	)
	ps := make([]*chaosParticipant, 5)
	for i := range ps {
		l, err := e.NewLink(fmt.Sprintf("p%d", i))
		if err != nil {
			t.Fatal(err)
		}
		s := connect(t, l.Addrs())
		ps[i] = &chaosParticipant{i: i, link: l, s: s, el: newElection(t, s, path, withID(fmt.Sprintf("p%d", i))), resign: make(chan struct{}, 1)}
	}
	var wg sync.WaitGroup
	for _, p := range ps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for runCtx.Err() == nil {
				term, err := p.el.Campaign(runCtx)
				if err != nil {
					if runCtx.Err() == nil {
						t.Logf("p%d: campaign: %v", p.i, err)
					}
					continue
				}
				r := &termRec{who: p.i, start: time.Now(), fence: term.Fence().Token, term: term}
				ended := make(chan time.Time, 1)
				stop := context.AfterFunc(term.Context(), func() { ended <- time.Now() })
				mu.Lock()
				recs = append(recs, r)
				mu.Unlock()
				var end time.Time
				select {
				case end = <-ended:
				case <-p.resign:
					end = time.Now()
					if !stop() {
						end = <-ended // lost before we decided to resign
					}
					if err := term.Release(runCtx); err != nil {
						t.Errorf("p%d: resign: %v", p.i, err)
					}
				case <-runCtx.Done():
					end = time.Now()
					stop()
					_ = term.Release(context.WithoutCancel(runCtx))
				}
				mu.Lock()
				r.end, r.cause = end, context.Cause(term.Context())
				mu.Unlock()
			}
		}()
	}

	// live returns the term whose participant currently believes it leads.
	live := func() *termRec {
		mu.Lock()
		defer mu.Unlock()
		for _, r := range slices.Backward(recs) {
			if r.end.IsZero() && r.term.Context().Err() == nil {
				return r
			}
		}
		return nil
	}
	waitLeader := func(after *termRec) *termRec {
		var r *termRec
		waitFor(t, time.Minute, "a new leader", func() bool {
			r = live()
			return r != nil && r != after
		})
		return r
	}

	kinds := []string{"resign", "kill-connected-server", "expire-session", "kill-zk-leader"}
	handoffs := map[string][]time.Duration{}
	down := -1 // a killed server not restarted yet
	cur := waitLeader(nil)
	for change := range 20 {
		kind := kinds[change%len(kinds)]
		p := ps[cur.who]
		if kind == "kill-connected-server" || kind == "kill-zk-leader" {
			if down >= 0 {
				if err := e.StartServer(ctx, down); err != nil {
					t.Fatal(err)
				}
				down = -1
			}
			if err := e.WaitQuorum(ctx); err != nil {
				t.Fatal(err)
			}
		}
		began := time.Now()
		switch kind {
		case "resign":
			p.resign <- struct{}{}
		case "expire-session":
			if err := p.link.ExpireSession(ctx, cur.term.Fence().SessionID); err != nil {
				t.Fatal(err)
			}
		case "kill-connected-server":
			down = slices.Index(p.link.Addrs(), p.s.Conn().Server())
			if down < 0 {
				t.Fatalf("p%d connected to %q, not one of %v", p.i, p.s.Conn().Server(), p.link.Addrs())
			}
			if err := e.Kill(ctx, down); err != nil {
				t.Fatal(err)
			}
		case "kill-zk-leader":
			ldr, err := e.Leader(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if err := e.Kill(ctx, ldr); err != nil {
				t.Fatal(err)
			}
			down = ldr
		}
		next := waitLeader(cur)
		handoffs[kind] = append(handoffs[kind], time.Since(began))
		mu.Lock()
		t.Logf("change %2d %-21s p%d -> p%d in %v (old term's cause: %v)", change+1, kind, cur.who, next.who,
			time.Since(began).Round(time.Millisecond), context.Cause(cur.term.Context()))
		mu.Unlock()
		cur = next
	}
	stopRun()
	wg.Wait()

	sort.Slice(recs, func(i, j int) bool { return recs[i].start.Before(recs[j].start) })
	if len(recs) < 21 {
		t.Errorf("%d terms for 20 changes", len(recs))
	}
	for i, r := range recs {
		if r.end.Before(r.start) {
			t.Errorf("term %d (p%d) ends before it starts", i, r.who)
		}
		if i == 0 {
			continue
		}
		prev := recs[i-1]
		if r.start.Before(prev.end) {
			t.Errorf("terms overlap: p%d [%v, %v] and p%d starting %v (%v before the first ended)",
				prev.who, prev.start.Format(time.StampMicro), prev.end.Format(time.StampMicro),
				r.who, r.start.Format(time.StampMicro), prev.end.Sub(r.start))
		}
		if r.fence <= prev.fence {
			t.Errorf("fence did not grow: term %d (p%d) %d after %d", i, r.who, r.fence, prev.fence)
		}
	}
	for _, k := range kinds {
		t.Logf("%-21s handoffs: %v", k, handoffs[k])
	}
	t.Logf("%d terms, none overlapping, fences strictly growing", len(recs))
}
