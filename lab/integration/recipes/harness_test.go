package recipes_test

import (
	"errors"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"github.com/zkrecipes/zkrecipes/lab/internal/zkcount"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// TestHarnessMode checks that the harness runs the mode it claims: in
// secured mode (ZKRECIPES_SECURE=1) the shared ensemble is TLS-only, a
// recipe's node gets DefaultAuthACL for testutil.User (another principal
// may read it and nothing else), and a counted session still counts its
// requests and its setAuth frame by frame (the counter sits above TLS);
// in plain mode the
// ensemble has no TLS and the node is world:anyone with every permission.
func TestHarnessMode(t *testing.T) {
	e := ensemble(t)
	if got := e.ClientTLS() != nil; got != testutil.Secure() {
		t.Fatalf("ensemble has TLS: %v, secured mode: %v", got, testutil.Secure())
	}
	s, c := testutil.CountedSession(t, e.Addrs())
	ctx := testutil.Ctx(t, time.Minute)
	path := testPath(t)
	before := c.Snapshot()
	h, err := recipes.Acquire(ctx, s, recipes.Spec{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	d := c.Snapshot().Sub(before)
	if d.Corrupt != 0 || d.Req(zkcount.OpCreate)+d.Req(zkcount.OpCreate2) < 1 {
		t.Fatalf("counted %v (%d corrupt streams), want a create and no corrupt stream", d.Requests, d.Corrupt)
	}
	// The counter reads the session's setAuth (secured mode) in plaintext,
	// apart from its requests.
	if auths := c.Snapshot().Auths; (auths >= 1) != testutil.Secure() {
		t.Fatalf("counted %d setAuth requests in secured mode %v", auths, testutil.Secure())
	}
	node := h.Path()
	acl, _, err := s.Conn().GetACL(node)
	if err != nil {
		t.Fatal(err)
	}
	other := testutil.ConnectAs(t, e.Addrs(), testutil.OtherUser, "other-secret")
	_, _, readErr := other.Conn().Get(node)
	setErr := func() error { _, err := other.Conn().Set(node, []byte("x"), -1); return err }()
	if testutil.Secure() {
		want := zk.WorldACL(zk.PermRead)
		if len(acl) != 2 || acl[0].Perms != zk.PermAll || acl[0].Scheme != "digest" || !hasUser(acl[0].ID, testutil.User) || acl[1] != want[0] {
			t.Fatalf("ACL of %s: %v, want digest %s all and world read", node, acl, testutil.User)
		}
		if readErr != nil || !errors.Is(setErr, zk.ErrNoAuth) {
			t.Fatalf("another principal: read %v, write %v; want a read and zk.ErrNoAuth", readErr, setErr)
		}
	} else {
		if len(acl) != 1 || acl[0] != zk.WorldACL(zk.PermAll)[0] {
			t.Fatalf("ACL of %s: %v, want world:anyone all", node, acl)
		}
		if readErr != nil || setErr != nil {
			t.Fatalf("another principal: read %v, write %v; want both to succeed", readErr, setErr)
		}
	}
	if err := h.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

// hasUser reports whether a digest ACL id (user:hash) is user's.
func hasUser(id, user string) bool {
	return len(id) > len(user) && id[:len(user)+1] == user+":"
}
