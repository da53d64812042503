package enforce_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"github.com/zkrecipes/zkrecipes/recipes"
	"github.com/zkrecipes/zkrecipes/testenv"
)

// connect is testutil.Connect over TLS to e, with opts.
func connect(t *testing.T, e *testenv.Ensemble, opts ...recipes.Option) *recipes.Session {
	t.Helper()
	return testutil.Connect(t, e.Addrs(), append([]recipes.Option{recipes.WithTLS(e.ClientTLS())}, opts...)...)
}

// connectAnonymous connects to e over TLS without credentials, and closes
// the Session at the end of the test without failing it: the server
// refuses the close request too (the connection ends anyway).
func connectAnonymous(t *testing.T, ctx context.Context, e *testenv.Ensemble) *recipes.Session {
	t.Helper()
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	s, err := recipes.Connect(cctx, e.Addrs(), recipes.WithTLS(e.ClientTLS()),
		recipes.WithSessionTimeout(testutil.SessionTimeout), recipes.WithLogger(testutil.Logger()), testutil.Timing())
	if err != nil {
		t.Fatalf("Connect without credentials: %v", err)
	}
	t.Cleanup(func() {
		cctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		t.Logf("close without credentials: %v", s.CloseContext(cctx))
	})
	return s
}

// superuser returns WithDigestAuth for e's superuser.
func superuser(t *testing.T, e *testenv.Ensemble) recipes.Option {
	t.Helper()
	user, password, ok := strings.Cut(string(e.SuperAuth()), ":")
	if !ok {
		t.Fatal("the ensemble has no superuser")
	}
	return recipes.WithDigestAuth(user, password)
}
