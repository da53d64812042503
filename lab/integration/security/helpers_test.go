// Package security_test checks, against a real ensemble, what the Session's
// security options promise: an authenticated Session's nodes (DefaultAuthACL:
// creator all, anyone read) cannot be deleted, written or crowded by an
// outsider, who can still read them; its credentials survive reconnections
// and new sessions.
package security_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"github.com/zkrecipes/zkrecipes/recipes"
	"github.com/zkrecipes/zkrecipes/testenv"
)

// One single-server ensemble, plain (no TLS, no enforced authentication):
// ACLs are checked by every server whatever its authentication settings.
var shared = testutil.NewShared(testenv.Config{Servers: 1})

func TestMain(m *testing.M) { testutil.Main(m, shared) }

// ensemble returns the shared ensemble and fails the test if goroutines
// running go-zookeeper, recipes or lock code outlive it.
func ensemble(t *testing.T) *testenv.Ensemble {
	t.Helper()
	e := shared.Start(t)
	testutil.NoLeakedGoroutines(t, testutil.Running("recipes", "lock"))
	return e
}

var (
	connect = testutil.Connect
	waitFor = testutil.WaitFor
)

// The principals of the tests.
const (
	userA, passA = "a", "pa"
	userB, passB = "b", "pb"
)

// base returns a new world-open node for the test (created by an anonymous
// session, as an application's root would be): what the test's recipes
// create under it gets their Session's ACL.
func base(t *testing.T, addrs []string) string {
	t.Helper()
	// Unique per run: the nodes of an earlier run (-count) keep their ACLs.
	p := fmt.Sprintf("/zkrecipes-security/%s-%d", strings.NewReplacer("/", "_", " ", "_").Replace(t.Name()), time.Now().UnixNano())
	admin := connect(t, addrs)
	for _, q := range []string{"/zkrecipes-security", p} {
		if _, err := admin.Conn().Create(q, nil, 0, zk.WorldACL(zk.PermAll)); err != nil && err != zk.ErrNodeExists {
			t.Fatalf("create %s: %v", q, err)
		}
	}
	return p
}

// digestID is the ACL id ZooKeeper gives user with password.
func digestID(user, password string) string {
	return zk.DigestACL(zk.PermAll, user, password)[0].ID
}

// wantACL fails the test unless path's ACL is A's secure default: all for
// digest a, read for anyone.
func wantSecureACL(t *testing.T, s *recipes.Session, path string) {
	t.Helper()
	acl, _, err := s.Conn().GetACL(path)
	if err != nil {
		t.Fatalf("getACL %s: %v", path, err)
	}
	want := []zk.ACL{{Perms: zk.PermAll, Scheme: "digest", ID: digestID(userA, passA)}, {Perms: zk.PermRead, Scheme: "world", ID: "anyone"}}
	if len(acl) != len(want) {
		t.Fatalf("ACL of %s = %v, want %v", path, acl, want)
	}
	for i := range want {
		if acl[i] != want[i] {
			t.Fatalf("ACL of %s = %v, want %v", path, acl, want)
		}
	}
}

func ctxFor(t *testing.T, d time.Duration) context.Context { return testutil.Ctx(t, d) }
