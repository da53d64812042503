package recipes_test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/barrier"
	"github.com/zkrecipes/zkrecipes/group"
	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"github.com/zkrecipes/zkrecipes/lab/internal/zkcount"
	"github.com/zkrecipes/zkrecipes/lock"
	"github.com/zkrecipes/zkrecipes/persistent"
	"github.com/zkrecipes/zkrecipes/queue"
	"github.com/zkrecipes/zkrecipes/recipes"
	sharedvalue "github.com/zkrecipes/zkrecipes/shared"
)

// The lost setWatches: after a reconnection under the same session,
// go-zookeeper v1.0.4 (conn.go, loop) starts the new connection's send and
// receive goroutines and only then calls sendSetWatches, which reads
// lastZxid (the zxid of the last reply handled) into the relativeZxid of
// the setWatches requests, one per 128 KiB of watched paths, read as each
// is built. The server fires a data watch whose node changed after
// relativeZxid, a child watch whose node's children did, and an exists
// watch whose node now exists or a data or child watch whose node is gone
// whatever the zxid. A reply with a zxid that the receiving goroutine
// handles before a request is built (a request queued while disconnected,
// sent first on the new connection) raises lastZxid to the server's zxid,
// and the changes made while we were away are then never fired.
// (The re-sent setAuth of a secured session cannot: ZooKeeper 3.8 answers
// it with zxid 0, which go-zookeeper does not record.)

// lastZxidInjector puts go-zookeeper in the state that race leaves it in:
// on the first connection dialed after arm, it sets the Conn's lastZxid to
// the zxid armed, from the goroutine that dials (go-zookeeper's loop,
// which next reads lastZxid for the connect request and for
// sendSetWatches), as if a reply carrying that zxid had been handled
// first. It is a dial wrapper; the connection itself is left as it is.
type lastZxidInjector struct {
	conn atomic.Pointer[zk.Conn]
	zxid atomic.Int64 // 0: nothing armed
	done atomic.Int64 // the zxid last injected
}

func (in *lastZxidInjector) arm(zxid int64) { in.zxid.Store(zxid) }

func (in *lastZxidInjector) wrap(c net.Conn) net.Conn {
	if z := in.zxid.Swap(0); z != 0 {
		if zc := in.conn.Load(); zc != nil {
			f := reflect.ValueOf(zc).Elem().FieldByName("lastZxid")
			if f.IsValid() && f.Kind() == reflect.Int64 {
				*(*int64)(unsafe.Pointer(f.UnsafeAddr())) = z
				in.done.Store(z)
			}
		}
	}
	return c
}

// wakeCase is one waiter or watcher on the Session under test: start
// begins its wait (after which the server holds a watch on watched), change
// makes, through another session, the change that must wake it, and woke
// is closed once it woke.
type wakeCase struct {
	name    string
	watched string
	start   func()
	change  func() error
	woke    chan struct{}
	// missable: its wake-up depends on the zxid setWatches carries (a
	// data or child change, not a node created or deleted).
	missable bool
	child    bool // watched is a child watch
}

// TestSetWatchesZxid: every waiter and watcher of the recipes, on a
// Session whose go-zookeeper sends setWatches with a zxid above the
// changes made while it was disconnected (the race's outcome, injected
// from the dial: see lastZxidInjector; TestSetWatchesAfterReply shows the
// race itself), still wakes once the Session is back. A lock waiter, the
// barriers and persistent.Node wait for a node to be created or deleted,
// which the server fires whatever the zxid; a semaphore waiter's holdings
// end with the suspension and its acquisition starts again, listing
// afresh. A queue consumer, group.Watch and shared.Value.Watch wait for
// children or data to change, which the server fires only for a change
// after the zxid: those three missed their wake-up (measured 2026-11-28,
// none woke within 10 s) until the Session's tap sent setWatches with the
// zxid seen before the reconnection (internal/tap/conn.go).
func TestSetWatchesZxid(t *testing.T) {
	e := ensemble(t)
	ctx := testutil.Ctx(t, 2*time.Minute)
	base := testPath(t) + fmt.Sprint(time.Now().UnixNano())
	link, err := e.NewLink("setwatches-zxid")
	if err != nil {
		t.Fatal(err)
	}
	defer link.Close()
	inj := &lastZxidInjector{}
	// A session timeout long enough that the semaphore's mutex, held while
	// waiting, outlives the cut.
	counter := zkcount.New()
	s := testutil.ConnectWrapped(t, link.Addrs(), func(c net.Conn) net.Conn { return inj.wrap(counter.Wrap(c)) },
		recipes.WithSessionTimeout(15*time.Second))
	inj.conn.Store(s.Conn())
	other := connect(t, e.Addrs())
	wctx, stopWaits := context.WithCancel(ctx)
	defer stopWaits()

	var cases []*wakeCase
	add := func(c *wakeCase) { c.woke = make(chan struct{}); cases = append(cases, c) }
	closeOnNil := func(c *wakeCase, what string) func(error) {
		return func(err error) {
			if err != nil {
				if wctx.Err() == nil {
					t.Errorf("%s: %s: %v", c.name, what, err)
				}
				return
			}
			close(c.woke)
		}
	}

	{ // lock waiter: the holder releases
		p := base + "/lock"
		held, err := lock.New(other, p)
		if err != nil {
			t.Fatal(err)
		}
		if err := held.Lock(ctx); err != nil {
			t.Fatal(err)
		}
		waiter, err := lock.New(s, p)
		if err != nil {
			t.Fatal(err)
		}
		c := &wakeCase{name: "lock waiter"}
		c.watched = held.Node()
		c.start = func() {
			go func() {
				err := waiter.Lock(wctx)
				closeOnNil(c, "Lock")(err)
				if err == nil {
					_ = waiter.Unlock(context.Background())
				}
			}()
		}
		c.change = func() error { return held.Unlock(ctx) }
		add(c)
	}
	{ // double barrier: the second member enters, creating ready
		p := base + "/double"
		mine, err := barrier.NewDouble(s, p, 2)
		if err != nil {
			t.Fatal(err)
		}
		theirs, err := barrier.NewDouble(other, p, 2)
		if err != nil {
			t.Fatal(err)
		}
		c := &wakeCase{name: "double barrier Enter", watched: p + "/" + barrier.ReadyNode}
		c.start = func() { go func() { closeOnNil(c, "Enter")(mine.Enter(wctx)) }() }
		c.change = func() error { return theirs.Enter(ctx) }
		add(c)
	}
	{ // barrier: removed
		p := base + "/barrier"
		set, err := barrier.New(other, p)
		if err != nil {
			t.Fatal(err)
		}
		if err := set.Set(ctx); err != nil {
			t.Fatal(err)
		}
		waiter, err := barrier.New(s, p)
		if err != nil {
			t.Fatal(err)
		}
		c := &wakeCase{name: "barrier Wait", watched: p}
		c.start = func() { go func() { closeOnNil(c, "Wait")(waiter.Wait(wctx)) }() }
		c.change = func() error { return set.Remove(ctx) }
		add(c)
	}
	{ // persistent.Node: deleted by someone else, created again
		p := base + "/persistent"
		n, err := persistent.New(s, p, persistent.WithData([]byte("n")))
		if err != nil {
			t.Fatal(err)
		}
		if err := n.Start(ctx); err != nil {
			t.Fatal(err)
		}
		defer n.Leave(context.Background())
		c := &wakeCase{name: "persistent.Node", watched: p}
		var czxid int64
		c.start = func() {
			_, st, err := other.Conn().Exists(p)
			if err != nil {
				t.Error(err)
				return
			}
			czxid = st.Czxid
			go func() {
				for wctx.Err() == nil {
					if ok, st, err := other.Conn().Exists(p); err == nil && ok && st.Czxid != czxid && st.EphemeralOwner == s.ID() {
						close(c.woke)
						return
					}
					select {
					case <-wctx.Done():
					case <-time.After(20 * time.Millisecond):
					}
				}
			}()
		}
		c.change = func() error { return other.Conn().Delete(p, -1) }
		add(c)
	}
	{ // semaphore waiter: the only lease is released
		p := base + "/semaphore"
		theirs, err := lock.NewSemaphore(other, p, 1)
		if err != nil {
			t.Fatal(err)
		}
		lease, err := theirs.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		mine, err := lock.NewSemaphore(s, p, 1)
		if err != nil {
			t.Fatal(err)
		}
		c := &wakeCase{name: "semaphore waiter", watched: p + "/leases", missable: true, child: true}
		c.start = func() {
			go func() {
				l, err := mine.Acquire(wctx)
				closeOnNil(c, "Acquire")(err)
				if err == nil {
					_ = l.Release(context.Background())
				}
			}()
		}
		c.change = func() error { return lease.Release(ctx) }
		add(c)
	}
	{ // queue consumer: an item is put
		p := base + "/queue"
		mine, err := queue.New(s, p)
		if err != nil {
			t.Fatal(err)
		}
		theirs, err := queue.New(other, p)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := theirs.Len(ctx); err != nil { // creates the path
			t.Fatal(err)
		}
		c := &wakeCase{name: "queue Take", watched: p, missable: true, child: true}
		c.start = func() {
			go func() {
				_, err := mine.Take(wctx)
				closeOnNil(c, "Take")(err)
			}()
		}
		c.change = func() error { _, err := theirs.Put(ctx, []byte("x")); return err }
		add(c)
	}
	{ // group.Watch: a member joins
		p := base + "/group"
		first, err := group.Join(ctx, other, p, "first")
		if err != nil {
			t.Fatal(err)
		}
		defer first.Leave(context.Background())
		c := &wakeCase{name: "group.Watch", watched: p, missable: true, child: true}
		var joined *group.Member
		defer func() {
			if joined != nil {
				_ = joined.Leave(context.Background())
			}
		}()
		c.start = func() {
			st := group.Watch(wctx, s, p)
			go func() {
				for snap := range st.C {
					if _, ok := snap.Get("second"); ok {
						close(c.woke)
						st.Stop()
					}
				}
			}()
		}
		c.change = func() (err error) { joined, err = group.Join(ctx, other, p, "second"); return err }
		add(c)
	}
	{ // shared.Value.Watch: set to a new value
		p := base + "/value"
		mine, err := sharedvalue.NewValue(s, p, []byte("v1"))
		if err != nil {
			t.Fatal(err)
		}
		theirs, err := sharedvalue.NewValue(other, p, []byte("v1"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := theirs.Get(ctx); err != nil { // creates it
			t.Fatal(err)
		}
		c := &wakeCase{name: "shared.Value.Watch", watched: p, missable: true}
		c.start = func() {
			st := mine.Watch(wctx)
			go func() {
				for v := range st.C {
					if bytes.Equal(v.Value, []byte("v2")) {
						close(c.woke)
						st.Stop()
					}
				}
			}()
		}
		c.change = func() error { _, err := theirs.Set(ctx, []byte("v2")); return err }
		add(c)
	}

	for _, c := range cases {
		c.start()
	}
	// Armed: the server holds every data and exists watch (wchc lists no
	// child watch), and the Session has sent nothing for half a second,
	// every request answered (a waiter sends nothing once its watch is
	// set).
	var last zkcount.Counts
	lastChange := time.Now()
	waitFor(t, 20*time.Second, "every waiter and watcher armed", func() bool {
		now := counter.Snapshot()
		if now.Total() != last.Total() || now.Replies != last.Replies {
			last, lastChange = now, time.Now()
			return false
		}
		if now.Total() != now.Replies || time.Since(lastChange) < 500*time.Millisecond {
			return false
		}
		w := testutil.SessionWatches(t, e, s.ID())
		for _, c := range cases {
			if !c.child && !w[c.watched] {
				return false
			}
		}
		return true
	})
	sid := s.ID()

	// Away: every change is made, then a write whose zxid is above them
	// all is what go-zookeeper is told it saw last.
	if err := link.Cut(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the Session suspended", func() bool { return s.State() == recipes.StateSuspended })
	for _, c := range cases {
		if err := c.change(); err != nil {
			t.Fatalf("%s: change: %v", c.name, err)
		}
	}
	mark := base + "/mark"
	if _, err := other.Conn().Create(mark, nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	_, st, err := other.Conn().Exists(mark)
	if err != nil {
		t.Fatal(err)
	}
	inj.arm(st.Czxid)
	if err := link.Restore(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "the same session back", func() bool {
		return s.State() == recipes.StateReconnected && s.ID() == sid
	})
	if got := inj.done.Load(); got != st.Czxid {
		t.Fatalf("lastZxid injected: 0x%x, want 0x%x", got, st.Czxid)
	}

	for _, c := range cases {
		t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
			select {
			case <-c.woke:
			case <-time.After(10 * time.Second):
				t.Errorf("%s did not wake within 10 s of the reconnection (its wake-up depends on setWatches' zxid: %v)", c.name, c.missable)
			}
		})
	}
	stopWaits()
}
