package twophase_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"github.com/zkrecipes/zkrecipes/recipes"
	"github.com/zkrecipes/zkrecipes/testenv"
	"github.com/zkrecipes/zkrecipes/twophase"
)

// One single-server ensemble is shared by the package's integration tests;
// tests that inject faults use their own Link. Tests do not run in
// parallel, so the goroutine check sees only its own test's goroutines.
var shared = testutil.NewShared(testenv.Config{Servers: 1})

func TestMain(m *testing.M) { testutil.Main(m, shared) }

func ensemble(t *testing.T) *testenv.Ensemble {
	t.Helper()
	e := shared.Start(t)
	checkGoroutines(t)
	return e
}

const sessionTimeout = 2 * time.Second

// connect opens a session closed at the end of the test (closing it
// earlier is fine).
func connect(t *testing.T, addrs []string) *recipes.Session {
	t.Helper()
	return testutil.Connect(t, addrs, recipes.WithSessionTimeout(sessionTimeout))
}

var (
	closeSession = testutil.CloseSession
	testCtx      = testutil.Ctx
	waitFor      = testutil.WaitFor
)

// checkGoroutines fails the test if goroutines running go-zookeeper,
// recipes or twophase code outlive it (after every session is closed).
func checkGoroutines(t *testing.T) {
	t.Helper()
	testutil.NoLeakedGoroutines(t, testutil.Running("recipes", "twophase"))
}

var rootSeq atomic.Int64

// testRoot returns a root path of its own for each call (tests may run
// with -count > 1 against the same ensemble).
func testRoot(t *testing.T) string {
	return fmt.Sprintf("/zkrecipes-test/twophase/%s-%d",
		strings.NewReplacer("/", "_", " ", "_", "=", "_").Replace(t.Name()), rootSeq.Add(1))
}

func exists(t *testing.T, s *recipes.Session, path string) bool {
	t.Helper()
	ok, _, err := s.Conn().Exists(path)
	if err != nil {
		t.Fatalf("exists %s: %v", path, err)
	}
	return ok
}

// site is a participant run by a test: it streams proposals, votes with
// vote(proposal) (0: do not vote), awaits each decision and finishes.
type site struct {
	name string
	s    *recipes.Session
	p    *twophase.Site

	mu        sync.Mutex
	proposals map[string]*twophase.Proposal
	votes     map[string]twophase.Decision
	results   map[string]twophase.Decision
	errs      []error
	changed   chan struct{}

	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// startSite runs a participant for name on session s until the test ends
// (or stop).
func startSite(t *testing.T, s *recipes.Session, root, name string, vote func(*twophase.Proposal) twophase.Decision, opts ...twophase.SiteOption) *site {
	t.Helper()
	p, err := twophase.NewSite(s, root, name, opts...)
	if err != nil {
		t.Fatalf("participant %s: %v", name, err)
	}
	st := &site{
		name: name, s: s, p: p,
		proposals: map[string]*twophase.Proposal{}, votes: map[string]twophase.Decision{},
		results: map[string]twophase.Decision{}, changed: make(chan struct{}),
	}
	ctx, cancel := context.WithCancel(context.Background())
	st.cancel = cancel
	t.Cleanup(st.stop)
	st.wg.Go(func() {
		for prop := range st.p.Run(ctx).C {
			st.record(func() { st.proposals[prop.TxID()] = prop })
			st.wg.Go(func() {
				if v := vote(prop); v != 0 {
					err := prop.Vote(ctx, v)
					st.record(func() {
						if err != nil {
							st.errs = append(st.errs, err)
						} else {
							st.votes[prop.TxID()] = v
						}
					})
				}
				d, err := prop.Await(ctx)
				if err == nil {
					err = prop.Finish(ctx)
				}
				st.record(func() {
					if err != nil {
						if ctx.Err() == nil {
							st.errs = append(st.errs, err)
						}
						return
					}
					st.results[prop.TxID()] = d
				})
			})
		}
	})
	return st
}

func (st *site) record(f func()) {
	st.mu.Lock()
	f()
	close(st.changed)
	st.changed = make(chan struct{})
	st.mu.Unlock()
}

// stop cancels the participant's work and waits for its goroutines.
func (st *site) stop() {
	st.cancel()
	st.wg.Wait()
}

func (st *site) proposal(tx string) *twophase.Proposal {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.proposals[tx]
}

func (st *site) result(tx string) (twophase.Decision, bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	d, ok := st.results[tx]
	return d, ok
}

func (st *site) voted(tx string) (twophase.Decision, bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	d, ok := st.votes[tx]
	return d, ok
}

func (st *site) errors() []error {
	st.mu.Lock()
	defer st.mu.Unlock()
	return append([]error(nil), st.errs...)
}

// waitSite waits until cond(site) holds, re-checking at each change.
func waitSite(t *testing.T, st *site, d time.Duration, what string, cond func() bool) {
	t.Helper()
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		st.mu.Lock()
		ch := st.changed
		st.mu.Unlock()
		if cond() {
			return
		}
		select {
		case <-ch:
		case <-timer.C:
			t.Fatalf("site %s: timed out after %v waiting for %s", st.name, d, what)
		}
	}
}

func commitAll(*twophase.Proposal) twophase.Decision { return twophase.Commit }

// checkInvariants reads transaction tx straight from ZooKeeper and checks
// the protocol's invariants: one decision (the node), every result given
// equals it, commit only if every site's vote node says commit; want (if
// not 0) is the expected decision.
func checkInvariants(t *testing.T, s *recipes.Session, root, tx string, sites []string, want twophase.Decision, results map[string]twophase.Decision) {
	t.Helper()
	txPath := root + "/" + tx
	data, _, err := s.Conn().Get(txPath + "/decision")
	if err != nil {
		t.Fatalf("%s: read decision: %v", tx, err)
	}
	head, _, _ := strings.Cut(string(data), "\n")
	var d twophase.Decision
	switch head {
	case "commit":
		d = twophase.Commit
	case "abort":
		d = twophase.Abort
	default:
		t.Fatalf("%s: decision node holds %q", tx, data)
	}
	if want != 0 && d != want {
		t.Errorf("%s: decision %v (%q), want %v", tx, d, data, want)
	}
	for who, r := range results {
		if r != d {
			t.Errorf("%s: %s ended with %v, decision node says %v", tx, who, r, d)
		}
	}
	if d == twophase.Commit {
		for _, site := range sites {
			v, _, err := s.Conn().Get(txPath + "/" + site + "/vote")
			if errors.Is(err, zk.ErrNoNode) {
				t.Errorf("%s: committed without a vote of %s", tx, site)
				continue
			}
			if err != nil {
				t.Fatalf("%s: read vote of %s: %v", tx, site, err)
			}
			if string(v) != "commit" {
				t.Errorf("%s: committed with %s voting %q", tx, site, v)
			}
		}
	}
}

func errorsIs(err, target error) bool { return errors.Is(err, target) }

// second returns the error of a two-result call.
func second[T any](_ T, err error) error { return err }

// newCoordinator is twophase.NewCoordinator for arguments the test knows to
// be valid.
func newCoordinator(tb testing.TB, s *recipes.Session, root string, opts ...twophase.CoordinatorOption) *twophase.Coordinator {
	tb.Helper()
	c, err := twophase.NewCoordinator(s, root, opts...)
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// newParticipant is twophase.NewSite for arguments the test knows
// to be valid.
func newParticipant(tb testing.TB, s *recipes.Session, root, site string, opts ...twophase.SiteOption) *twophase.Site {
	tb.Helper()
	p, err := twophase.NewSite(s, root, site, opts...)
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

// decideCommit runs tx's Decide and fails the test unless it returns
// Commit.
func decideCommit(ctx context.Context, t *testing.T, tx *twophase.Tx) twophase.Decision {
	t.Helper()
	d, err := tx.Decide(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if d != twophase.Commit {
		t.Fatalf("decision %v, want commit", d)
	}
	return d
}
