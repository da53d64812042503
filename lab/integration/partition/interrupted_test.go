package partition_test

import (
	"errors"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/zkrecipes/lock"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// TestRebalanceWhileTakingShare: a member has taken part of its share and
// waits for the lock of an item whose holder (here an outside process) has
// not let go, when the members change. Run's guarantee: "when the members
// change meanwhile, release what was taken and go back to 1", so that once
// the group holds still and every holder released what it was asked to,
// every item is in exactly one member's Partition (package doc, Stable
// split). A member that kept the locks it had taken would hold an item in
// nobody's Partition, and whoever's new share names it (itself included,
// behind its own node) would wait for it for good.
func TestRebalanceWhileTakingShare(t *testing.T) {
	e := ensemble(t)
	ctx := ctxT(t, 2*time.Minute)
	path := testPath(t)
	admin := connect(t, e.Addrs())
	items := itemsN(2) // a alone takes both; a and b: a item-0, b item-1 (Stride)
	outside, err := lock.New(connect(t, e.Addrs()), path+"/locks/item-1")
	if err != nil {
		t.Fatal(err)
	}
	if err := outside.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	l := newLedger()
	a := start(t, ctx, connect(t, e.Addrs()), l, path, "a", items)
	waitFor(t, 30*time.Second, "a to take item-0 and wait for item-1", func() bool {
		return len(owners(t, admin, path+"/locks/item-0")) == 1 && len(owners(t, admin, path+"/locks/item-1")) == 2
	})
	first := owners(t, admin, path+"/locks/item-0")
	b := start(t, ctx, connect(t, e.Addrs()), l, path, "b", items)
	// a stops waiting for item-1 once it sees b (its node there deleted)
	// while the outside process still holds it.
	waitFor(t, 30*time.Second, "a to stop waiting for item-1 on seeing b", func() bool {
		for _, o := range owners(t, admin, path+"/locks/item-1") {
			if o.session == a.s.ID() {
				return false
			}
		}
		return true
	})
	if err := outside.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	waitConverged(t, admin, path, []*member{a, b}, items)
	// The item-0 lock node a holds now is a new one: the first was given up.
	if now := owners(t, admin, path+"/locks/item-0"); len(now) != 1 || now[0].czxid == first[0].czxid {
		t.Errorf("item-0's lock node is %+v, first taken as %+v: a kept the lock it had taken before the members changed", now, first)
	}
	noOverlap(t, l)
}

// owner is one lock node's owning session and creation zxid.
type owner struct {
	session int64
	czxid   int64
}

// owners returns the nodes under a lock path, in no order (none when the
// path does not exist).
func owners(tb testing.TB, admin *recipes.Session, path string) []owner {
	tb.Helper()
	var out []owner
	for _, kid := range children(tb, admin, path) {
		_, st, err := admin.Conn().Get(path + "/" + kid)
		if errors.Is(err, zk.ErrNoNode) {
			continue // gone since the listing
		}
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, owner{st.EphemeralOwner, st.Czxid})
	}
	return out
}
