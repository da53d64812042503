package queue_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"github.com/zkrecipes/zkrecipes/lab/testenv"
	"github.com/zkrecipes/zkrecipes/queue"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// One single-server ensemble is shared by the package's integration tests
// and benchmarks; tests that expire sessions use their own Link. Tests do
// not run in parallel, so the goroutine check sees only its own test.
var shared = testutil.NewShared(testenv.Config{Servers: 1})

func TestMain(m *testing.M) { testutil.Main(m, shared) }

// ensemble returns the shared ensemble and fails the test if goroutines
// running go-zookeeper, recipes or queue code outlive it (after every
// session is closed).
func ensemble(tb testing.TB) *testenv.Ensemble {
	tb.Helper()
	e := shared.Start(tb)
	testutil.NoLeakedGoroutines(tb, testutil.Running("recipes", "queue"))
	return e
}

var (
	connect = testutil.Connect
	ctxT    = testutil.Ctx
	waitFor = testutil.WaitFor
)

// children is testutil.Children (nil when the node does not exist) for a
// session the test does not fault, robust to that session's connection
// dropping: under heavy load go-zookeeper closes a connection on which
// nothing came for 2/3 of the session timeout (2s of testutil's 3s), and
// the read in flight fails with zk.ErrConnectionClosed although the
// session lives on. It then waits for the session to be usable again and
// reads again, for up to 30 seconds; an expired or closed session still
// fails the test.
func children(tb testing.TB, s *recipes.Session, path string) []string {
	tb.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		names, _, err := s.Conn().Children(path)
		if !errors.Is(err, zk.ErrConnectionClosed) || time.Now().After(deadline) {
			if err != nil && !errors.Is(err, zk.ErrNoNode) && !strings.Contains(err.Error(), "node does not exist") {
				tb.Fatalf("children %s: %v", path, err)
			}
			return names
		}
		tb.Logf("children %s: %v; read again once the session is usable", path, err)
		waitFor(tb, 2*testutil.SessionTimeout, "the session usable again", func() bool {
			st := s.State()
			return st == recipes.StateConnected || st == recipes.StateReconnected
		})
	}
}

func testPath(tb testing.TB) string {
	return "/zkrecipes-test/queue/" + strings.NewReplacer("/", "_", " ", "_", "=", "_").Replace(tb.Name())
}

// newQueue is queue.New for arguments the test knows to be valid.
func newQueue(tb testing.TB, s *recipes.Session, path string, opts ...queue.Option) *queue.Queue {
	tb.Helper()
	q, err := queue.New(s, path, opts...)
	if err != nil {
		tb.Fatal(err)
	}
	return q
}
