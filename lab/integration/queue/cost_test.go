package queue_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"github.com/zkrecipes/zkrecipes/lab/internal/zkcount"
)

func lists(c zkcount.Counts) int64 {
	return c.Req(zkcount.OpGetChildren) + c.Req(zkcount.OpGetChildren2)
}

// TestCost counts requests on the wire: a consumer lists once for a batch
// of items (no getChildren per Take), and each Take, Claim, Ack and Put
// costs what its doc says.
func TestCost(t *testing.T) {
	const items = 20
	e := ensemble(t)
	ctx := ctxT(t, time.Minute)
	path := testPath(t)
	counter := zkcount.New()
	s := testutil.ConnectWrapped(t, e.Addrs(), counter.Wrap)
	q := newQueue(t, s, path)
	producer := newQueue(t, connect(t, e.Addrs()), path)

	batch := make([][]byte, items)
	for i := range batch {
		batch[i] = fmt.Appendf(nil, "%d", i)
	}
	if _, err := producer.PutAll(ctx, batch); err != nil {
		t.Fatal(err)
	}
	before := counter.Snapshot()
	for range items {
		if _, err := q.Take(ctx); err != nil {
			t.Fatal(err)
		}
	}
	d := counter.Snapshot().Sub(before)
	if lists(d) != 1 || d.Req(zkcount.OpGetData) != items || d.Req(zkcount.OpDelete) != items || d.Total() != 2*items+1 {
		t.Errorf("%d Takes cost %v; want 1 getChildren, %d getData, %d delete", items, d.Requests, items, items)
	}

	before = counter.Snapshot()
	if _, err := q.Put(ctx, []byte("x")); err != nil {
		t.Fatal(err)
	}
	if _, err := q.PutAll(ctx, batch[:3]); err != nil {
		t.Fatal(err)
	}
	d = counter.Snapshot().Sub(before)
	// The Put is s's Session's first create under the queue's path (the
	// producer made the path): in the secured pass, its open-parent check
	// reads the path's ACL first (1 getACL); the PutAll finds it checked.
	getACL := testutil.FirstCreateUnder(1, nil)[zkcount.OpGetACL]
	if d.Req(zkcount.OpCreate)+d.Req(zkcount.OpCreate2) != 1 || d.Req(zkcount.OpMulti) != 1 || d.Req(zkcount.OpGetACL) != getACL || d.Total() != 2+getACL {
		t.Errorf("Put + PutAll cost %v; want 1 create, 1 multi, %d getACL", d.Requests, getACL)
	}

	// Claim/ack: the first Claim lists items and claims (2 getChildren),
	// and its first create fails for want of the claims container, made
	// then; then 1 create + 1 exists (owner check, claim watch) + 1 getData
	// per Claim and 1 multi per Ack. In the secured pass the first claim's
	// open-parent check reads the claims path's ACL twice (no node yet;
	// again once the container is made).
	if _, err := q.Take(ctx); err != nil { // "x"; the cache is now empty
		t.Fatal(err)
	}
	cq := newQueue(t, s, path)
	before = counter.Snapshot()
	for range 3 {
		c, err := cq.Claim(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Ack(ctx); err != nil {
			t.Fatal(err)
		}
	}
	d = counter.Snapshot().Sub(before)
	creates := d.Req(zkcount.OpCreate) + d.Req(zkcount.OpCreate2)
	getACL = testutil.FirstCreateUnder(2, nil)[zkcount.OpGetACL]
	if lists(d) != 2 || creates != 4 || d.Req(zkcount.OpExists) != 3 || d.Req(zkcount.OpGetData) != 3 ||
		d.Req(zkcount.OpMulti) != 3 || d.Req(zkcount.OpCreateContainer) != 1 || d.Req(zkcount.OpGetACL) != getACL ||
		d.Total() != 2+4+3+3+3+1+getACL {
		t.Errorf("3 Claim+Ack cost %v", d.Requests)
	}
}
