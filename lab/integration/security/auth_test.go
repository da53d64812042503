package security_test

import (
	"errors"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// TestCredentialsSurviveReconnection: the server keeps credentials per
// connection; a Session with WithDigestAuth still writes under its own
// closed node after its connection is cut and comes back (same session),
// and after its session expires and go-zookeeper opens a new one: its
// credentials were sent again each time.
func TestCredentialsSurviveReconnection(t *testing.T) {
	e := ensemble(t)
	addrs := e.Addrs()
	dir := base(t, addrs) + "/dir"
	link, err := e.NewLink("reconnect")
	if err != nil {
		t.Fatal(err)
	}
	defer link.Close()
	a := connect(t, link.Addrs(), recipes.WithDigestAuth(userA, passA))
	if _, err := a.Conn().Create(dir, nil, 0, a.ACLFor(dir)); err != nil {
		t.Fatal(err)
	}
	wantSecureACL(t, a, dir)
	// An anonymous client may not write there: the check below can fail.
	anon := connect(t, addrs)
	if _, err := anon.Conn().Create(dir+"/x", nil, 0, zk.WorldACL(zk.PermAll)); !errors.Is(err, zk.ErrNoAuth) {
		t.Fatalf("anonymous create = %v, want zk.ErrNoAuth", err)
	}

	sid := a.ID()
	if err := link.Cut(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "suspended", func() bool { return a.State() == recipes.StateSuspended })
	if err := link.Restore(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "reconnected", func() bool { return a.State() == recipes.StateReconnected })
	if a.ID() != sid {
		t.Fatalf("session 0x%x replaced by 0x%x", sid, a.ID())
	}
	if _, err := a.Conn().Create(dir+"/after-reconnection", nil, 0, a.ACL()); err != nil {
		t.Fatalf("create after reconnection: %v", err)
	}

	ctx := ctxFor(t, time.Minute)
	if err := link.ExpireSession(ctx, sid); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "a new session", func() bool {
		return a.State() == recipes.StateConnected && a.ID() != 0 && a.ID() != sid
	})
	if _, err := a.Conn().Create(dir+"/after-expiry", nil, 0, a.ACL()); err != nil {
		t.Fatalf("create in a new session: %v", err)
	}
}
