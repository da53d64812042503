package interop

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/chaos/checkers"
	"github.com/zkrecipes/zkrecipes/chaos/history"
	"github.com/zkrecipes/zkrecipes/internal/zkpath"
	"github.com/zkrecipes/zkrecipes/lab/internal/peers"
	"github.com/zkrecipes/zkrecipes/recipes"
	"github.com/zkrecipes/zkrecipes/testenv"
)

// sessionTimeout is every client's, Go and peer alike.
const sessionTimeout = 4 * time.Second

var (
	shared    *testenv.Ensemble
	sharedErr error
	once      sync.Once
)

func TestMain(m *testing.M) {
	code := m.Run()
	if shared != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		_ = shared.Close(ctx)
		cancel()
	}
	os.Exit(code)
}

// ensemble returns the package's 3-server ensemble, started on first use.
func ensemble(t *testing.T) *testenv.Ensemble {
	t.Helper()
	if testing.Short() {
		t.Skip("needs a real ZooKeeper ensemble")
	}
	once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		shared, sharedErr = testenv.Start(ctx, testenv.Config{})
	})
	if sharedErr != nil {
		t.Fatalf("start ensemble: %v", sharedErr)
	}
	return shared
}

func ctxFor(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// releases returns the peer releases the tests run against: the one
// ZKRECIPES_PEERS names ("debian12" or "testing"), else every one of
// peers.Releases.
func releases(t *testing.T) []peers.Release {
	t.Helper()
	name := os.Getenv(peers.EnvRelease)
	if name == "" {
		return peers.Releases
	}
	r, err := peers.Lookup(name)
	if err != nil {
		t.Fatalf("%s: %v", peers.EnvRelease, err)
	}
	return []peers.Release{r}
}

// forEachRelease runs fn as a subtest per peer release, named after it
// (TestMutexWithCuratorMutex/debian12 runs Curator 5.4, .../testing Curator
// 5.7.1): every interop test runs against each release of Curator and
// kazoo.
func forEachRelease(t *testing.T, fn func(t *testing.T, r peers.Release)) {
	for _, r := range releases(t) {
		t.Run(r.Name, func(t *testing.T) {
			t.Logf("peers: %v", r)
			fn(t, r)
		})
	}
}

// peerReady makes sure a peer of kind and release r can start: it builds
// r's image when missing (once per machine) and skips the test only when
// a runtime on this machine is missing, saying what to install.
func peerReady(t *testing.T, r peers.Release, kind peers.Kind) {
	t.Helper()
	if err := r.EnsureImage(ctxFor(t, 15*time.Minute), nil); err != nil {
		t.Fatalf("peer image for %v: %v", r, err)
	}
	if err := r.Available(kind); err != nil {
		t.Skipf("%v (the README's test command installs it)", err)
	}
}

// startPeer starts a peer of kind and release r on addrs, skipping the test
// when its runtime is missing, and closes it at cleanup.
func startPeer(t *testing.T, r peers.Release, kind peers.Kind, addrs string) *peers.Peer {
	t.Helper()
	peerReady(t, r, kind)
	p, err := r.Start(ctxFor(t, 2*time.Minute), kind, addrs, sessionTimeout)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// session connects a Go session through addrs and closes it at cleanup.
func session(t *testing.T, addrs []string) *recipes.Session {
	t.Helper()
	s, err := recipes.Connect(ctxFor(t, time.Minute), addrs, recipes.WithSessionTimeout(sessionTimeout), recipes.WithEnsembleTiming(testenv.DefaultTickTime, testenv.SyncLimit))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = s.CloseContext(ctx)
	})
	return s
}

// uniquePath returns a fresh path for one test.
func uniquePath(t *testing.T, what string) string {
	return fmt.Sprintf("/interop/%s-%d", what, time.Now().UnixNano())
}

// holdings gathers the holdings of every client — Go ones recorded directly,
// peers' from their HOLD lines — for chaos' checkers.
type holdings struct{ rec *history.Recorder }

func newHistory() *holdings { return &holdings{rec: history.NewRecorder()} }

func (h *holdings) hold(client, key, mode string, t0, t1 int64) {
	h.rec.Add(history.Event{Client: client, Kind: history.KindAcquired, Key: key, Mode: mode, Time: t0})
	h.rec.Add(history.Event{Client: client, Kind: history.KindReleased, Key: key, Time: t1})
}

func (h *holdings) peer(name, key string, p *peers.Peer, mode func(peers.Hold) string) {
	for _, x := range p.Holds() {
		h.hold(name, key, mode(x), x.T0, x.T1)
	}
}

// check runs checker over the history and fails the test on a violation or
// when it had fewer than want holdings to look at.
func (h *holdings) check(t *testing.T, c checkers.Checker, want int) {
	t.Helper()
	hist := h.rec.History()
	sort.SliceStable(hist.Events, func(i, j int) bool { return hist.Events[i].Time < hist.Events[j].Time })
	r := c.Run(hist)
	if !r.OK() {
		t.Fatalf("%s violated: %+v", c.Name, r.Violations)
	}
	if r.Checked < want {
		t.Fatalf("%s checked %d holdings, want at least %d", c.Name, r.Checked, want)
	}
}

// increment adds one to the counter at path with a version-checked write,
// as the peers do, so that an overlapping writer fails with ErrBadVersion.
func increment(s *recipes.Session, path string) (int64, error) {
	data, st, err := s.Conn().Get(path)
	if err != nil {
		return 0, err
	}
	v, err := strconv.ParseInt(string(data), 10, 64)
	if err != nil {
		return 0, err
	}
	v++
	_, err = s.Conn().Set(path, []byte(strconv.FormatInt(v, 10)), st.Version)
	return v, err
}

// ensureCounter creates the counter at path with value 0.
func ensureCounter(t *testing.T, s *recipes.Session, path string) {
	t.Helper()
	parent, _ := zkpath.Split(path)
	if parent != "/" {
		if _, err := s.Conn().Create(parent, nil, 0, zk.WorldACL(zk.PermAll)); err != nil && err != zk.ErrNodeExists {
			t.Fatal(err)
		}
	}
	if _, err := s.Conn().Create(path, []byte("0"), 0, zk.WorldACL(zk.PermAll)); err != nil && err != zk.ErrNodeExists {
		t.Fatal(err)
	}
}

// counterValue reads the counter at path.
func counterValue(t *testing.T, s *recipes.Session, path string) int64 {
	t.Helper()
	data, _, err := s.Conn().Get(path)
	if err != nil {
		t.Fatal(err)
	}
	v, err := strconv.ParseInt(string(data), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// noChildren fails the test if any node is left under path: every client
// released, so every contender node must be gone.
func noChildren(t *testing.T, s *recipes.Session, path string) {
	t.Helper()
	children, _, err := s.Conn().Children(path)
	if err != nil && err != zk.ErrNoNode {
		t.Fatal(err)
	}
	if len(children) != 0 {
		t.Fatalf("nodes left under %s: %v", path, children)
	}
}

// inWindow fails the test unless every hold lies within [begin, end] of the
// Go side's CLOCK_MONOTONIC: proof that the peer's clock is the same clock,
// without which an overlap check across languages would prove nothing.
func inWindow(t *testing.T, name string, holds []peers.Hold, begin, end int64) {
	t.Helper()
	for _, x := range holds {
		if x.T0 < begin || x.T1 > end {
			t.Fatalf("%s hold [%d, %d] outside the run [%d, %d]: not the same monotonic clock", name, x.T0, x.T1, begin, end)
		}
	}
}
