package observe_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"github.com/zkrecipes/zkrecipes/recipes"
	"github.com/zkrecipes/zkrecipes/testenv"
)

// One single-server ensemble is shared by the package's tests, which do
// not run in parallel; those that inject faults use a Link of their own.
var shared = testutil.NewShared(testenv.Config{Servers: 1})

func TestMain(m *testing.M) { testutil.Main(m, shared) }

// ensemble returns the shared ensemble and fails the test if goroutines of
// go-zookeeper or of the recipes it uses outlive it.
func ensemble(t *testing.T) *testenv.Ensemble {
	t.Helper()
	e := shared.Start(t)
	testutil.NoLeakedGoroutines(t, testutil.Running("recipes", "lock", "rwlock", "leader", "queue", "observe"))
	return e
}

var (
	connect = testutil.Connect
	waitFor = testutil.WaitFor
)

func testPath(t *testing.T) string {
	return "/zkrecipes-test/" + strings.NewReplacer("/", "_", " ", "_").Replace(t.Name())
}

// recorder is a recipes.Observer keeping every event, safe for concurrent
// use.
type recorder struct {
	mu       sync.Mutex
	calls    []recipes.CallEvent
	holdings []recipes.HoldingEvent
	states   []recipes.StateChange
	leases   []recipes.LeaseEvent
}

func (r *recorder) ObserveCall(e recipes.CallEvent) {
	r.mu.Lock()
	r.calls = append(r.calls, e)
	r.mu.Unlock()
}

func (r *recorder) ObserveHolding(e recipes.HoldingEvent) {
	r.mu.Lock()
	r.holdings = append(r.holdings, e)
	r.mu.Unlock()
}

func (r *recorder) ObserveState(e recipes.StateChange) {
	r.mu.Lock()
	r.states = append(r.states, e)
	r.mu.Unlock()
}

func (r *recorder) ObserveLease(e recipes.LeaseEvent) {
	r.mu.Lock()
	r.leases = append(r.leases, e)
	r.mu.Unlock()
}

// ops returns the calls seen so far, counted by op name.
func (r *recorder) ops() map[string]int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	m := make(map[string]int64)
	for _, c := range r.calls {
		m[c.Op]++
	}
	return m
}

func (r *recorder) snapshot() ([]recipes.CallEvent, []recipes.HoldingEvent, []recipes.StateChange, []recipes.LeaseEvent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]recipes.CallEvent(nil), r.calls...), append([]recipes.HoldingEvent(nil), r.holdings...),
		append([]recipes.StateChange(nil), r.states...), append([]recipes.LeaseEvent(nil), r.leases...)
}

// sawState reports whether the observer has seen a change to st.
func (r *recorder) sawState(st recipes.State) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range r.states {
		if c.State == st {
			return true
		}
	}
	return false
}

// holdingsOf returns the holding events of kind.
func (r *recorder) holdingsOf(kind string) []recipes.HoldingEvent {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []recipes.HoldingEvent
	for _, h := range r.holdings {
		if h.Kind == kind {
			out = append(out, h)
		}
	}
	return out
}
