package group_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/group"
	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"github.com/zkrecipes/zkrecipes/recipes"
	"github.com/zkrecipes/zkrecipes/testenv"
)

// One single-server ensemble is shared by the package's integration tests;
// tests that cut or expire sessions use their own Link. Tests do not run in
// parallel, so the goroutine check sees only its own test.
var shared = testutil.NewShared(testenv.Config{Servers: 1})

func TestMain(m *testing.M) { testutil.Main(m, shared) }

// ensemble returns the shared ensemble and fails the test if goroutines
// running go-zookeeper, recipes, persistent or group code outlive it
// (after every session is closed).
func ensemble(tb testing.TB) *testenv.Ensemble {
	tb.Helper()
	e := shared.Start(tb)
	testutil.NoLeakedGoroutines(tb, testutil.Running("recipes", "persistent", "group"))
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
	return "/zkrecipes-test/group/" + strings.NewReplacer("/", "_", " ", "_", "=", "_").Replace(tb.Name())
}

// join is group.Join for arguments the test knows to be valid, with Leave
// at cleanup.
func join(tb testing.TB, ctx context.Context, s *recipes.Session, path, id string, opts ...group.Option) *group.Member {
	tb.Helper()
	m, err := group.Join(ctx, s, path, id, opts...)
	if err != nil {
		tb.Fatalf("join %s as %s: %v", path, id, err)
	}
	tb.Cleanup(func() { _ = m.Leave(context.Background()) })
	return m
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

// members is group.Members, failing the test on error.
func members(tb testing.TB, ctx context.Context, s *recipes.Session, path string, opts ...group.Option) group.Snapshot {
	tb.Helper()
	snap, err := group.Members(ctx, s, path, opts...)
	if err != nil {
		tb.Fatalf("members of %s: %v", path, err)
	}
	return snap
}

// next receives the next Snapshot of w within d.
func next(tb testing.TB, w *recipes.Stream[group.Snapshot], d time.Duration) group.Snapshot {
	tb.Helper()
	select {
	case snap, ok := <-w.C:
		if !ok {
			tb.Fatalf("watch closed: %v", w.Err())
		}
		return snap
	case <-time.After(d):
		tb.Fatalf("no snapshot within %v", d)
		return nil
	}
}

// until receives Snapshots of w until one satisfies ok (within d).
func until(tb testing.TB, w *recipes.Stream[group.Snapshot], d time.Duration, what string, ok func(group.Snapshot) bool) group.Snapshot {
	tb.Helper()
	deadline := time.After(d)
	var last group.Snapshot
	for {
		select {
		case snap, open := <-w.C:
			if !open {
				tb.Fatalf("watch closed waiting for %s: %v", what, w.Err())
			}
			if ok(snap) {
				return snap
			}
			last = snap
		case <-deadline:
			tb.Fatalf("no snapshot with %s within %v; last %v", what, d, last.IDs())
			return nil
		}
	}
}

// ids reports whether snap's ids are exactly want (sorted).
func ids(snap group.Snapshot, want ...string) bool {
	return slices.Equal(snap.IDs(), want)
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
