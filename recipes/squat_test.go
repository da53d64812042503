package recipes

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

// TestWorldChildPerms: only world:anyone's create and delete bits count.
func TestWorldChildPerms(t *testing.T) {
	for _, c := range []struct {
		acl  []zk.ACL
		want int32
	}{
		{zk.WorldACL(zk.PermAll), zk.PermCreate | zk.PermDelete},
		{zk.WorldACL(zk.PermRead | zk.PermWrite | zk.PermAdmin), 0},
		{DefaultAuthACL(), 0},
		{append(zk.DigestACL(zk.PermAll, "b", "pb"), zk.WorldACL(zk.PermDelete)...), zk.PermDelete},
		{[]zk.ACL{{Perms: zk.PermAll, Scheme: "ip", ID: "0.0.0.0/0"}}, 0},
		{nil, 0},
	} {
		if got := worldChildPerms(c.acl); got != c.want {
			t.Errorf("worldChildPerms(%v) = %d, want %d", c.acl, got, c.want)
		}
	}
	if got := childVerbs(zk.PermCreate); got != "create" {
		t.Errorf("childVerbs(create) = %q", got)
	}
	if got := childVerbs(zk.PermDelete | zk.PermCreate); got != "create and delete" {
		t.Errorf("childVerbs(create|delete) = %q", got)
	}
}

// TestParentChecksBound: parents are remembered up to maxCheckedParents;
// beyond it add reports every parent as new (warned about again) and
// remembers nothing more.
func TestParentChecksBound(t *testing.T) {
	var c parentChecks
	if c.done("/a") {
		t.Fatal("empty set has /a")
	}
	if !c.add("/a") || c.add("/a") || !c.done("/a") {
		t.Fatal("add /a twice: want new, then known")
	}
	for i := 1; i < maxCheckedParents; i++ {
		c.add(fmt.Sprintf("/p%d", i))
	}
	if !c.add("/over") || !c.add("/over") || c.done("/over") {
		t.Fatal("beyond the bound: want new each time, never remembered")
	}
	if len(c.seen) != maxCheckedParents {
		t.Fatalf("%d parents remembered, want %d", len(c.seen), maxCheckedParents)
	}
}

// TestCheckParentDoneCtxSendsNothing: an authenticated Session's squatting
// check with a done ctx returns ctx's cause and sends no getACL, as a
// recipe call with a done ctx sends nothing (it sent the getACL when the
// Session was usable: a regression found by the queue's
// TestDoneCtxSendsNothing in the integration suite's secured pass).
func TestCheckParentDoneCtxSendsNothing(t *testing.T) {
	f := newFakeZK(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s, err := Connect(ctx, []string{f.addr()}, WithDigestAuth("alice", testPassword))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	done, stop := context.WithCancelCause(ctx)
	cause := errors.New("caller gave up")
	stop(cause)
	for range 20 {
		if err := s.checkParent(done, "/p"); !errors.Is(err, cause) {
			t.Fatalf("checkParent(done) = %v, want its cause", err)
		}
	}
	for _, conn := range f.requests() {
		for _, r := range conn {
			if r.op != opSetAuth {
				t.Fatalf("checkParent(done) sent op %d; requests %+v", r.op, f.requests())
			}
		}
	}
}
