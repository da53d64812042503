package rwlock_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/internal/zkcount"
	"github.com/zkrecipes/zkrecipes/recipes"
	"github.com/zkrecipes/zkrecipes/testenv"
)

// One single-server ensemble is shared by the package's integration tests;
// each test that injects faults uses its own Link. Tests do not run in
// parallel, so the goroutine check below sees only its own test.
var (
	ensOnce sync.Once
	ens     *testenv.Ensemble
	ensErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if ens != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		_ = ens.Close(ctx)
		cancel()
	}
	os.Exit(code)
}

func ensemble(t *testing.T) *testenv.Ensemble {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test: needs a ZooKeeper ensemble (testenv)")
	}
	e, err := sharedEnsemble()
	if err != nil {
		t.Fatalf("start ensemble: %v", err)
	}
	checkGoroutines(t)
	return e
}

// sharedEnsemble starts the package's ensemble on first use.
func sharedEnsemble() (*testenv.Ensemble, error) {
	ensOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		ens, ensErr = testenv.Start(ctx, testenv.Config{Servers: 1})
	})
	return ens, ensErr
}

// zkServers returns the addresses of the package's ensemble, for Examples.
func zkServers() []string {
	e, err := sharedEnsemble()
	if err != nil {
		panic(err) // examples cannot fail otherwise; tests report it properly
	}
	return e.Addrs()
}

func testLogger() *slog.Logger {
	if os.Getenv("ZKRECIPES_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

const sessionTimeout = 3 * time.Second

// connect opens a session closed at the end of the test.
func connect(t *testing.T, addrs []string, opts ...recipes.Option) *recipes.Session {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	opts = append([]recipes.Option{recipes.WithSessionTimeout(sessionTimeout), recipes.WithLogger(testLogger())}, opts...)
	s, err := recipes.Connect(ctx, addrs, opts...)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := s.Close(ctx); err != nil {
			t.Errorf("close session: %v", err)
		}
	})
	return s
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// checkGoroutines fails the test if goroutines running go-zookeeper or
// recipes code outlive it (after every session is closed).
func checkGoroutines(t *testing.T) {
	t.Helper()
	t.Cleanup(func() { // registered first: runs after the sessions' Close
		deadline := time.Now().Add(15 * time.Second)
		for {
			stacks := ourGoroutines()
			if len(stacks) == 0 {
				return
			}
			if time.Now().After(deadline) {
				t.Errorf("%d goroutines leaked:\n%s", len(stacks), strings.Join(stacks, "\n\n"))
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
}

func ourGoroutines() []string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "checkGoroutines") {
			continue
		}
		if strings.Contains(g, "github.com/go-zookeeper/zk.") ||
			strings.Contains(g, "zkrecipes/recipes.") ||
			strings.Contains(g, "zkrecipes/lock.") ||
			strings.Contains(g, "zkrecipes/rwlock.") {
			out = append(out, g)
		}
	}
	return out
}

// rawChildren lists path through s, failing the test on errors other than
// "no node".
func rawChildren(t *testing.T, s *recipes.Session, path string) []string {
	t.Helper()
	children, _, err := s.Conn().Children(path)
	if err != nil && !strings.Contains(err.Error(), "node does not exist") {
		t.Fatalf("children %s: %v", path, err)
	}
	return children
}

func testPath(t *testing.T) string {
	return "/zkrecipes-test/" + strings.NewReplacer("/", "_", " ", "_").Replace(t.Name())
}

// ensurePath creates p and its parents as persistent nodes.
func ensurePath(t *testing.T, s *recipes.Session, p string) {
	t.Helper()
	parent, _ := recipes.SplitPath(p)
	if parent != "/" {
		ensurePath(t, s, parent)
	}
	if _, err := s.Conn().Create(p, nil, 0, zk.WorldACL(zk.PermAll)); err != nil && !errors.Is(err, zk.ErrNodeExists) {
		t.Fatalf("create %s: %v", p, err)
	}
}

func countedSession(t *testing.T, addrs []string) (*recipes.Session, *zkcount.Counter) {
	c := zkcount.New()
	return connect(t, addrs, recipes.WithDialer(c.Dialer(nil))), c
}

func wantOps(t *testing.T, what string, d zkcount.Counts, want map[zkcount.Op]int64) {
	t.Helper()
	ok := len(d.Requests) == len(want)
	for op, n := range want {
		ok = ok && d.Req(op) == n
	}
	if !ok {
		t.Errorf("%s: requests %v, want %v", what, d.Requests, want)
		return
	}
	t.Logf("%s: %v, %d notifications", what, d.Requests, d.Notifications)
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
