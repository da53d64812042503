package recipes_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
)

// TestPermissionPerRequest measures the permission ZooKeeper checks for
// each request the recipes send, as docs/security.md's "Permissions each recipe
// needs" lists them: a second principal holding exactly one permission on a
// node (and the owner all) tries every request against it. exists on a
// node that exists checks none up to ZooKeeper 3.8.3 and 3.9.1, and READ
// on the node from 3.8.4 and 3.9.2 (ZOOKEEPER-2590; a missing node is not
// checked); getData and getChildren need READ on the node; setData WRITE
// on it; create CREATE and delete DELETE on the parent; a multi's check
// READ on its node; setACL ADMIN.
func TestPermissionPerRequest(t *testing.T) {
	e := ensemble(t)
	const otherPassword = "other-secret"
	// The owner is the suite's principal, which may create under the
	// nodes other tests left (DefaultAuthACL in secured mode).
	owner := testutil.ConnectAs(t, e.Addrs(), testutil.User, testutil.Password)
	other := testutil.ConnectAs(t, e.Addrs(), testutil.OtherUser, otherPassword)
	base := fmt.Sprintf("%s-%d", testPath(t), time.Now().UnixNano())
	for _, p := range []string{"/zkrecipes-test", base} {
		if _, err := owner.Conn().Create(p, nil, 0, owner.ACLFor(p)); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			t.Fatal(err)
		}
	}
	var acl []zk.ACL // the node's: setACL writes it again unchanged
	requests := []struct {
		name string
		do   func(node string) error
	}{
		{"exists", func(n string) error { _, _, err := other.Conn().Exists(n); return err }},
		{"getData", func(n string) error { _, _, err := other.Conn().Get(n); return err }},
		{"getChildren", func(n string) error { _, _, err := other.Conn().Children(n); return err }},
		{"setData", func(n string) error { _, err := other.Conn().Set(n, []byte("x"), -1); return err }},
		{"create child", func(n string) error {
			_, err := other.Conn().Create(n+"/c", nil, zk.FlagEphemeral, testutil.ACL())
			return err
		}},
		{"delete child", func(n string) error { return other.Conn().Delete(n+"/d", -1) }},
		{"multi check", func(n string) error {
			_, err := other.Conn().Multi(&zk.CheckVersionRequest{Path: n, Version: -1})
			return err
		}},
		{"setACL", func(n string) error { _, err := other.Conn().SetACL(n, acl, -1); return err }},
	}
	existsNeeds := int32(0)
	if existsChecksRead(t, e.ServerVersion()) {
		existsNeeds = zk.PermRead
	}
	want := map[string]int32{ // the one permission each request needs; 0: none
		"exists": existsNeeds, "getData": zk.PermRead, "getChildren": zk.PermRead, "setData": zk.PermWrite,
		"create child": zk.PermCreate, "delete child": zk.PermDelete, "multi check": zk.PermRead,
		"setACL": zk.PermAdmin,
	}
	perms := []int32{zk.PermRead, zk.PermWrite, zk.PermCreate, zk.PermDelete, zk.PermAdmin}
	for _, perm := range perms {
		node := fmt.Sprintf("%s/p%d", base, perm)
		acl = append(zk.DigestACL(zk.PermAll, testutil.User, testutil.Password), zk.DigestACL(perm, testutil.OtherUser, otherPassword)...)
		if _, err := owner.Conn().Create(node, nil, 0, acl); err != nil {
			t.Fatal(err)
		}
		if _, err := owner.Conn().Create(node+"/d", nil, 0, owner.ACLFor(node+"/d")); err != nil {
			t.Fatal(err)
		}
		for _, r := range requests {
			err := r.do(node)
			allowed := want[r.name] == 0 || want[r.name] == perm
			switch {
			case allowed && err != nil:
				t.Errorf("%s with permission %d only: %v, want it allowed", r.name, perm, err)
			case !allowed && !errors.Is(err, zk.ErrNoAuth):
				t.Errorf("%s with permission %d only: %v, want zk.ErrNoAuth", r.name, perm, err)
			}
			if r.name == "create child" && err == nil {
				if err := owner.Conn().Delete(node+"/c", -1); err != nil {
					t.Fatal(err)
				}
			}
			if r.name == "delete child" && err == nil {
				if _, err := owner.Conn().Create(node+"/d", nil, 0, owner.ACLFor(node+"/d")); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
}

// existsChecksRead reports whether ZooKeeper release v ("3.9.6") checks READ
// for exists on a node that exists: 3.8.4 and later 3.8s, 3.9.2 and later
// (ZOOKEEPER-2590).
func existsChecksRead(t *testing.T, v string) bool {
	t.Helper()
	var major, minor, patch int
	if _, err := fmt.Sscanf(v, "%d.%d.%d", &major, &minor, &patch); err != nil {
		t.Fatalf("server version %q: %v", v, err)
	}
	switch {
	case major != 3 || minor > 9:
		return true
	case minor == 9:
		return patch >= 2
	case minor == 8:
		return patch >= 4
	}
	return false
}

// TestExistsChecksRead: the releases ZOOKEEPER-2590 shipped in.
func TestExistsChecksRead(t *testing.T) {
	for v, want := range map[string]bool{"3.7.2": false, "3.8.0": false, "3.8.3": false, "3.8.4": true,
		"3.9.1": false, "3.9.2": true, "3.9.6": true, "3.10.0": true, "4.0.0": true} {
		if got := existsChecksRead(t, v); got != want {
			t.Errorf("existsChecksRead(%s) = %v, want %v", v, got, want)
		}
	}
}
