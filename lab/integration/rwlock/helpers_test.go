package rwlock_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/internal/zkpath"
	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"github.com/zkrecipes/zkrecipes/recipes"
	"github.com/zkrecipes/zkrecipes/rwlock"
	"github.com/zkrecipes/zkrecipes/testenv"
)

// One single-server ensemble is shared by the package's integration tests;
// each test that injects faults uses its own Link. Tests do not run in
// parallel, so the goroutine check sees only its own test.
var shared = testutil.NewShared(testenv.Config{Servers: 1})

func TestMain(m *testing.M) { testutil.Main(m, shared) }

// ensemble returns the shared ensemble and fails the test if goroutines
// running go-zookeeper, recipes, lock or rwlock code outlive it (after
// every session is closed).
func ensemble(t *testing.T) *testenv.Ensemble {
	t.Helper()
	e := shared.Start(t)
	testutil.NoLeakedGoroutines(t, testutil.Running("recipes", "lock", "rwlock"))
	return e
}

// zkServers returns the addresses of the package's ensemble, for Examples.
func zkServers() []string { return shared.Addrs() }

var (
	connect        = testutil.Connect
	countedSession = testutil.CountedSession
	wantOps        = testutil.WantOps
	testCtx        = testutil.Ctx
	waitFor        = testutil.WaitFor
	rawChildren    = testutil.Children
)

func testPath(t *testing.T) string {
	return "/zkrecipes-test/" + strings.NewReplacer("/", "_", " ", "_").Replace(t.Name())
}

// ensurePath creates p and its parents as persistent nodes.
func ensurePath(t *testing.T, s *recipes.Session, p string) {
	t.Helper()
	parent, _ := zkpath.Split(p)
	if parent != "/" {
		ensurePath(t, s, parent)
	}
	if _, err := s.Conn().Create(p, nil, 0, testutil.ACL()); err != nil && !errors.Is(err, zk.ErrNodeExists) {
		t.Fatalf("create %s: %v", p, err)
	}
}

// async runs f on a goroutine; the channel gets its result.
func async(f func() error) <-chan error {
	ch := make(chan error, 1)
	go func() { ch <- f() }()
	return ch
}

// recv waits for a result of async, failing the test after d.
func recv(t *testing.T, ch <-chan error, d time.Duration, what string) error {
	t.Helper()
	select {
	case err := <-ch:
		return err
	case <-time.After(d):
		t.Fatalf("timed out after %v waiting for %s", d, what)
		return nil
	}
}

// pending reports whether ch has no result yet.
func pending(ch <-chan error) bool { return len(ch) == 0 }

// newRW is rwlock.New for arguments the test knows to be valid.
func newRW(t *testing.T, s *recipes.Session, path string, opts ...rwlock.Option) *rwlock.RWMutex {
	t.Helper()
	m, err := rwlock.New(s, path, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return m
}
