package recipes_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
)

// TestWatchEventZxid pins what the server writes in a watch notification's
// reply header, where ZooKeeper 3.8 and 3.9 differ on the wire: 3.9
// (ZOOKEEPER-4655) sends the zxid of the
// transaction that fired the watch, 3.8 sends -1. go-zookeeper reads no zxid
// from a notification (its lastZxid, which it sends with the watches it
// sets again after a reconnection, moves with replies only) and neither
// does the Session's tap (it renews the lease and learns czxids from
// replies only), so a watch fires and a WatchSet behaves the same on both:
// the test also checks the event's type and path, and that the data read
// after it is the write that fired it.
func TestWatchEventZxid(t *testing.T) {
	e := ensemble(t)
	s, counter := countedSession(t, e.Addrs())
	other := connect(t, e.Addrs())
	path := testPath(t)
	if _, err := other.Conn().Create(path, []byte("a"), 0, testutil.ACL()); err != nil && err != zk.ErrNodeExists {
		t.Fatal(err)
	}
	_, _, ch, err := s.Conn().GetW(path)
	if err != nil {
		t.Fatal(err)
	}
	before := counter.Snapshot()
	st, err := other.Conn().Set(path, []byte("b"), -1)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	select {
	case ev := <-ch:
		if ev.Type != zk.EventNodeDataChanged || ev.Path != path {
			t.Fatalf("event %+v, want a data change of %s", ev, path)
		}
	case <-ctx.Done():
		t.Fatal("no watch event within 30 s")
	}
	waitFor(t, 10*time.Second, "the notification counted", func() bool {
		return counter.Snapshot().Notifications > before.Notifications
	})
	got := counter.Snapshot().NotificationZxid
	want := int64(-1)
	if v := e.ServerVersion(); !strings.HasPrefix(v, "3.8.") {
		want = st.Mzxid // 3.9 and later
	}
	if got != want {
		t.Fatalf("ZooKeeper %s: notification header zxid %#x, want %#x (the write's mzxid %#x)", e.ServerVersion(), got, want, st.Mzxid)
	}
	t.Logf("ZooKeeper %s: notification header zxid %#x", e.ServerVersion(), got)
	data, _, err := s.Conn().Get(path)
	if err != nil || string(data) != "b" {
		t.Fatalf("read after the event: %q, %v; want the write that fired it", data, err)
	}
}
