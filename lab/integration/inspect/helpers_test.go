package inspect_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/cmd/zkrecipes/inspect"
	"github.com/zkrecipes/zkrecipes/lab/internal/peers"
	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"github.com/zkrecipes/zkrecipes/recipes"
	"github.com/zkrecipes/zkrecipes/testenv"
)

// One single-server ensemble is shared by the package's integration tests.
// Tests do not run in parallel, so the goroutine check sees only its own
// test's goroutines.
var shared = testutil.NewShared(testenv.Config{Servers: 1})

func TestMain(m *testing.M) { testutil.Main(m, shared) }

// ensemble returns the shared ensemble and fails the test if goroutines
// running go-zookeeper, recipes, a recipe package or inspect code outlive
// it (after every session is closed).
func ensemble(t *testing.T) *testenv.Ensemble {
	t.Helper()
	e := shared.Start(t)
	testutil.NoLeakedGoroutines(t, testutil.Running("recipes", "lock", "leader", "queue", "barrier", "twophase", "cmd/zkrecipes/inspect"))
	return e
}

var (
	connect = testutil.Connect
	waitFor = testutil.WaitFor
	ctxFor  = testutil.Ctx
)

var pathSeq atomic.Int64

// testPath returns a fresh path for each call (tests may run with
// -count > 1 against the same ensemble).
func testPath(t *testing.T) string {
	return fmt.Sprintf("/zkrecipes-test/inspect/%s-%d-%d", strings.ReplaceAll(t.Name(), "/", "_"), time.Now().UnixNano(), pathSeq.Add(1))
}

// zkrecipes runs the command against e with args after -servers and
// returns its stdout; a non-zero exit fails the test.
func zkrecipes(t *testing.T, e *testenv.Ensemble, args ...string) string {
	t.Helper()
	out, errOut, code := runCommand(ctxFor(t, time.Minute), e, args...)
	if code != 0 {
		t.Fatalf("zkrecipes %q: exit %d: %s", args, code, errOut)
	}
	return out
}

func runCommand(ctx context.Context, e *testenv.Ensemble, args ...string) (stdout, stderr string, code int) {
	return runCommandArgs(ctx, append(serverFlags(e), args...)...)
}

// runCommandArgs runs the command with args as they are.
func runCommandArgs(ctx context.Context, args ...string) (stdout, stderr string, code int) {
	var out, errb bytes.Buffer
	code = inspect.Main(ctx, args, &out, &errb)
	return out.String(), errb.String(), code
}

// serverFlags returns the command's flags that reach e: -servers, and on a
// secured ensemble the flags an operator gives for TLS and digest
// authentication: -tls-ca with the ensemble's CA file, -tls-server-name,
// and -digest as the harness's user (testutil.User).
func serverFlags(e *testenv.Ensemble) []string {
	flags := []string{"-servers", strings.Join(e.Addrs(), ",")}
	if files, ok := e.TLSFiles(); ok {
		flags = append(flags, "-tls-ca", files.CA, "-tls-server-name", testenv.TLSServerName)
	}
	if e.Config().EnforceAuth {
		flags = append(flags, "-digest", testutil.User+":"+testutil.Password)
	}
	return flags
}

// show runs "show -json path" and decodes the report.
func show(t *testing.T, e *testenv.Ensemble, path string) *inspect.Report {
	t.Helper()
	out := zkrecipes(t, e, "-json", "show", path)
	var rep inspect.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("decode %s: %v", out, err)
	}
	return &rep
}

// hex is a session id as the report writes it.
func hex(id int64) string { return inspect.SessionHex(id) }

// startPeer starts a peer of kind, skipping the test when its runtime is
// missing, and closes it at cleanup. It returns the peer and its session
// id as the report writes it.
func startPeer(t *testing.T, kind peers.Kind, e *testenv.Ensemble) (*peers.Peer, string) {
	t.Helper()
	if err := peers.Available(kind); err != nil {
		t.Skipf("%v (the README's test command installs it)", err)
	}
	ctx := ctxFor(t, 3*time.Minute)
	p, err := peers.Start(ctx, kind, strings.Join(e.Addrs(), ","), 4*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	sid, err := p.Do(ctx, "session")
	if err != nil {
		t.Fatal(err)
	}
	return p, "0x" + strings.TrimSpace(sid)
}

// background runs f in a goroutine and, at cleanup, waits for it and
// fails the test on its error.
func background(t *testing.T, what string, f func() error) {
	t.Helper()
	var wg sync.WaitGroup
	errc := make(chan error, 1)
	wg.Add(1)
	go func() {
		defer wg.Done()
		errc <- f()
	}()
	t.Cleanup(func() {
		wg.Wait()
		if err := <-errc; err != nil {
			t.Errorf("%s: %v", what, err)
		}
	})
}

// children lists path through s, nil when absent.
func children(t *testing.T, s *recipes.Session, path string) []string {
	return testutil.Children(t, s, path)
}

// syncBuffer is a bytes.Buffer safe for a writer and a reader at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
