package inspect_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/barrier"
	"github.com/zkrecipes/zkrecipes/lab/internal/peers"
	"github.com/zkrecipes/zkrecipes/leader"
	"github.com/zkrecipes/zkrecipes/lock"
	"github.com/zkrecipes/zkrecipes/queue"
	"github.com/zkrecipes/zkrecipes/recipes"
	"github.com/zkrecipes/zkrecipes/twophase"
)

// A Go leader.Election leads and a Curator LeaderLatch waits: show names
// the Go participant leader and lists both with their ids.
func TestShowElection(t *testing.T) {
	e := ensemble(t)
	path := testPath(t)
	ctx := ctxFor(t, 3*time.Minute)
	cur, curSID := startPeer(t, peers.Curator, e)
	s := connect(t, e.Addrs())
	el, err := leader.New(s, path, leader.WithData([]byte("go-1")))
	if err != nil {
		t.Fatal(err)
	}
	term, err := el.Campaign(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cur.Do(ctx, "latch-start "+path+" curator-1"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, time.Minute, "the latch's node", func() bool { return len(children(t, s, path)) == 2 })
	rep := show(t, e, path)
	if rep.Kind != "election" || rep.Dialect != "curator" || rep.Leader == nil || len(rep.Contenders) != 2 {
		t.Fatalf("report: %+v", rep)
	}
	if rep.Leader.Data != "go-1" || rep.Leader.Session != hex(s.ID()) || !rep.Contenders[0].Holds {
		t.Errorf("leader %+v", rep.Leader)
	}
	if c := rep.Contenders[1]; c.Data != "curator-1" || c.Session != curSID || c.Holds {
		t.Errorf("second participant %+v, want curator-1 on %s", c, curSID)
	}
	text := zkrecipes(t, e, "show", path)
	if !strings.Contains(text, "leader: go-1 (") || !strings.Contains(text, "participants: 2") {
		t.Errorf("text:\n%s", text)
	}
	if _, err := cur.Do(ctx, "latch-close"); err != nil {
		t.Fatal(err)
	}
	if err := term.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

// A queue filled by Go and by Curator's SimpleDistributedQueue, one item
// claimed by a Go consumer: show gives the depth, the oldest item and the
// live claim with its consumer's identity and session.
func TestShowQueueWithClaims(t *testing.T) {
	e := ensemble(t)
	path := testPath(t)
	ctx := ctxFor(t, 3*time.Minute)
	cur, _ := startPeer(t, peers.Curator, e)
	s := connect(t, e.Addrs())
	q, err := queue.New(s, path, queue.WithData([]byte("worker-7")))
	if err != nil {
		t.Fatal(err)
	}
	for _, item := range []string{"first", "second"} {
		if _, err := q.Put(ctx, []byte(item)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := cur.Do(ctx, "queue-put "+path+" from-curator"); err != nil {
		t.Fatal(err)
	}
	c, err := q.Claim(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rep := show(t, e, path)
	if rep.Kind != "queue" || rep.Dialect != "curator" || rep.Depth != 3 || len(rep.Items) != 3 {
		t.Fatalf("report: %+v", rep)
	}
	var data []string
	for _, it := range rep.Items {
		data = append(data, it.Data)
	}
	if !slices.Equal(data, []string{"first", "second", "from-curator"}) {
		t.Errorf("items in order %q", data)
	}
	if len(rep.Claims) != 1 {
		t.Fatalf("claims %+v", rep.Claims)
	}
	if cl := rep.Claims[0]; cl.Name != c.Item().Name || cl.Data != "worker-7" || cl.Session != hex(s.ID()) {
		t.Errorf("claim %+v, want %s by worker-7 on %s", cl, c.Item().Name, hex(s.ID()))
	}
	text := zkrecipes(t, e, "show", path)
	for _, want := range []string{"depth: 3\n", "oldest: " + c.Item().Name, `data "first"`, "claims: 1\n", `"worker-7"`} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
	if err := c.Ack(ctx); err != nil {
		t.Fatal(err)
	}
	if rep := show(t, e, path); rep.Depth != 2 || len(rep.Claims) != 0 {
		t.Errorf("after Ack: depth %d claims %v", rep.Depth, rep.Claims)
	}
}

// A Curator DistributedDoubleBarrier and a Go DoubleBarrier have entered a
// barrier of 3: show lists both members and no "ready"; once a third
// enters, "ready" is there.
func TestShowDoubleBarrier(t *testing.T) {
	e := ensemble(t)
	path := testPath(t)
	ctx := ctxFor(t, 3*time.Minute)
	cur, curSID := startPeer(t, peers.Curator, e)
	background(t, "curator member", func() error {
		_, err := cur.Do(ctx, "dbarrier "+path+" 3")
		return err
	})
	s1, s2 := connect(t, e.Addrs()), connect(t, e.Addrs())
	b1, err := barrier.NewDouble(s1, path, 3)
	if err != nil {
		t.Fatal(err)
	}
	b2, err := barrier.NewDouble(s2, path, 3)
	if err != nil {
		t.Fatal(err)
	}
	entered := make(chan error, 1)
	go func() { entered <- b1.Enter(ctx) }()
	waitFor(t, time.Minute, "two members", func() bool { return len(barrier.Members(recipes.Curator, children(t, s2, path))) == 2 })
	rep := show(t, e, path)
	if rep.Kind != "double-barrier" || rep.Ready || len(rep.Members) != 2 {
		t.Fatalf("report: %+v", rep)
	}
	var sessions []string
	for _, m := range rep.Members {
		sessions = append(sessions, m.Session)
	}
	if !slices.Contains(sessions, curSID) || !slices.Contains(sessions, hex(s1.ID())) {
		t.Errorf("member sessions %v, want %s and %s", sessions, curSID, hex(s1.ID()))
	}
	if err := b2.Enter(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-entered; err != nil {
		t.Fatal(err)
	}
	// The Curator member may already have left (in the leave protocol,
	// any member but the lowest deletes its node at once); the Go members
	// have not.
	rep = show(t, e, path)
	sessions = nil
	for _, m := range rep.Members {
		sessions = append(sessions, m.Session)
	}
	if !rep.Ready || !slices.Contains(sessions, hex(s1.ID())) || !slices.Contains(sessions, hex(s2.ID())) {
		t.Errorf("after the third entered: ready %v, member sessions %v", rep.Ready, sessions)
	}
	left := make(chan error, 1)
	go func() { left <- b1.Leave(ctx) }()
	if err := b2.Leave(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-left; err != nil {
		t.Fatal(err)
	}
}

// A twophase transaction of three sites: one voted commit, one is working
// on it (liveness node, no vote), one never showed up: show gives the
// votes and lists the silent site as stale.
func TestShowTwoPhase(t *testing.T) {
	e := ensemble(t)
	root := testPath(t)
	ctx := ctxFor(t, 2*time.Minute)
	s := connect(t, e.Addrs())
	coord, err := twophase.NewCoordinator(s, root)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := coord.Begin(ctx, "tx1", []string{"a", "b", "c"}, []byte("move 5")); err != nil {
		t.Fatal(err)
	}
	for _, site := range []string{"a", "b"} {
		p, err := twophase.NewSite(connect(t, e.Addrs()), root, site)
		if err != nil {
			t.Fatal(err)
		}
		pr, err := p.Lookup(ctx, "tx1")
		if err != nil {
			t.Fatal(err)
		}
		if site == "a" {
			if err := pr.Vote(ctx, twophase.Commit); err != nil {
				t.Fatal(err)
			}
		}
	}
	rep := show(t, e, root)
	if rep.Kind != "twophase" || len(rep.Transactions) != 1 {
		t.Fatalf("report: %+v", rep)
	}
	tx := rep.Transactions[0]
	if tx.ID != "tx1" || tx.Payload != "move 5" || tx.Decision != "" || len(tx.Sites) != 3 {
		t.Fatalf("tx %+v", tx)
	}
	if a, b, c := tx.Sites[0], tx.Sites[1], tx.Sites[2]; a.Vote != "commit" || a.Alive == "" || b.Vote != "" || b.Alive == "" || c.Vote != "" || c.Alive != "" {
		t.Errorf("sites %+v", tx.Sites)
	}
	if len(rep.Stale) != 1 || rep.Stale[0].Path != root+"/tx1/c" {
		t.Errorf("stale %+v, want site c", rep.Stale)
	}
	text := zkrecipes(t, e, "show", root)
	for _, want := range []string{"tx1  undecided", "a: commit, session 0x", "b: no vote, session 0x", "c: no vote, no session"} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
}

// A lock.Semaphore of 2 held twice: show gives the recorded maximum and
// the leases with their sessions.
func TestShowSemaphore(t *testing.T) {
	e := ensemble(t)
	path := testPath(t)
	ctx := ctxFor(t, 2*time.Minute)
	var sids []string
	var leases []*lock.Permit
	for i := 0; i < 2; i++ {
		s := connect(t, e.Addrs())
		sem, err := lock.NewSemaphore(s, path, 2)
		if err != nil {
			t.Fatal(err)
		}
		l, err := sem.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		leases = append(leases, l)
		sids = append(sids, hex(s.ID()))
	}
	rep := show(t, e, path)
	if rep.Kind != "semaphore" || rep.Dialect != "curator" || rep.Max != 2 || len(rep.Leases) != 2 {
		t.Fatalf("report: %+v", rep)
	}
	var got []string
	for _, l := range rep.Leases {
		got = append(got, l.Session)
	}
	slices.Sort(got)
	slices.Sort(sids)
	if !slices.Equal(got, sids) {
		t.Errorf("lease sessions %v, want %v", got, sids)
	}
	text := zkrecipes(t, e, "show", path)
	if !strings.Contains(text, "leases: 2 of max 2") {
		t.Errorf("text:\n%s", text)
	}
	for _, l := range leases {
		if err := l.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
}
