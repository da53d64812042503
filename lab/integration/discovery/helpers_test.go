package discovery_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/zkrecipes/discovery"
	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"github.com/zkrecipes/zkrecipes/recipes"
	"github.com/zkrecipes/zkrecipes/testenv"
)

// One single-server ensemble is shared by the package's integration tests
// and Examples; tests that expire sessions use their own Link. Tests do
// not run in parallel, so the goroutine check sees only its own test.
var shared = testutil.NewShared(testenv.Config{Servers: 1})

func TestMain(m *testing.M) { testutil.Main(m, shared) }

// ensemble returns the shared ensemble and fails the test if goroutines
// running go-zookeeper, recipes or discovery code outlive it (after every
// session is closed).
func ensemble(tb testing.TB) *testenv.Ensemble {
	tb.Helper()
	e := shared.Start(tb)
	testutil.NoLeakedGoroutines(tb, testutil.Running("recipes", "discovery"))
	return e
}

// zkServers returns the addresses of the package's ensemble, for Examples.
func zkServers() []string { return shared.Addrs() }

var (
	connect = testutil.Connect
	ctxT    = testutil.Ctx
	waitFor = testutil.WaitFor
)

// basePath returns a fresh base path for one test (fresh for every run
// of it, as with -count).
func basePath(tb testing.TB) string {
	return fmt.Sprintf("/zkrecipes-test/discovery/%s-%d", strings.NewReplacer("/", "_", " ", "_", "=", "_").Replace(tb.Name()), time.Now().UnixNano())
}

// newDiscovery is discovery.New for arguments the test knows to be valid.
func newDiscovery(tb testing.TB, s *recipes.Session, base string) *discovery.Discovery {
	tb.Helper()
	d, err := discovery.New(s, base)
	if err != nil {
		tb.Fatal(err)
	}
	return d
}

// register registers inst and fails the test on an error.
func register(tb testing.TB, d *discovery.Discovery, inst discovery.Instance) *discovery.Registration {
	tb.Helper()
	r, err := d.Register(ctxT(tb, time.Minute), inst)
	if err != nil {
		tb.Fatal(err)
	}
	return r
}

// node reads path through s's connection: its data and stat, nil when
// there is no node.
func node(tb testing.TB, s *recipes.Session, path string) ([]byte, *zk.Stat) {
	tb.Helper()
	data, st, err := s.Conn().Get(path)
	if errors.Is(err, zk.ErrNoNode) {
		return nil, nil
	}
	if err != nil {
		tb.Fatalf("get %s: %v", path, err)
	}
	return data, st
}

// ids returns the ids of instances, in order.
func ids(insts []discovery.Instance) string {
	var s []string
	for _, i := range insts {
		s = append(s, i.ID)
	}
	return strings.Join(s, ",")
}

// waitInstances waits until p's usable instances have exactly the ids
// want (comma separated, in order).
func waitInstances(tb testing.TB, p *watched, want string) []discovery.Instance {
	tb.Helper()
	ctx := ctxT(tb, 30*time.Second)
	for {
		insts := p.Instances()
		if ids(insts) == want {
			return insts
		}
		select {
		case _, ok := <-p.st.C: // a change since Instances, or one before
			if !ok {
				tb.Fatalf("provider of %s stopped with [%s], want [%s] (err %v)", p.Name(), ids(insts), want, p.st.Err())
			}
		case <-ctx.Done():
			tb.Fatalf("provider of %s has [%s], want [%s]", p.Name(), ids(insts), want)
		}
	}
}

// waitPort waits until p's usable instance id has port port.
func waitPort(tb testing.TB, p *watched, id string, port int) {
	tb.Helper()
	ctx := ctxT(tb, 30*time.Second)
	for {
		for _, inst := range p.Instances() {
			if inst.ID == id && inst.Port == port {
				return
			}
		}
		select {
		case _, ok := <-p.st.C:
			if !ok {
				tb.Fatalf("provider of %s stopped before %s had port %d (err %v)", p.Name(), id, port, p.st.Err())
			}
		case <-ctx.Done():
			tb.Fatalf("provider of %s: %s never had port %d", p.Name(), id, port)
		}
	}
}
