package leader_test

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"github.com/zkrecipes/zkrecipes/leader"
	"github.com/zkrecipes/zkrecipes/recipes"
	"github.com/zkrecipes/zkrecipes/testenv"
)

// One 1-server ensemble is shared by every test that does not need three
// servers; it is started on first use and closed by TestMain.
var sharedEns = testutil.NewShared(testenv.Config{Servers: 1})

func shared(tb testing.TB) *testenv.Ensemble {
	tb.Helper()
	return sharedEns.Start(tb)
}

func TestMain(m *testing.M) {
	code := m.Run()
	if err := sharedEns.Close(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	if code == 0 {
		if leaked := settle(20 * time.Second); leaked != "" {
			fmt.Fprintf(os.Stderr, "goroutines left behind:\n%s\n", leaked)
			code = 1
		}
	}
	os.Exit(code)
}

// ours matches stack frames of code whose goroutines must all be gone once
// every session is closed.
var ours = regexp.MustCompile(`(?m)^(github\.com/zkrecipes/zkrecipes/(leader|recipes)\.|github\.com/go-zookeeper/zk\.)`)

// settle waits until no goroutine other than the caller runs code of this
// package, the recipes core or go-zookeeper, and returns the stacks of those
// still running after d ("" when none).
func settle(d time.Duration) string {
	return strings.Join(testutil.Settle(d, ours.MatchString), "\n\n")
}

var (
	waitFor = testutil.WaitFor
	ctxT    = testutil.Ctx
)

// connect opens a session closed at the end of the test, secured in
// secured mode (testutil.SessionOptions).
func connect(tb testing.TB, addrs []string, opts ...recipes.Option) *recipes.Session {
	tb.Helper()
	return connectWith(tb, addrs, append(testutil.SessionOptions(), opts...))
}

// connectWrapped is connect through wrap, above TLS in secured mode
// (testutil.WrappedOptions): for request counters.
func connectWrapped(tb testing.TB, addrs []string, wrap func(net.Conn) net.Conn, opts ...recipes.Option) *recipes.Session {
	tb.Helper()
	return connectWith(tb, addrs, append(testutil.WrappedOptions(wrap), opts...))
}

func connectWith(tb testing.TB, addrs []string, opts []recipes.Option) *recipes.Session {
	tb.Helper()
	opts = append([]recipes.Option{
		recipes.WithSessionTimeout(3 * time.Second),
		testutil.Timing(),
		recipes.WithLogger(slog.New(slog.DiscardHandler)),
	}, opts...)
	s, err := recipes.Connect(ctxT(tb, time.Minute), addrs, opts...)
	if err != nil {
		tb.Fatalf("connect: %v", err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = s.CloseContext(ctx)
	})
	return s
}

var pathSeq atomic.Int64

// testPath returns a fresh election path for the test.
func testPath(tb testing.TB) string {
	name := regexp.MustCompile(`[^A-Za-z0-9_-]+`).ReplaceAllString(tb.Name(), "_")
	return fmt.Sprintf("/leader-test/%s-%d", name, pathSeq.Add(1))
}

// The goroutine check must see what a live session runs, or it proves
// nothing at the end of the run.
func TestSettleSeesLiveGoroutines(t *testing.T) {
	e := shared(t)
	s := connect(t, e.Addrs())
	if s.ID() == 0 {
		t.Fatal("no session")
	}
	if left := settle(50 * time.Millisecond); !strings.Contains(left, "github.com/go-zookeeper/zk.") {
		t.Fatalf("settle did not report a live session's goroutines:\n%s", left)
	}
}

// newElection is leader.New for arguments the test knows to be valid.
func newElection(tb testing.TB, s *recipes.Session, path string, opts ...leader.Option) *leader.Election {
	tb.Helper()
	e, err := leader.New(s, path, opts...)
	if err != nil {
		tb.Fatal(err)
	}
	return e
}

// withID is leader.WithData of a string id.
func withID(s string) leader.Option { return leader.WithData([]byte(s)) }
