package ttl_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"github.com/zkrecipes/zkrecipes/recipes"
	"github.com/zkrecipes/zkrecipes/testenv"
	"github.com/zkrecipes/zkrecipes/ttl"
)

// The package's ensemble sweeps expired TTL nodes every 500 ms, so a claim
// of period P is gone between P and about P + 0.5 s. A second, lazily
// started server has extended types off.
var (
	sharedEnsemble = testutil.NewShared(testenv.Config{Servers: 1, ContainerCheckInterval: 500 * time.Millisecond})
	plainServer    = testutil.NewShared(testenv.Config{Servers: 1, NoExtendedTypes: true})
)

func TestMain(m *testing.M) { testutil.Main(m, sharedEnsemble, plainServer) }

func ensemble(tb testing.TB) *testenv.Ensemble {
	tb.Helper()
	e := sharedEnsemble.Start(tb)
	testutil.NoLeakedGoroutines(tb, testutil.Running("recipes", "ttl"))
	return e
}

func testPath(tb testing.TB) string {
	return "/zkrecipes-test/ttl/" + strings.NewReplacer("/", "_", " ", "_").Replace(tb.Name())
}

// TestOnceOnePerPeriod: of several concurrent claimants of one period
// exactly one wins and every loser sees the winner's claim; the claim
// outlives its creator's session; after the period the server deletes it
// and the next claim wins.
func TestOnceOnePerPeriod(t *testing.T) {
	e := ensemble(t)
	ctx := testutil.Ctx(t, time.Minute)
	path := testPath(t) + "/job"
	const period = 2 * time.Second
	const n = 5
	type result struct {
		c   ttl.Claim
		won bool
		err error
	}
	results := make([]result, n)
	claimants := make([]*recipes.Session, n)
	var wg sync.WaitGroup
	for i := range n {
		s := testutil.Connect(t, e.Addrs())
		claimants[i] = s
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, won, err := ttl.Once(ctx, s, path, period, []byte{byte('a' + i)})
			results[i] = result{c, won, err}
		}()
	}
	wg.Wait()
	var winner *result
	for i := range results {
		r := &results[i]
		if r.err != nil {
			t.Fatal(r.err)
		}
		if r.won {
			if winner != nil {
				t.Fatalf("two winners: %+v and %+v", winner.c, r.c)
			}
			winner = r
		}
	}
	if winner == nil {
		t.Fatal("nobody won the period")
	}
	for _, r := range results {
		if !r.won && (r.c.ID != winner.c.ID || !bytes.Equal(r.c.Data, winner.c.Data)) {
			t.Fatalf("a loser saw claim %+v, the winner made %+v", r.c, winner.c)
		}
	}
	// Not ephemeral: it outlives every claimant's session.
	for _, s := range claimants {
		s.Close()
	}
	observer := testutil.Connect(t, e.Addrs())
	c, err := ttl.Read(ctx, observer, path)
	if err != nil || c.ID != winner.c.ID {
		t.Fatalf("Read = %+v, %v", c, err)
	}
	start := time.Now()
	testutil.WaitFor(t, 20*time.Second, "the server to delete the expired claim", func() bool {
		ok, _, err := observer.Conn().Exists(path)
		return err == nil && !ok
	})
	gone := time.Since(start)
	if age := time.Since(c.Created); age < period {
		t.Fatalf("claim deleted %v after its creation, before its period %v", age, period)
	}
	t.Logf("claim deleted %v after it was read", gone.Round(time.Millisecond))
	if _, won, err := ttl.Once(ctx, observer, path, period, nil); err != nil || !won {
		t.Fatalf("next period's claim = %v, %v", won, err)
	}
}

// TestOnceOutlivesSession: a claimant that closes its session (a process
// that dies) leaves its claim in force until the period ends.
func TestOnceOutlivesSession(t *testing.T) {
	e := ensemble(t)
	ctx := testutil.Ctx(t, time.Minute)
	path := testPath(t)
	s := testutil.Connect(t, e.Addrs())
	if _, won, err := ttl.Once(ctx, s, path, 30*time.Second, []byte("first")); err != nil || !won {
		t.Fatalf("Once = %v, %v", won, err)
	}
	s.Close()
	other := testutil.Connect(t, e.Addrs())
	c, won, err := ttl.Once(ctx, other, path, 30*time.Second, nil)
	if err != nil || won || string(c.Data) != "first" {
		t.Fatalf("Once after the claimant's session closed = %+v, %v, %v; want the first claim", c, won, err)
	}
}

// TestOnceLostAnswer: the create's answer is lost (half-open link) after
// the server applied it; Once reads the node and reports the win exactly.
func TestOnceLostAnswer(t *testing.T) {
	e := ensemble(t)
	path := testPath(t)
	link, err := e.NewLink("ttl-lost")
	if err != nil {
		t.Fatal(err)
	}
	defer link.Close()
	s := testutil.Connect(t, link.Addrs())
	admin := testutil.Connect(t, e.Addrs())
	ctx := testutil.Ctx(t, time.Minute)
	if err := zkEnsure(admin, testPath(t)); err != nil {
		t.Fatal(err)
	}
	// A first claim under path, before the link is cut: in the secured
	// pass it runs the Session's squatting check of path (1 getACL, once),
	// so that the claim under test sends its create first.
	if _, won, err := ttl.Once(ctx, s, path+"/warm-up", time.Minute, nil); err != nil || !won {
		t.Fatalf("warm-up claim = %v, %v", won, err)
	}
	if err := link.HalfOpen(); err != nil {
		t.Fatal(err)
	}
	type result struct {
		won bool
		err error
	}
	done := make(chan result, 1)
	go func() {
		_, won, err := ttl.Once(ctx, s, path+"/job", time.Minute, nil)
		done <- result{won, err}
	}()
	testutil.WaitFor(t, 10*time.Second, "the create applied", func() bool {
		ok, _, _ := admin.Conn().Exists(path + "/job")
		return ok
	})
	// The lease may report the session lost right after suspended (at T -
	// lag without a reply); either state means the client noticed.
	testutil.WaitFor(t, 10*time.Second, "the client to notice", func() bool {
		st := s.State()
		return st == recipes.StateSuspended || st == recipes.StateLost
	})
	if err := link.Heal(); err != nil {
		t.Fatal(err)
	}
	if r := <-done; r.err != nil || !r.won {
		t.Fatalf("Once whose answer was lost = %v, %v; want a win", r.won, r.err)
	}
}

func zkEnsure(s *recipes.Session, path string) error {
	_, err := s.Conn().Create(path, nil, 0, testutil.ACL())
	if errors.Is(err, zk.ErrNoNode) {
		if _, err := s.Conn().Create("/zkrecipes-test", nil, 0, testutil.ACL()); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			return err
		}
		if _, err := s.Conn().Create("/zkrecipes-test/ttl", nil, 0, testutil.ACL()); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			return err
		}
		_, err = s.Conn().Create(path, nil, 0, testutil.ACL())
	}
	if errors.Is(err, zk.ErrNodeExists) {
		return nil
	}
	return err
}

// TestUnsupportedServer: a server with extended types off refuses the TTL
// node, and Once says so with ErrUnsupported.
func TestUnsupportedServer(t *testing.T) {
	e := plainServer.Start(t)
	s := testutil.Connect(t, e.Addrs())
	_, _, err := ttl.Once(testutil.Ctx(t, time.Minute), s, testPath(t), time.Minute, nil)
	if !errors.Is(err, ttl.ErrUnsupported) {
		t.Fatalf("Once on a server without TTL nodes = %v, want ErrUnsupported", err)
	}
}

// TestBadInputAndDoneCtx: arguments are validated and a done ctx sends
// nothing.
func TestBadInputAndDoneCtx(t *testing.T) {
	e := ensemble(t)
	s, counter := testutil.CountedSession(t, e.Addrs())
	ctx := testutil.Ctx(t, time.Minute)
	before := counter.Snapshot()
	for _, tc := range []struct {
		s      *recipes.Session
		path   string
		period time.Duration
		data   []byte
		want   error
	}{
		{nil, "/a", time.Second, nil, recipes.ErrNilSession},
		{s, "a", time.Second, nil, recipes.ErrInvalidPath},
		{s, "/zookeeper/a", time.Second, nil, recipes.ErrInvalidPath},
		{s, "/a", 0, nil, recipes.ErrBadArgument},
		{s, "/a", ttl.MaxTTL + time.Millisecond, nil, recipes.ErrBadArgument},
		{s, "/a", time.Second, make([]byte, recipes.DefaultMaxData), recipes.ErrDataTooLarge},
	} {
		if _, _, err := ttl.Once(ctx, tc.s, tc.path, tc.period, tc.data); !errors.Is(err, tc.want) {
			t.Errorf("Once(%q, %v, %d bytes) = %v, want %v", tc.path, tc.period, len(tc.data), err, tc.want)
		}
	}
	done, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := ttl.Once(done, s, "/a", time.Second, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("Once(done) = %v", err)
	}
	if _, err := ttl.Read(done, s, "/a"); !errors.Is(err, context.Canceled) {
		t.Errorf("Read(done) = %v", err)
	}
	if diff := counter.Snapshot().Sub(before); diff.Total() != 0 {
		t.Errorf("sent %v", diff.Requests)
	}
}
