// Package testutil is the test harness shared by the recipe packages'
// integration tests: one ZooKeeper ensemble per test binary, started on
// first use and closed after the tests run, sessions closed at the end of
// each test, polling helpers and a check that no go-zookeeper or recipe
// goroutine outlives a test. It is imported by _test files only.
//
// A package's tests typically declare
//
//	var shared = testutil.NewShared(testenv.Config{Servers: 1})
//
//	func TestMain(m *testing.M) { testutil.Main(m, shared) }
//
//	func ensemble(t *testing.T) *testenv.Ensemble {
//		t.Helper()
//		e := shared.Start(t)
//		testutil.NoLeakedGoroutines(t, testutil.Running("recipes", "lock"))
//		return e
//	}
//
// Tests must not run in parallel: the goroutine check sees every goroutine
// of the binary.
//
// With ZKRECIPES_SECURE=1 the same tests run secured (see secure.go): TLS
// ensembles with enforced digest authentication, and every session the
// harness opens over TLS as User. Tests open sessions through Connect,
// ConnectWrapped (a connection wrapper that must see plaintext frames),
// CountedSession, ConnectAs (another principal) or SessionOptions, never
// with recipes.Connect or zk.Connect alone.
package testutil

import (
	"context"
	"errors"
	"github.com/zkrecipes/zkrecipes/internal/hooks"
	"io"
	"log/slog"
	"net"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/lab/internal/zkcount"
	"github.com/zkrecipes/zkrecipes/recipes"
	"github.com/zkrecipes/zkrecipes/testenv"
)

var errNoSecuredEnsemble = errors.New("testutil: secured mode, but no secured ensemble started yet")

// Shared is a test binary's ensemble, started on first use (so that a run
// of unit tests only starts none) and closed by Close.
type Shared struct {
	cfg  testenv.Config
	once sync.Once
	ens  *testenv.Ensemble
	err  error
}

// NewShared returns a Shared that starts an ensemble of cfg (of
// SecureConfig(cfg) in secured mode).
func NewShared(cfg testenv.Config) *Shared { return &Shared{cfg: cfg} }

// Ensemble starts the ensemble on the first call (allowing it 10 minutes)
// and returns it, or the error of that one start.
func (s *Shared) Ensemble() (*testenv.Ensemble, error) {
	s.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		s.ens, s.err = testenv.Start(ctx, SecureConfig(s.cfg))
		if s.err == nil {
			noteEnsemble(s.ens)
		}
	})
	return s.ens, s.err
}

// Start returns the ensemble for an integration test: it skips the test
// with -short and fails it if the ensemble cannot start.
func (s *Shared) Start(tb testing.TB) *testenv.Ensemble {
	tb.Helper()
	if testing.Short() {
		tb.Skip("integration test: needs a ZooKeeper ensemble (testenv)")
	}
	e, err := s.Ensemble()
	if err != nil {
		tb.Fatalf("start ensemble: %v", err)
	}
	return e
}

// Addrs returns the ensemble's addresses, for Examples, which cannot fail
// otherwise: it panics if the ensemble cannot start.
func (s *Shared) Addrs() []string {
	e, err := s.Ensemble()
	if err != nil {
		panic(err)
	}
	return e.Addrs()
}

// Close closes the ensemble if it was started (allowing it 2 minutes).
func (s *Shared) Close() error {
	if s.ens == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	return s.ens.Close(ctx)
}

// Main runs the tests, closes the shared ensembles (ignoring errors of
// Close) and exits with the tests' code. Call it from TestMain.
func Main(m *testing.M, shared ...*Shared) {
	code := m.Run()
	for _, s := range shared {
		_ = s.Close()
	}
	os.Exit(code)
}

// Logger is the sessions' logger: discarded, or debug lines on stderr
// when ZKRECIPES_TEST_LOG is set.
func Logger() *slog.Logger {
	if os.Getenv("ZKRECIPES_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// SessionTimeout is the session timeout Connect asks for unless opts say
// otherwise.
const SessionTimeout = 3 * time.Second

// Connect opens a session (allowing it 30 seconds) with SessionTimeout,
// Logger, SessionOptions (TLS and digest authentication in secured mode)
// and then opts, and closes it at the end of the test, failing the test if
// Close fails (closing it earlier is fine). A dialer in opts opens the
// connection TLS then runs over; tests that must see the frames use
// ConnectWrapped.
func Connect(tb testing.TB, addrs []string, opts ...recipes.Option) *recipes.Session {
	tb.Helper()
	return connect(tb, addrs, append(SessionOptions(), opts...))
}

// ConnectWrapped is Connect for a session whose every connection passes
// through wrap above TLS (see WrappedOptions), then opts.
func ConnectWrapped(tb testing.TB, addrs []string, wrap func(net.Conn) net.Conn, opts ...recipes.Option) *recipes.Session {
	tb.Helper()
	return connect(tb, addrs, append(WrappedOptions(wrap), opts...))
}

func connect(tb testing.TB, addrs []string, opts []recipes.Option) *recipes.Session {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	opts = append([]recipes.Option{recipes.WithSessionTimeout(SessionTimeout), recipes.WithLogger(Logger()), Timing()}, opts...)
	s, err := recipes.Connect(ctx, addrs, opts...)
	if err != nil {
		tb.Fatalf("connect: %v", err)
	}
	tb.Cleanup(func() { CloseSession(tb, s) })
	return s
}

// CloseSession closes s (allowing it 30 seconds), failing the test if
// Close fails.
func CloseSession(tb testing.TB, s *recipes.Session) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.CloseContext(ctx); err != nil {
		tb.Errorf("close session: %v", err)
	}
}

// CountedSession is ConnectWrapped (with opts) through a counter of the
// session's requests and notifications, which sees them in plaintext in
// secured mode too.
func CountedSession(tb testing.TB, addrs []string, opts ...recipes.Option) (*recipes.Session, *zkcount.Counter) {
	tb.Helper()
	c := zkcount.New()
	return ConnectWrapped(tb, addrs, c.Wrap, opts...), c
}

// WantOps fails the test unless d counts exactly the requests of want
// (an op per key, no other op), and logs them when it does.
func WantOps(tb testing.TB, what string, d zkcount.Counts, want map[zkcount.Op]int64) {
	tb.Helper()
	ok := len(d.Requests) == len(want)
	for op, n := range want {
		ok = ok && d.Req(op) == n
	}
	if !ok {
		tb.Errorf("%s: requests %v, want %v", what, d.Requests, want)
		return
	}
	tb.Logf("%s: %v, %d notifications", what, d.Requests, d.Notifications)
}

// Ctx returns a context cancelled at the end of the test or after d.
func Ctx(tb testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	tb.Cleanup(cancel)
	return ctx
}

// WaitFor polls cond until it holds, failing the test after d.
func WaitFor(tb testing.TB, d time.Duration, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Children lists path through s (allowing it 30 seconds), nil when the
// node does not exist; any other error fails the test. A read that fails
// because s's connection dropped while the session lives on (under heavy
// load go-zookeeper closes a connection on which nothing came for 2/3 of
// the session timeout, and the read in flight fails with
// zk.ErrConnectionClosed) is sent again once the session is usable; an
// expired or closed session still fails the test.
func Children(tb testing.TB, s *recipes.Session, path string) []string {
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
		WaitFor(tb, 2*SessionTimeout, "the session usable again", func() bool {
			st := s.State()
			return st == recipes.StateConnected || st == recipes.StateReconnected
		})
	}
}

// Running matches the stack of a goroutine that mentions code of
// go-zookeeper or of one of pkgs, zkrecipes packages named by their path
// in the module ("recipes", "lock"), in any frame or in its "created by"
// line.
func Running(pkgs ...string) func(stack string) bool {
	marks := []string{"github.com/go-zookeeper/zk."}
	for _, p := range pkgs {
		marks = append(marks, "zkrecipes/"+p+".")
	}
	return func(stack string) bool {
		for _, m := range marks {
			if strings.Contains(stack, m) {
				return true
			}
		}
		return false
	}
}

// Goroutines returns the stacks of the goroutines, other than the
// caller's, that match.
func Goroutines(match func(stack string) bool) []string {
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
	for i, g := range strings.Split(string(buf), "\n\n") {
		if i == 0 { // the caller: runtime.Stack lists it first
			continue
		}
		if match(g) {
			out = append(out, g)
		}
	}
	return out
}

// SteadyCount polls count until it returns the same value five times in a
// row, 10 ms apart (work in flight, such as a request awaiting its answer,
// ends meanwhile), for at most 5 s, and returns the last value.
func SteadyCount(count func() int) int {
	deadline := time.Now().Add(5 * time.Second)
	last, same := count(), 0
	for same < 5 && time.Now().Before(deadline) {
		<-time.After(10 * time.Millisecond)
		if n := count(); n == last {
			same++
		} else {
			last, same = n, 0
		}
	}
	return last
}

// Settle waits up to d for every goroutine that matches (but the caller)
// to end, and returns the stacks of those still running then (none when
// all ended).
func Settle(d time.Duration, match func(stack string) bool) []string {
	deadline := time.Now().Add(d)
	for {
		left := Goroutines(match)
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// NoLeakedGoroutines fails the test if goroutines that match outlive it
// by more than 15 seconds. Call it before opening the test's sessions: its
// check, a Cleanup, then runs after theirs close them.
func NoLeakedGoroutines(tb testing.TB, match func(stack string) bool) {
	tb.Helper()
	tb.Cleanup(func() {
		if left := Settle(15*time.Second, match); len(left) > 0 {
			tb.Errorf("%d goroutines leaked:\n%s", len(left), strings.Join(left, "\n\n"))
		}
	})
}

// RequireHooks skips a test that needs the recipes' test hooks
// (internal/hooks) when the build lacks them: they exist only with
// -tags zkrecipes_hooks, which scripts/test.sh sets.
func RequireHooks(tb testing.TB) {
	tb.Helper()
	if !hooks.Enabled {
		tb.Skip("needs the recipes' test hooks: go test -tags zkrecipes_hooks (scripts/test.sh sets it)")
	}
}
