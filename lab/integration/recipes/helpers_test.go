package recipes_test

import (
	"strings"
	"testing"

	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"github.com/zkrecipes/zkrecipes/testenv"
)

// One single-server ensemble is shared by the package's integration tests;
// each test that injects faults uses its own Link. Tests do not run in
// parallel, so the goroutine check sees only its own test.
var shared = testutil.NewShared(testenv.Config{Servers: 1})

func TestMain(m *testing.M) { testutil.Main(m, shared, quorum) }

// ensemble returns the shared ensemble and fails the test if goroutines
// running go-zookeeper or recipe code outlive it (after every
// session is closed).
func ensemble(t *testing.T) *testenv.Ensemble {
	t.Helper()
	e := shared.Start(t)
	testutil.NoLeakedGoroutines(t, testutil.Running("recipes", "lock", "rwlock", "leader", "queue"))
	return e
}

// zkServers returns the addresses of the package's ensemble, for Examples.
func zkServers() []string { return shared.Addrs() }

var (
	testLogger     = testutil.Logger
	connect        = testutil.Connect
	countedSession = testutil.CountedSession
	waitFor        = testutil.WaitFor
	rawChildren    = testutil.Children
)

func testPath(t *testing.T) string {
	return "/zkrecipes-test/" + strings.NewReplacer("/", "_", " ", "_").Replace(t.Name())
}
