// Package enforce_test checks, against a real ensemble that enforces
// authentication (testenv.Config.EnforceAuth) on a TLS-only client port
// (testenv.Config.TLS: the Session's tap reads the frames above TLS), what a Session without
// credentials gets: Connect succeeds, and the recipes' calls fail with an
// error wrapping recipes.ErrNoAuth. Its own package, so that its ensemble
// never runs beside the security package's one (go test -p 1).
package enforce_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"github.com/zkrecipes/zkrecipes/lock"
	"github.com/zkrecipes/zkrecipes/recipes"
	"github.com/zkrecipes/zkrecipes/testenv"
)

var shared = testutil.NewShared(testenv.Config{Servers: 1, TLS: true, EnforceAuth: true})

func TestMain(m *testing.M) { testutil.Main(m, shared) }

// TestWithoutCredentials: on a server enforcing digest authentication, a
// Session without credentials connects (the server accepts the session),
// the server refuses its requests with error code -124, which go-zookeeper
// reports as "unknown error: -124". A Session with credentials
// (WithDigestAuth) takes a lock there.
func TestWithoutCredentials(t *testing.T) {
	e := shared.Start(t)
	testutil.NoLeakedGoroutines(t, testutil.Running("recipes", "lock"))
	path := fmt.Sprintf("/zkrecipes-enforce/%d/lock", time.Now().UnixNano())
	ctx := testutil.Ctx(t, 3*time.Minute)

	anon := connectAnonymous(t, ctx, e)

	// go-zookeeper's own answer (its connection may be down for a moment:
	// the server also refuses pings and drops the connection).
	testutil.WaitFor(t, 30*time.Second, "a refused request", func() bool {
		_, _, err := anon.Conn().Exists("/")
		if err == nil {
			t.Fatal("exists without credentials succeeded")
		}
		return err.Error() == "unknown error: -124"
	})

	// A recipe's call without credentials fails with recipes.ErrNoAuth
	// too, at once: TestFastRefusal.
	a := connect(t, e, recipes.WithDigestAuth("a", "pa"))
	ma, err := lock.New(a, path)
	if err != nil {
		t.Fatal(err)
	}
	if err := ma.Lock(ctx); err != nil {
		t.Fatalf("Lock with credentials: %v", err)
	}
	if err := ma.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}
