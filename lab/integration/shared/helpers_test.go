package shared_test

import (
	"strings"
	"testing"

	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"github.com/zkrecipes/zkrecipes/recipes"
	"github.com/zkrecipes/zkrecipes/shared"
	"github.com/zkrecipes/zkrecipes/testenv"
)

// One single-server ensemble is shared by the package's tests; tests that
// cut connections use their own Link. Tests do not run in parallel, so the
// goroutine check sees only its own test.
var sharedEnsemble = testutil.NewShared(testenv.Config{Servers: 1})

func TestMain(m *testing.M) { testutil.Main(m, sharedEnsemble) }

// ensemble returns the shared ensemble and fails the test if goroutines
// running go-zookeeper, recipes or shared code outlive it.
func ensemble(tb testing.TB) *testenv.Ensemble {
	tb.Helper()
	e := sharedEnsemble.Start(tb)
	testutil.NoLeakedGoroutines(tb, testutil.Running("recipes", "shared"))
	return e
}

var (
	connect = testutil.Connect
	ctxT    = testutil.Ctx
	waitFor = testutil.WaitFor
)

func testPath(tb testing.TB) string {
	return "/zkrecipes-test/shared/" + strings.NewReplacer("/", "_", " ", "_", "=", "_").Replace(tb.Name())
}

func newCount(tb testing.TB, s *recipes.Session, path string, seed int32) *shared.Count {
	tb.Helper()
	c, err := shared.NewCount(s, path, seed)
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

func newValue(tb testing.TB, s *recipes.Session, path string, seed []byte) *shared.Value {
	tb.Helper()
	v, err := shared.NewValue(s, path, seed)
	if err != nil {
		tb.Fatal(err)
	}
	return v
}
