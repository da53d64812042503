package barrier_test

import (
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"github.com/zkrecipes/zkrecipes/lab/internal/zkcount"
)

// TestCost counts requests on the wire against the docs.
func TestCost(t *testing.T) {
	e := ensemble(t)
	ctx := ctxT(t, time.Minute)
	counter := zkcount.New()
	s := testutil.ConnectWrapped(t, e.Addrs(), counter.Wrap)
	path := testPath(t)
	if err := newBarrier(t, s, path+"/setup").Set(ctx); err != nil { // parents exist from here on
		t.Fatal(err)
	}

	b := newBarrier(t, s, path+"/b")
	before := counter.Snapshot()
	if err := b.Set(ctx); err != nil {
		t.Fatal(err)
	}
	if err := b.Remove(ctx); err != nil {
		t.Fatal(err)
	}
	if err := b.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	d := counter.Snapshot().Sub(before)
	if d.Req(zkcount.OpCreate)+d.Req(zkcount.OpCreate2) != 1 || d.Req(zkcount.OpDelete) != 1 || d.Req(zkcount.OpExists) != 1 || d.Total() != 3 {
		t.Errorf("Set + Remove + Wait cost %v", d.Requests)
	}

	// A lone member (n = 1): Enter is 1 exists + 1 create + 1 getChildren
	// + 1 create of "ready"; Leave is 1 getChildren + 1 delete, then the
	// delete of "ready", which its listing showed: 1 exists (its czxid and
	// version) + 1 delete at that version.
	db := newDouble(t, s, path, 1)
	before = counter.Snapshot()
	if err := db.Enter(ctx); err != nil {
		t.Fatal(err)
	}
	d = counter.Snapshot().Sub(before)
	lists := d.Req(zkcount.OpGetChildren) + d.Req(zkcount.OpGetChildren2)
	if d.Req(zkcount.OpExists) != 1 || d.Req(zkcount.OpCreate)+d.Req(zkcount.OpCreate2) != 2 || lists != 1 || d.Total() != 4 {
		t.Errorf("Enter cost %v", d.Requests)
	}
	before = counter.Snapshot()
	if err := db.Leave(ctx); err != nil {
		t.Fatal(err)
	}
	d = counter.Snapshot().Sub(before)
	lists = d.Req(zkcount.OpGetChildren) + d.Req(zkcount.OpGetChildren2)
	if lists != 1 || d.Req(zkcount.OpDelete) != 2 || d.Req(zkcount.OpExists) != 1 || d.Total() != 4 {
		t.Errorf("Leave cost %v", d.Requests)
	}
}
