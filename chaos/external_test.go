package chaos

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/chaos/cluster"
	"github.com/zkrecipes/zkrecipes/chaos/faults"
	"github.com/zkrecipes/zkrecipes/chaos/workloads"
	"github.com/zkrecipes/zkrecipes/testenv"
)

// TestExternalServers runs the chaos suite against servers it did not
// start (issue 22): a testenv ensemble stands in for them, reached only
// by its servers' direct addresses (Config.Servers, AttachServers). The
// quick scenarios of leader and counter must run their client faults
// (injected, exercised, no violation), report their server faults not
// applicable with the reason and not as passes, and leave nothing under
// the run's root, which a listing of our own confirms. A root that
// already has nodes is refused before anything runs.
func TestExternalServers(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a ZooKeeper ensemble")
	}
	skipUnderRace(t)
	seed, _, err := testSeed(*seedFlag, os.Getenv(SeedEnv))
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("chaos: TestExternalServers seed %d (replay with %s=%d)\n", seed, SeedEnv, seed)
	began := time.Now()
	e := testenv.New(t, testenv.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	before, _ := ownGoroutines()

	cfg := e2eConfig(t, seed)
	cfg.Servers = e.DirectAddrs()
	cfg.Root = fmt.Sprintf("/zkchaos-test-%x", seed&0xffffff)
	cfg.Logger = nil
	ext, err := AttachServers(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := ext.Close(ctx); err != nil {
			t.Error(err)
		}
	}()
	if ext.Backend() != testenv.BackendExternal {
		t.Fatalf("backend %s", ext.Backend())
	}
	if err := ext.Kill(ctx, 0); !errors.Is(err, testenv.ErrUnsupported) {
		t.Fatalf("Kill on attached servers: %v, want ErrUnsupported", err)
	}
	ws, err := SelectWorkloads(workloads.All(), "leader,counter")
	if err != nil {
		t.Fatal(err)
	}
	scs := Matrix(faults.TierQuick, ws...)
	r, err := NewRunner(ext, cfg)
	if err != nil {
		t.Fatal(err)
	}

	// A root in use is refused, and left as it was.
	direct, err := (cluster.Security{}).Connect(e.DirectAddrs(), 2*time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	closeDirect := sync.OnceFunc(direct.Close)
	defer closeDirect()
	busy := cfg.Root + "-busy"
	for _, p := range []string{busy, busy + "/theirs"} {
		if _, err := direct.Create(p, nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatal(err)
		}
	}
	busyCfg := cfg
	busyCfg.Root = busy
	rb, err := NewRunner(ext, busyCfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rb.Run(ctx, scs[:1]); !errors.Is(err, ErrRootInUse) {
		t.Errorf("run on a root in use: %v, want ErrRootInUse", err)
	}
	if ok, _, err := direct.Exists(busy + "/theirs"); err != nil || !ok {
		t.Errorf("the busy root's node after the refused run: exists %v, %v", ok, err)
	}
	_ = direct.Delete(busy+"/theirs", -1)
	_ = direct.Delete(busy, -1)

	sum, err := r.Run(ctx, scs)
	if err != nil {
		t.Fatal(err)
	}
	ran := checkRun(t, sum)
	var skipped []string
	for _, sc := range sum.Scenarios {
		if sc.NotApplicable == "" {
			continue
		}
		skipped = append(skipped, sc.Scenario)
		f, err := faults.ByName(sc.Faults)
		if err != nil || !f.Server {
			t.Errorf("%s not applicable but not a server fault: %v", sc.Scenario, err)
		}
		if !strings.Contains(sc.NotApplicable, "server fault") {
			t.Errorf("%s: reason %q", sc.Scenario, sc.NotApplicable)
		}
	}
	if len(ran) == 0 || len(skipped) == 0 || sum.Passed() != len(ran) {
		t.Errorf("%d ran, %d passed, %d skipped (%v): want both kinds, every one that ran passed", len(ran), sum.Passed(), len(skipped), skipped)
	}
	for _, sc := range ran {
		if f, err := faults.ByName(sc.Faults); err != nil || f.Server {
			t.Errorf("%s ran a server fault against external servers (%v)", sc.Scenario, err)
		}
	}
	// Our own listing: the root is gone (the run made it).
	if _, err := direct.Sync(cfg.Root); err != nil && !errors.Is(err, zk.ErrNoNode) {
		t.Fatal(err)
	}
	if ok, _, err := direct.Exists(cfg.Root); err != nil || ok {
		kids, _, _ := direct.Children(cfg.Root)
		t.Errorf("root %s after the run: exists %v (children %v), %v", cfg.Root, ok, kids, err)
	}
	if sum.Root != cfg.Root || !strings.Contains(sum.RootLine(), "nothing left") {
		t.Errorf("summary root %q: %s", sum.Root, sum.RootLine())
	}
	t.Logf("%d scenarios ran, %d not applicable (%v), in %v (ensemble start included)", len(ran), len(skipped), skipped, time.Since(began).Round(time.Second))
	closeDirect()
	deadline := time.Now().Add(30 * time.Second)
	n, stacks := ownGoroutines()
	for n > before+5 && time.Now().Before(deadline) {
		<-time.After(100 * time.Millisecond)
		n, stacks = ownGoroutines()
	}
	if n > before+5 {
		t.Errorf("%d goroutines after the scenarios, %d before:\n%s", n, before, stacks)
	}
}

// externalSecured runs against servers it did not start that take TLS
// only and enforce digest authentication (e, a TLS and EnforceAuth
// ensemble, reached only by its direct addresses), given as zkchaos
// -servers -tls-ca -digest -secure would: AttachServers with the CA's PEM
// file (plain TCP gets no answer there), every session over TLS and
// authenticated as the given user. leader/partition-expire must pass with
// the run's ACL on every node read, leader/kill-leader be not applicable,
// and the root be gone.
func externalSecured(ctx context.Context, t testing.TB, e *testenv.Ensemble, seed uint64) {
	began := time.Now()
	files, ok := e.TLSFiles()
	if !ok {
		t.Fatal("no TLS files")
	}
	cfg := e2eConfig(t, seed)
	cfg.Servers, cfg.Digest, cfg.Secure = e.DirectAddrs(), "ops:pass-"+fmt.Sprint(seed), true
	plain := cfg
	plain.TLSCA, plain.Secure = "", false
	if _, err := AttachServers(ctx, plain); !errors.Is(err, testenv.ErrConfig) {
		t.Errorf("attach without TLS to TLS servers: %v, want ErrConfig", err)
	}
	cfg.TLSCA = files.CA
	cfg, err := cfg.WithDefaults()
	if err != nil {
		t.Fatal(err)
	}
	ext, err := AttachServers(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := ext.Close(ctx); err != nil {
			t.Error(err)
		}
	}()
	ws, err := SelectWorkloads(workloads.All(), "leader")
	if err != nil {
		t.Fatal(err)
	}
	scs, err := Select(Matrix(faults.TierQuick, ws...), "leader/partition-expire,leader/kill-leader")
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewRunner(ext, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Secure() {
		t.Fatal("runner not secure with a CA file and digest credentials")
	}
	sum, err := r.Run(ctx, scs)
	if err != nil {
		t.Fatal(err)
	}
	ran := checkRun(t, sum)
	if len(ran) != 1 || ran[0].Scenario != "leader/partition-expire" || sum.NotApplicable() != 1 {
		t.Fatalf("%d ran, %d not applicable: want leader/partition-expire run and leader/kill-leader not applicable", len(ran), sum.NotApplicable())
	}
	if c, ok := ran[0].Result(CheckerSecuredACL); !ok || c.Checked == 0 {
		t.Errorf("no node's ACL was checked: %+v", c)
	}
	if !sum.Secure || !strings.Contains(sum.RootLine(), "nothing left") {
		t.Errorf("secure %v, %s", sum.Secure, sum.RootLine())
	}
	t.Logf("took %v", time.Since(began).Round(time.Second))
}
