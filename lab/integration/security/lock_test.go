package security_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/lock"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// TestLockOutsiders: A (digest a) holds a lock.Mutex. An outsider, without
// credentials or with other ones (digest b), can neither delete A's node,
// write its data, revoke it, change its ACL, put a node ahead of it in the
// queue nor take the lock: each attempt fails with zk.ErrNoAuth (through
// recipes.ErrNoAuth for the recipes' calls) at once, and A still holds. The
// outsider can still read the holder. A waiter with A's credentials on
// another Session acquires once A unlocks, and its node is as closed to the
// outsiders.
func TestLockOutsiders(t *testing.T) {
	e := ensemble(t)
	addrs := e.Addrs()
	path := base(t, addrs) + "/lock"
	a := connect(t, addrs, recipes.WithDigestAuth(userA, passA))
	ctx := ctxFor(t, 2*time.Minute)

	m, err := lock.New(a, path, lock.WithData([]byte("holder-a")))
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	held := m.Context()
	node := m.Node()
	wantSecureACL(t, a, path) // the lock's parent, created by A
	wantSecureACL(t, a, node)

	outsiders := map[string]*recipes.Session{
		"anonymous": connect(t, addrs),
		"digest b":  connect(t, addrs, recipes.WithDigestAuth(userB, passB)),
	}
	attack := func(t *testing.T, o *recipes.Session, node string) {
		t.Helper()
		attempts := []struct {
			what string
			do   func() error
		}{
			{"delete the holder's node", func() error { return o.Conn().Delete(node, -1) }},
			{"set the holder's data", func() error { _, err := o.Conn().Set(node, []byte("forged"), -1); return err }},
			{"open the holder's ACL", func() error { _, err := o.Conn().SetACL(node, zk.WorldACL(zk.PermAll), -1); return err }},
			{"open the parent's ACL", func() error { _, err := o.Conn().SetACL(path, zk.WorldACL(zk.PermAll), -1); return err }},
			{"create ahead of the queue", func() error {
				// A protected name with sequence 0: it would sort first.
				_, err := o.Conn().Create(path+"/_c_00000000-0000-0000-0000-000000000000-lock-0000000000", nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll))
				return err
			}},
			{"create a sequential node in the queue", func() error {
				_, err := o.Conn().Create(path+"/_c_00000000-0000-0000-0000-000000000000-lock-", nil, zk.FlagEphemeralSequential, zk.WorldACL(zk.PermAll))
				return err
			}},
			{"revoke the holder", func() error { return wantRecipesNoAuth(lock.Revoke(ctx, o, node)) }},
			{"take the lock", func() error {
				om, err := lock.New(o, path)
				if err != nil {
					return err
				}
				start := time.Now()
				err = om.Lock(ctx) // refused at the create: no wait, no retry
				if d := time.Since(start); d > 10*time.Second {
					t.Errorf("Lock took %v to fail", d)
				}
				return wantRecipesNoAuth(err)
			}},
		}
		for _, at := range attempts {
			if err := at.do(); !errors.Is(err, zk.ErrNoAuth) {
				t.Errorf("%s: %v, want an error wrapping zk.ErrNoAuth", at.what, err)
			}
			if err := held.Err(); err != nil {
				t.Fatalf("after %q the holder lost its lock: %v", at.what, context.Cause(held))
			}
		}
	}
	for name, o := range outsiders {
		t.Run(name, func(t *testing.T) {
			attack(t, o, node)
			// Reads stay open: the holder's data and the lock's queue.
			data, st, err := o.Conn().Get(node)
			if err != nil || string(data) != "holder-a" || st.EphemeralOwner != a.ID() {
				t.Fatalf("outsider's read: %q, %v", data, err)
			}
			om, err := lock.New(o, path)
			if err != nil {
				t.Fatal(err)
			}
			// TryLock reads the queue and creates nothing while the lock
			// is held: it answers ErrLocked.
			if err := om.TryLock(ctx); !errors.Is(err, lock.ErrLocked) {
				t.Fatalf("outsider's TryLock = %v, want lock.ErrLocked", err)
			}
			ps, err := om.Participants(ctx)
			if err != nil || len(ps) != 1 || ps[0].Node != node || ps[0].SessionID != a.ID() || string(ps[0].Data) != "holder-a" {
				t.Fatalf("outsider's Participants = %+v, %v", ps, err)
			}
		})
	}
	if kids, _, err := a.Conn().Children(path); err != nil || len(kids) != 1 {
		t.Fatalf("lock queue after the attacks: %q, %v", kids, err)
	}

	// A's principal on another Session waits, and acquires when A unlocks.
	a2 := connect(t, addrs, recipes.WithDigestAuth(userA, passA))
	w, err := lock.New(a2, path, lock.WithData([]byte("waiter-a")))
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() { got <- w.Lock(ctx) }()
	waitFor(t, 20*time.Second, "the waiter's node", func() bool {
		kids, _, err := a.Conn().Children(path)
		return err == nil && len(kids) == 2
	})
	select {
	case err := <-got:
		t.Fatalf("waiter acquired while A holds: %v", err)
	default:
	}
	if err := m.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-got:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("waiter did not acquire after A unlocked")
	}
	wantSecureACL(t, a2, w.Node())
	held = w.Context()
	for name, o := range outsiders {
		t.Run("waiter/"+name, func(t *testing.T) { attack(t, o, w.Node()) })
	}
	if err := w.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

// wantRecipesNoAuth returns err if it also wraps recipes.ErrNoAuth, and an
// error saying it does not otherwise.
func wantRecipesNoAuth(err error) error {
	if err != nil && !errors.Is(err, recipes.ErrNoAuth) {
		return errors.New("not recipes.ErrNoAuth: " + err.Error())
	}
	return err
}

// TestLockWithoutAuthStaysOpen: without credentials the default ACL is
// unchanged, world:anyone all: another anonymous client may delete the
// holder's node (what DefaultAuthACL prevents).
func TestLockWithoutAuthStaysOpen(t *testing.T) {
	e := ensemble(t)
	addrs := e.Addrs()
	path := base(t, addrs) + "/lock"
	s := connect(t, addrs)
	ctx := ctxFor(t, time.Minute)
	m, err := lock.New(s, path)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	acl, _, err := s.Conn().GetACL(m.Node())
	if err != nil || len(acl) != 1 || acl[0] != zk.WorldACL(zk.PermAll)[0] {
		t.Fatalf("ACL = %v, %v", acl, err)
	}
	other := connect(t, addrs)
	if err := other.Conn().Delete(m.Node(), -1); err != nil {
		t.Fatal(err)
	}
	select {
	case <-m.Context().Done():
	case <-ctx.Done():
		t.Fatal("holding not cancelled by the deletion")
	}
	if err := m.Unlock(ctx); !errors.Is(err, recipes.ErrReleased) {
		t.Fatalf("Unlock = %v", err)
	}
}

// TestACLProviderPerPath: an ACLProvider's answer applies to its paths
// (the lock's parent here), the default to the others (the lock nodes).
func TestACLProviderPerPath(t *testing.T) {
	e := ensemble(t)
	addrs := e.Addrs()
	path := base(t, addrs) + "/lock"
	open := zk.WorldACL(zk.PermAll)
	s := connect(t, addrs, recipes.WithDigestAuth(userA, passA), recipes.WithACLProvider(recipes.ACLProviderFunc(func(p string) []zk.ACL {
		if p == path {
			return open
		}
		return nil
	})))
	ctx := ctxFor(t, time.Minute)
	m, err := lock.New(s, path)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	defer m.Unlock(ctx)
	if acl, _, err := s.Conn().GetACL(path); err != nil || len(acl) != 1 || acl[0] != open[0] {
		t.Fatalf("parent's ACL = %v, %v", acl, err)
	}
	wantSecureACL(t, s, m.Node())
}
