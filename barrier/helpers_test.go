package barrier_test

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

	"github.com/zkrecipes/zkrecipes/recipes"
	"github.com/zkrecipes/zkrecipes/testenv"
)

// One single-server ensemble is shared by the package's integration tests
// and benchmarks; tests that expire sessions use their own Link. Tests do
// not run in parallel, so the goroutine check sees only its own test.
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

func ensemble(tb testing.TB) *testenv.Ensemble {
	tb.Helper()
	if testing.Short() {
		tb.Skip("integration test: needs a ZooKeeper ensemble (testenv)")
	}
	ensOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		ens, ensErr = testenv.Start(ctx, testenv.Config{Servers: 1})
	})
	if ensErr != nil {
		tb.Fatalf("start ensemble: %v", ensErr)
	}
	checkGoroutines(tb)
	return ens
}

func testLogger() *slog.Logger {
	if os.Getenv("ZKRECIPES_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

const sessionTimeout = 3 * time.Second

// connect opens a session closed at the end of the test.
func connect(tb testing.TB, addrs []string, opts ...recipes.Option) *recipes.Session {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	opts = append([]recipes.Option{recipes.WithSessionTimeout(sessionTimeout), recipes.WithLogger(testLogger())}, opts...)
	s, err := recipes.Connect(ctx, addrs, opts...)
	if err != nil {
		tb.Fatalf("connect: %v", err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := s.Close(ctx); err != nil {
			tb.Errorf("close session: %v", err)
		}
	})
	return s
}

func ctxT(tb testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	tb.Cleanup(cancel)
	return ctx
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(tb testing.TB, d time.Duration, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// checkGoroutines fails the test if goroutines running go-zookeeper,
// recipes or barrier code outlive it (after every session is closed).
func checkGoroutines(tb testing.TB) {
	tb.Helper()
	tb.Cleanup(func() { // registered first: runs after the sessions' Close
		deadline := time.Now().Add(15 * time.Second)
		for {
			stacks := ourGoroutines()
			if len(stacks) == 0 {
				return
			}
			if time.Now().After(deadline) {
				tb.Errorf("%d goroutines leaked:\n%s", len(stacks), strings.Join(stacks, "\n\n"))
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
			strings.Contains(g, "zkrecipes/barrier.") {
			out = append(out, g)
		}
	}
	return out
}

// children lists path raw, nil when it does not exist.
func children(tb testing.TB, s *recipes.Session, path string) []string {
	tb.Helper()
	names, _, err := s.Conn().Children(path)
	if err != nil && !errors.Is(err, zk.ErrNoNode) {
		tb.Fatalf("children %s: %v", path, err)
	}
	return names
}

func testPath(tb testing.TB) string {
	return "/zkrecipes-test/barrier/" + strings.NewReplacer("/", "_", " ", "_", "=", "_").Replace(tb.Name())
}
