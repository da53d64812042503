package lock_test

import (
	"strings"
	"testing"

	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"github.com/zkrecipes/zkrecipes/lock"
	"github.com/zkrecipes/zkrecipes/recipes"
	"github.com/zkrecipes/zkrecipes/testenv"
)

// One single-server ensemble is shared by the package's integration tests;
// each test that injects faults uses its own Link. Tests do not run in
// parallel, so the goroutine check sees only its own test.
var shared = testutil.NewShared(testenv.Config{Servers: 1})

func TestMain(m *testing.M) { testutil.Main(m, shared) }

// ensemble returns the shared ensemble and fails the test if goroutines
// running go-zookeeper, recipes or lock code outlive it (after every
// session is closed).
func ensemble(t *testing.T) *testenv.Ensemble {
	t.Helper()
	e := shared.Start(t)
	testutil.NoLeakedGoroutines(t, testutil.Running("recipes", "lock"))
	return e
}

// zkServers returns the addresses of the package's ensemble, for Examples.
func zkServers() []string { return shared.Addrs() }

const sessionTimeout = testutil.SessionTimeout

var (
	connect     = testutil.Connect
	waitFor     = testutil.WaitFor
	rawChildren = testutil.Children
)

func testPath(t *testing.T) string {
	return "/zkrecipes-test/" + strings.NewReplacer("/", "_", " ", "_").Replace(t.Name())
}

// newMutex is lock.New for arguments the test knows to be valid.
func newMutex(t *testing.T, s *recipes.Session, path string, opts ...lock.Option) *lock.Mutex {
	t.Helper()
	m, err := lock.New(s, path, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// newSemaphore is lock.NewSemaphore for arguments the test knows to be
// valid.
func newSemaphore(t *testing.T, s *recipes.Session, path string, n int, opts ...lock.Option) *lock.Semaphore {
	t.Helper()
	sem, err := lock.NewSemaphore(s, path, n, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return sem
}
