package interop

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/chaos/checkers"
	"github.com/zkrecipes/zkrecipes/chaos/history"
	"github.com/zkrecipes/zkrecipes/lab/internal/peers"
	"github.com/zkrecipes/zkrecipes/leader"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// electionAcquire makes Go participants that campaign, hold a term, and
// resign.
func electionAcquire(path string, opts ...leader.Option) func(*recipes.Session) (acquireFunc, error) {
	return func(s *recipes.Session) (acquireFunc, error) {
		e, err := leader.New(s, path, opts...)
		if err != nil {
			return nil, err
		}
		return func(ctx context.Context) (func(context.Context) error, error) {
			term, err := e.Campaign(ctx)
			if err != nil {
				return nil, err
			}
			return term.Release, nil
		}, nil
	}
}

// TestElectionWithCuratorSelector: Go elections in LeaderSelector's format
// and a Curator LeaderSelector take turns leading one path.
func TestElectionWithCuratorSelector(t *testing.T) {
	forEachRelease(t, func(t *testing.T, rel peers.Release) {
		e := ensemble(t)
		path := uniquePath(t, "selector-election")
		counter := path + "-counter"
		sel := startPeer(t, rel, peers.Curator, e.ConnectString())
		jobs := []peerJob{{"curator-selector", sel, fmt.Sprintf("selector-loop %s 30 %s", path, counter)}}
		mixedExclusive(t, path, counter, jobs, 2, 30, electionAcquire(path, leader.WithDialect(recipes.CuratorSelector)))
	})
}

// TestElectionWithKazooElection: Go elections in kazoo's format and kazoo
// Elections take turns leading one path.
func TestElectionWithKazooElection(t *testing.T) {
	forEachRelease(t, func(t *testing.T, rel peers.Release) {
		e := ensemble(t)
		path := uniquePath(t, "kazoo-election")
		counter := path + "-counter"
		var jobs []peerJob
		for i := range 2 {
			p := startPeer(t, rel, peers.Kazoo, e.ConnectString())
			jobs = append(jobs, peerJob{fmt.Sprintf("kazoo-%d", i+1), p, fmt.Sprintf("election-loop %s kazoo-%d 20 %s", path, i+1, counter)})
		}
		mixedExclusive(t, path, counter, jobs, 2, 20, electionAcquire(path, leader.WithDialect(recipes.Kazoo)))
	})
}

// TestElectionWithCuratorLeaderLatch: a Curator LeaderLatch and a Go
// Election on one path. Exactly one leads at any instant, and expiring the
// leader's session, on either side, hands leadership to the other side.
func TestElectionWithCuratorLeaderLatch(t *testing.T) {
	forEachRelease(t, func(t *testing.T, rel peers.Release) {
		e := ensemble(t)
		ctx := ctxFor(t, 5*time.Minute)
		path := uniquePath(t, "latch")
		javaLink, err := e.NewLink("java-latch")
		if err != nil {
			t.Fatal(err)
		}
		goLink, err := e.NewLink("go-latch")
		if err != nil {
			t.Fatal(err)
		}
		h := newHistory()
		begin := history.Now()
		java := startPeer(t, rel, peers.Curator, javaLink.ConnectString())
		if _, err := java.Do(ctx, "latch-start "+path+" java-1"); err != nil {
			t.Fatal(err)
		}
		isLeader := func(n int) func(peers.Event) bool {
			seen := 0
			return func(ev peers.Event) bool {
				if ev.Name == "leader" {
					seen++
				}
				return seen == n
			}
		}
		if _, err := java.WaitEvent(ctx, isLeader(1)); err != nil {
			t.Fatal(err)
		}
		s := session(t, goLink.Addrs())
		el, err := leader.New(s, path, leader.WithData([]byte("go-1")))
		if err != nil {
			t.Fatal(err)
		}
		type campaign struct {
			term *leader.Term
			at   int64
			err  error
		}
		campaignAsync := func() <-chan campaign {
			ch := make(chan campaign, 1)
			go func() {
				term, err := el.Campaign(ctx)
				ch <- campaign{term, history.Now(), err}
			}()
			return ch
		}
		// Java leads; the Go participant waits behind it.
		won := campaignAsync()
		waitParticipants(t, ctx, el, 2)

		// Expire Java's session: Go must be elected, after Java stepped down.
		if err := javaLink.ExpireSession(ctx, java.SessionID); err != nil {
			t.Fatal(err)
		}
		c := <-won
		if c.err != nil {
			t.Fatal(c.err)
		}
		if c.term.Participant().ID != "go-1" {
			t.Fatalf("Go's term names %+v", c.term.Participant())
		}
		// The moment Go's term ends, on the same clock.
		ended := make(chan int64, 1)
		go func() {
			<-c.term.Context().Done()
			ended <- history.Now()
		}()
		// Java rejoins under a new session and waits behind Go.
		waitParticipants(t, ctx, el, 2)

		// Expire Go's session: the term ends and Java leads again.
		if err := goLink.ExpireSession(ctx, s.ID()); err != nil {
			t.Fatal(err)
		}
		goEnd := <-ended
		if _, err := java.WaitEvent(ctx, isLeader(2)); err != nil {
			t.Fatal(err)
		}
		h.rec.Add(history.Event{Client: "go-1", Kind: history.KindAcquired, Key: path, Time: c.at})
		h.rec.Add(history.Event{Client: "go-1", Kind: history.KindLost, Key: path, Time: goEnd})
		// Java's terms: from each leader event to the next notleader event.
		var open int64
		for _, ev := range java.Events() {
			switch ev.Name {
			case "leader":
				open = ev.T
			case "notleader":
				if open != 0 {
					h.hold("java-1", path, "", open, ev.T)
					open = 0
				}
			}
		}
		if open != 0 {
			h.rec.Add(history.Event{Client: "java-1", Kind: history.KindAcquired, Key: path, Time: open})
		}
		for _, ev := range java.Events() {
			if ev.T < begin || ev.T > history.Now() {
				t.Fatalf("Java event %+v outside the run: not the same monotonic clock", ev)
			}
		}
		h.check(t, checkers.SingleLeader(), 3)
		if _, err := java.Do(ctx, "latch-close"); err != nil {
			t.Fatal(err)
		}
	})
}

// waitParticipants waits until the election lists n participants.
func waitParticipants(t *testing.T, ctx context.Context, el *leader.Election, n int) {
	t.Helper()
	for {
		ps, err := el.Participants(ctx)
		if err == nil && len(ps) == n {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("election never had %d participants (last: %v, %v)", n, ps, err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}
