package persistent_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"github.com/zkrecipes/zkrecipes/persistent"
	"github.com/zkrecipes/zkrecipes/recipes"
	"github.com/zkrecipes/zkrecipes/testenv"
)

// One single-server ensemble is shared by the package's integration tests;
// tests that expire sessions use their own Link. Tests do not run in
// parallel, so the goroutine check sees only its own test.
var shared = testutil.NewShared(testenv.Config{Servers: 1})

func TestMain(m *testing.M) { testutil.Main(m, shared) }

// ensemble returns the shared ensemble and fails the test if goroutines
// running go-zookeeper, recipes or persistent code outlive it (after every
// session is closed).
func ensemble(tb testing.TB) *testenv.Ensemble {
	tb.Helper()
	e := shared.Start(tb)
	testutil.NoLeakedGoroutines(tb, testutil.Running("recipes", "persistent"))
	return e
}

// zkServers returns the addresses of the package's ensemble, for Examples.
func zkServers() []string { return shared.Addrs() }

const sessionTimeout = testutil.SessionTimeout

var (
	connect  = testutil.Connect
	ctxT     = testutil.Ctx
	waitFor  = testutil.WaitFor
	children = testutil.Children // nil when the node does not exist
)

func testPath(tb testing.TB) string {
	return "/zkrecipes-test/persistent/" + strings.NewReplacer("/", "_", " ", "_", "=", "_").Replace(tb.Name())
}

// newNode is persistent.New for arguments the test knows to be valid.
func newNode(tb testing.TB, s *recipes.Session, path string, opts ...persistent.Option) *persistent.Node {
	tb.Helper()
	n, err := persistent.New(s, path, opts...)
	if err != nil {
		tb.Fatal(err)
	}
	return n
}

// started is newNode + Start, with Leave at cleanup.
func started(tb testing.TB, ctx context.Context, s *recipes.Session, path string, opts ...persistent.Option) *persistent.Node {
	tb.Helper()
	n := newNode(tb, s, path, opts...)
	if err := n.Start(ctx); err != nil {
		tb.Fatalf("Start %s: %v", path, err)
	}
	tb.Cleanup(func() { _ = n.Leave(context.Background()) })
	return n
}

// private connects a session through a link of its own, so that the test
// can cut or expire it alone.
func private(tb testing.TB, e *testenv.Ensemble, name string, opts ...recipes.Option) (*recipes.Session, *testenv.Link) {
	tb.Helper()
	l, err := e.NewLink(name)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = l.Close() })
	return connect(tb, l.Addrs(), opts...), l
}

// stat reads path through s: its data and stat, or found false.
func stat(tb testing.TB, s *recipes.Session, path string) (data []byte, st *zk.Stat, found bool) {
	tb.Helper()
	data, st, err := s.Conn().Get(path)
	if errors.Is(err, zk.ErrNoNode) {
		return nil, nil, false
	}
	if err != nil {
		tb.Fatalf("get %s: %v", path, err)
	}
	return data, st, true
}

// waitNode waits until path exists, owned by session sid (any owner when
// sid is 0), with data want (any when want is nil), and returns its stat.
func waitNode(tb testing.TB, s *recipes.Session, path string, sid int64, want []byte) *zk.Stat {
	tb.Helper()
	var st *zk.Stat
	waitFor(tb, 10*time.Second, "node "+path, func() bool {
		data, got, ok := stat(tb, s, path)
		if !ok || sid != 0 && got.EphemeralOwner != sid || want != nil && string(data) != string(want) {
			return false
		}
		st = got
		return true
	})
	return st
}

// waitDone waits until ctx is done and returns its cause.
func waitDone(tb testing.TB, ctx context.Context, d time.Duration, what string) error {
	tb.Helper()
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-time.After(d):
		tb.Fatalf("timed out after %v waiting for %s", d, what)
		return nil
	}
}

// waitPresent waits until n has a Present context that is not done, other
// than old, and returns it.
func waitPresent(tb testing.TB, n *persistent.Node, old context.Context) context.Context {
	tb.Helper()
	var p context.Context
	waitFor(tb, 15*time.Second, "the node present again", func() bool {
		p = n.Present()
		return p != old && p.Err() == nil
	})
	return p
}

// mkdirs creates path and its missing parents as persistent nodes.
func mkdirs(tb testing.TB, s *recipes.Session, path string) {
	tb.Helper()
	for i := 1; i <= len(path); i++ {
		if i < len(path) && path[i] != '/' {
			continue
		}
		_, err := s.Conn().Create(path[:i], nil, 0, testutil.ACL())
		if err != nil && !errors.Is(err, zk.ErrNodeExists) {
			tb.Fatalf("create %s: %v", path[:i], err)
		}
	}
}
