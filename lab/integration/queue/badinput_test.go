package queue_test

import (
	"errors"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"github.com/zkrecipes/zkrecipes/queue"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// TestACLOverLimitSendsNothing: on a Session whose ACL provider answers an
// ACL of 50,000 entries (1.15 MB, over the default request limit), Put,
// PutPriority, PutAll and Claim fail with recipes.ErrDataTooLarge and send
// nothing (counted on the wire), as every other recipe does; MaxData is 0,
// not negative. Before, MaxData was negative (read as "the default limit"),
// Put sent the create, the server dropped the connection and Put returned
// ErrUncertain; Claim sent one such create after another until its ctx
// ended.
func TestACLOverLimitSendsNothing(t *testing.T) {
	e := ensemble(t)
	ctx := ctxT(t, 20*time.Second)
	path := testPath(t)
	admin := connect(t, e.Addrs())
	if _, err := newQueue(t, admin, path).Put(ctx, []byte("item")); err != nil {
		t.Fatal(err) // an item for Claim to find
	}
	huge := make([]zk.ACL, 50000)
	for i := range huge {
		huge[i] = zk.ACL{Perms: zk.PermAll, Scheme: "world", ID: "anyone"}
	}
	s, counter := testutil.CountedSession(t, e.Addrs(),
		recipes.WithACLProvider(recipes.ACLProviderFunc(func(string) []zk.ACL { return huge })))
	q := newQueue(t, s, path)
	pq := newQueue(t, s, path+"-priority", queue.WithPriority())
	bounded := newQueue(t, s, path, queue.WithMaxItems(10))
	if n := q.MaxData(); n != 0 {
		t.Errorf("MaxData = %d, want 0", n)
	}
	before := counter.Snapshot()
	for name, call := range map[string]func() error{
		"Put":                   func() error { _, err := q.Put(ctx, nil); return err },
		"Put with data":         func() error { _, err := q.Put(ctx, []byte("x")); return err },
		"PutPriority":           func() error { _, err := pq.PutPriority(ctx, nil, 1); return err },
		"PutAll":                func() error { _, err := q.PutAll(ctx, [][]byte{nil, []byte("x")}); return err },
		"Put, WithMaxItems":     func() error { _, err := bounded.Put(ctx, nil); return err },
		"Claim":                 func() error { _, err := q.Claim(ctx); return err },
		"Claim, priority queue": func() error { _, err := pq.Claim(ctx); return err },
	} {
		if err := call(); !errors.Is(err, recipes.ErrDataTooLarge) {
			t.Errorf("%s: %v, want ErrDataTooLarge", name, err)
		}
	}
	if d := counter.Snapshot().Sub(before); d.Total() != 0 {
		t.Errorf("refused calls sent %v", d.Requests)
	}
	if n, err := newQueue(t, admin, path).Len(ctx); err != nil || n != 1 {
		t.Errorf("Len = %d, %v; want the one item put by admin", n, err)
	}
}
