package inspect_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"github.com/zkrecipes/zkrecipes/lock"
	"github.com/zkrecipes/zkrecipes/recipes"
	"github.com/zkrecipes/zkrecipes/testenv"
)

// The command on an ensemble as real deployments run it: a TLS-only client
// port and enforced digest authentication. With -tls-ca, -tls-server-name
// and -digest it shows a lock's holder and waiter (their owners live, the
// "cons" check over TLS) and revokes the holder; without -digest the
// server refuses it, and it says so. This package is not in the suite's
// secured pass (its other tests run Curator and kazoo peers, which the
// harness does not configure for TLS), so this test starts its own
// secured ensemble in every pass.
func TestCommandOnSecuredEnsemble(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: needs a ZooKeeper ensemble (testenv)")
	}
	e := testenv.New(t, testenv.Config{Servers: 1, TLS: true, EnforceAuth: true})
	testutil.NoLeakedGoroutines(t, testutil.Running("recipes", "lock", "cmd/zkrecipes/inspect"))
	path := testPath(t)
	ctx := ctxFor(t, 2*time.Minute)
	creds := []recipes.Option{recipes.WithTLS(e.ClientTLS()), recipes.WithDigestAuth(testutil.User, testutil.Password)}
	sa, sb := connect(t, e.Addrs(), creds...), connect(t, e.Addrs(), creds...)

	holder, err := lock.New(sa, path, lock.WithRevocation(), lock.WithData([]byte("secured-holder")))
	if err != nil {
		t.Fatal(err)
	}
	if err := holder.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	holderNode, holderCtx := holder.Node(), holder.Context()
	released := make(chan error, 1)
	go func() {
		select {
		case <-holder.Revoked():
			released <- holder.Unlock(context.Background())
		case <-ctx.Done():
			released <- ctx.Err()
		}
	}()
	waiter, err := lock.New(sb, path, lock.WithData([]byte("secured-waiter")))
	if err != nil {
		t.Fatal(err)
	}
	locked := make(chan error, 1)
	go func() { locked <- waiter.Lock(ctx) }()
	waitFor(t, time.Minute, "the waiter's node", func() bool { return len(children(t, sa, path)) == 2 })

	// Without credentials: refused by the server, reported, exit 1.
	tlsOnly := []string{"-servers", strings.Join(e.Addrs(), ","), "-tls-ca", tlsFiles(t, e), "-tls-server-name", testenv.TLSServerName}
	_, errOut, code := runCommandArgs(ctx, append(tlsOnly, "show", path)...)
	if code != 1 || !strings.Contains(errOut, "requires authentication") || !strings.Contains(errOut, "-digest") {
		t.Errorf("show without -digest: exit %d, stderr %q; want exit 1 naming the missing authentication", code, errOut)
	}

	// Without -tls-ca the TLS port hears a plain handshake and says
	// nothing back: the connect fails at -timeout, naming the servers and
	// what they did, and the command does not hang on after it.
	servers := strings.Join(e.Addrs(), ",")
	start := time.Now()
	_, errOut, code = runCommandArgs(ctx, "show", path, "-servers", servers, "-timeout", "3s", "-digest", testutil.User+":"+testutil.Password)
	if took := time.Since(start); code != 1 || !strings.Contains(errOut, "cannot connect to "+servers) || !strings.Contains(errOut, "no session within 3s") ||
		!strings.Contains(errOut, "without -tls-ca") || strings.Contains(errOut, "authentication failed") || took > 8*time.Second {
		t.Errorf("show without -tls-ca: exit %d after %v, stderr %q", code, took, errOut)
	}
	t.Logf("without -tls-ca: %s", errOut)

	rep := show(t, e, path)
	if rep.Kind != "lock" || len(rep.Contenders) != 2 {
		t.Fatalf("report: %+v", rep)
	}
	for i, w := range []struct {
		session, data string
		holds         bool
	}{{hex(sa.ID()), "secured-holder", true}, {hex(sb.ID()), "secured-waiter", false}} {
		c := rep.Contenders[i]
		if c.Session != w.session || c.Holds != w.holds || c.Data != w.data {
			t.Errorf("contender %d: %+v, want session %s holds %v data %q", i+1, c, w.session, w.holds, w.data)
		}
		if c.Live == nil || !*c.Live {
			t.Errorf("contender %d: live %v, want true (cons over TLS lists every owner)", i+1, c.Live)
		}
	}
	if !rep.Sessions.Known {
		t.Errorf("sessions %+v: cons over TLS did not answer", rep.Sessions)
	}

	out := zkrecipes(t, e, "revoke", path)
	if !strings.Contains(out, "revoked "+holderNode) {
		t.Errorf("revoke printed %q, want the holder %s", out, holderNode)
	}
	if err := <-released; !errors.Is(err, recipes.ErrRevoked) {
		t.Fatalf("holder's Unlock after revocation: %v, want an error wrapping ErrRevoked", err)
	}
	if cause := context.Cause(holderCtx); !errors.Is(cause, recipes.ErrRevoked) {
		t.Errorf("holder's context cause %v, want ErrRevoked", cause)
	}
	if err := <-locked; err != nil {
		t.Fatalf("waiter: %v", err)
	}
	if err := waiter.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

// tlsFiles returns the CA file of a TLS ensemble.
func tlsFiles(t *testing.T, e *testenv.Ensemble) string {
	t.Helper()
	files, ok := e.TLSFiles()
	if !ok {
		t.Fatal("the ensemble has no TLS files")
	}
	return files.CA
}
