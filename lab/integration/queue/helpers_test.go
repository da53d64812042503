package queue_test

import (
	"strings"
	"testing"

	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"github.com/zkrecipes/zkrecipes/queue"
	"github.com/zkrecipes/zkrecipes/recipes"
	"github.com/zkrecipes/zkrecipes/testenv"
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
	connect  = testutil.Connect
	ctxT     = testutil.Ctx
	waitFor  = testutil.WaitFor
	children = testutil.Children // nil when the node does not exist
)

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
