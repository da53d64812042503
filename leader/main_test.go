package leader_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/recipes"
	"github.com/zkrecipes/zkrecipes/testenv"
)

// One 1-server ensemble is shared by every test that does not need three
// servers; it is started on first use and closed by TestMain.
var (
	sharedOnce sync.Once
	sharedEns  *testenv.Ensemble
	sharedErr  error
)

func shared(tb testing.TB) *testenv.Ensemble {
	tb.Helper()
	if testing.Short() {
		tb.Skip("needs a real ZooKeeper ensemble")
	}
	sharedOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		sharedEns, sharedErr = testenv.Start(ctx, testenv.Config{Servers: 1})
	})
	if sharedErr != nil {
		tb.Fatalf("start shared ensemble: %v", sharedErr)
	}
	return sharedEns
}

func TestMain(m *testing.M) {
	code := m.Run()
	if sharedEns != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		if err := sharedEns.Close(ctx); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
		cancel()
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
	deadline := time.Now().Add(d)
	for {
		buf := make([]byte, 1<<20)
		for {
			n := runtime.Stack(buf, true)
			if n < len(buf) {
				buf = buf[:n]
				break
			}
			buf = make([]byte, 2*len(buf))
		}
		var left []string
		for i, g := range strings.Split(string(buf), "\n\n") {
			if i == 0 { // the caller
				continue
			}
			if ours.MatchString(g) {
				left = append(left, g)
			}
		}
		if len(left) == 0 {
			return ""
		}
		if time.Now().After(deadline) {
			return strings.Join(left, "\n\n")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitFor polls cond until it holds, failing the test after d.
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

func ctxT(tb testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	tb.Cleanup(cancel)
	return ctx
}

// connect opens a session closed at the end of the test.
func connect(tb testing.TB, addrs []string, opts ...recipes.Option) *recipes.Session {
	tb.Helper()
	opts = append([]recipes.Option{
		recipes.WithSessionTimeout(3 * time.Second),
		recipes.WithLogger(slog.New(slog.DiscardHandler)),
	}, opts...)
	s, err := recipes.Connect(ctxT(tb, time.Minute), addrs, opts...)
	if err != nil {
		tb.Fatalf("connect: %v", err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = s.Close(ctx)
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
