package persistent_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/internal/zkpath"
	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"github.com/zkrecipes/zkrecipes/lab/internal/zkcount"
	"github.com/zkrecipes/zkrecipes/persistent"
	"github.com/zkrecipes/zkrecipes/recipes"
)

func TestBadInput(t *testing.T) {
	e := ensemble(t)
	s := connect(t, e.Addrs())
	ctx := ctxT(t, time.Minute)

	if _, err := persistent.New(nil, "/p"); !errors.Is(err, recipes.ErrNilSession) {
		t.Errorf("New with a nil session: %v", err)
	}
	for _, p := range []string{"", "p", "/p/", "/a//b", "/a/./b", "/zookeeper/p", "/", "/a\x01"} {
		if _, err := persistent.New(s, p); !errors.Is(err, recipes.ErrInvalidPath) {
			t.Errorf("New(%q): %v, want ErrInvalidPath", p, err)
		}
	}
	if _, err := persistent.New(s, testPath(t), persistent.WithData(make([]byte, s.MaxData()))); !errors.Is(err, recipes.ErrDataTooLarge) {
		t.Errorf("New with too much data: %v", err)
	}
	n := newNode(t, s, testPath(t)+"/n")
	if err := n.SetData(ctx, make([]byte, s.MaxData())); !errors.Is(err, recipes.ErrDataTooLarge) {
		t.Errorf("SetData with too much data: %v", err)
	}
	// A parent that is an ephemeral node cannot have children: Start
	// reports the server's answer and leaves the Node startable.
	eph := testPath(t) + "-eph"
	mkdirs(t, s, "/zkrecipes-test/persistent")
	if _, err := s.Conn().Create(eph, nil, zk.FlagEphemeral, testutil.ACL()); err != nil {
		t.Fatal(err)
	}
	child := newNode(t, s, eph+"/child")
	if err := child.Start(ctx); !errors.Is(err, zk.ErrNoChildrenForEphemerals) {
		t.Errorf("Start under an ephemeral node: %v", err)
	}
	if c := context.Cause(child.Present()); !errors.Is(c, persistent.ErrNotStarted) {
		t.Errorf("Present after a failed Start: %v", c)
	}
	if got := children(t, s, testPath(t)); got != nil {
		t.Errorf("bad input wrote %s: %v", testPath(t), got)
	}
	if got := children(t, s, eph); len(got) != 0 {
		t.Errorf("bad input wrote under %s: %v", eph, got)
	}
}

// TestLifecycle: Start creates an ephemeral node of our session with the
// data, under container parents; Leave deletes it, ends Present with
// ErrReleased, and the Node stays closed.
func TestLifecycle(t *testing.T) {
	e := ensemble(t)
	s, counter := testutil.CountedSession(t, e.Addrs())
	ctx := ctxT(t, time.Minute)
	path := fmt.Sprintf("%s/%d/a/b/node", testPath(t), time.Now().UnixNano()) // 3 levels missing
	n := newNode(t, s, path, persistent.WithData([]byte("hello")))
	if err := n.Start(ctx); err != nil {
		t.Fatal(err)
	}
	// The three missing levels are made with createContainer (ZooKeeper's
	// stat does not show a container): the node's first create fails for
	// want of them, the second makes it; then the exists of its watch.
	// Both creates are the Session's first under the node's parent: in the
	// secured pass the open-parent check reads the parent's ACL before
	// each (missing the first time, so not remembered), 2 getACL.
	getACL := testutil.FirstCreateUnder(2, nil)[zkcount.OpGetACL]
	if d := counter.Snapshot(); d.Req(zkcount.OpCreate) != 2 || d.Req(zkcount.OpCreateContainer) < 3 ||
		d.Req(zkcount.OpExists) != 1 || d.Req(zkcount.OpGetACL) != getACL ||
		d.Total() != 3+getACL+d.Req(zkcount.OpCreateContainer) {
		t.Errorf("Start with missing parents: %v", d.Requests)
	}
	if err := n.Start(ctx); !errors.Is(err, persistent.ErrStarted) {
		t.Errorf("second Start: %v", err)
	}
	data, st, ok := stat(t, s, path)
	if !ok || string(data) != "hello" || st.EphemeralOwner != s.ID() {
		t.Fatalf("node %s: found %v, data %q, owner 0x%x; want ours with hello", path, ok, data, st.EphemeralOwner)
	}
	present := n.Present()
	if present.Err() != nil || n.Path() != path {
		t.Fatalf("Present %v, Path %q", context.Cause(present), n.Path())
	}
	if err := n.Leave(ctx); err != nil {
		t.Fatal(err)
	}
	if _, _, ok := stat(t, s, path); ok {
		t.Error("node left after Leave")
	}
	if c := context.Cause(present); !errors.Is(c, recipes.ErrReleased) {
		t.Errorf("Present after Leave: %v", c)
	}
	// The Node's goroutine is gone with Leave, the session still open.
	if left := testutil.Settle(5*time.Second, func(g string) bool { return strings.Contains(g, "zkrecipes/persistent.") }); len(left) > 0 {
		t.Errorf("goroutines left after Leave:\n%s", strings.Join(left, "\n\n"))
	}
	if err := n.Leave(ctx); err != nil {
		t.Errorf("Leave again: %v", err)
	}
	if err := n.Start(ctx); !errors.Is(err, persistent.ErrClosed) {
		t.Errorf("Start after Leave: %v", err)
	}
	if err := n.SetData(ctx, nil); !errors.Is(err, persistent.ErrClosed) {
		t.Errorf("SetData after Leave: %v", err)
	}
}

// TestRecreatedAfterDeletion: another client deletes the node; Present is
// done (ErrNodeDeleted) and the node comes back with the latest data, a
// plain node at its path, a protected one at a new path.
func TestRecreatedAfterDeletion(t *testing.T) {
	for _, protected := range []bool{false, true} {
		name := "plain"
		var opts []persistent.Option
		if protected {
			name = "protected"
			opts = append(opts, persistent.WithProtected())
		}
		t.Run(name, func(t *testing.T) {
			e := ensemble(t)
			s := connect(t, e.Addrs())
			other := connect(t, e.Addrs())
			ctx := ctxT(t, time.Minute)
			path := testPath(t) + "/member-"
			n := started(t, ctx, s, path, append(opts, persistent.WithData([]byte("v1")))...)
			if err := n.SetData(ctx, []byte("v2")); err != nil {
				t.Fatal(err)
			}
			first, p1 := n.Present(), n.Path()
			_, st1, _ := stat(t, s, p1)
			if protected {
				parent, base := zkpath.Split(p1)
				if parent != testPath(t) || !strings.HasPrefix(base, "_c_") || !strings.HasSuffix(strings.TrimRight(base, "0123456789"), "-member-") || len(base) != 3+36+1+len("member-")+10 {
					t.Fatalf("protected path %s", p1)
				}
			} else if p1 != path {
				t.Fatalf("Path %s, want %s", p1, path)
			}
			for round := range 3 {
				if err := other.Conn().Delete(n.Path(), -1); err != nil {
					t.Fatal(err)
				}
				if c := waitDone(t, first, 10*time.Second, "Present done"); !errors.Is(c, recipes.ErrNodeDeleted) {
					t.Fatalf("round %d: cause %v, want ErrNodeDeleted", round, c)
				}
				next := waitPresent(t, n, first)
				p2 := n.Path()
				data, st2, ok := stat(t, s, p2)
				if !ok || string(data) != "v2" || st2.EphemeralOwner != s.ID() || st2.Czxid <= st1.Czxid {
					t.Fatalf("round %d: re-created %s: found %v, data %q, owner 0x%x, czxid %d after %d", round, p2, ok, data, st2.EphemeralOwner, st2.Czxid, st1.Czxid)
				}
				if protected == (p2 == p1) {
					t.Fatalf("round %d: path %s after %s", round, p2, p1)
				}
				if got := children(t, s, testPath(t)); len(got) != 1 {
					t.Fatalf("round %d: nodes %v, want 1", round, got)
				}
				first, p1, st1 = next, p2, st2
			}
		})
	}
}

// TestRecreatedAfterExpiry: the node's session expires; Present is done
// (ErrSessionLost) and the node comes back under the new session with the
// latest data, including data set while it was absent.
func TestRecreatedAfterExpiry(t *testing.T) {
	for _, protected := range []bool{false, true} {
		name := "plain"
		var opts []persistent.Option
		if protected {
			name = "protected"
			opts = append(opts, persistent.WithProtected())
		}
		t.Run(name, func(t *testing.T) {
			e := ensemble(t)
			s, link := private(t, e, "expiry")
			watcher := connect(t, e.Addrs())
			ctx := ctxT(t, 2*time.Minute)
			n := started(t, ctx, s, testPath(t)+"/node", append(opts, persistent.WithData([]byte("v1")))...)
			present, old := n.Present(), s.ID()
			p1 := n.Path()
			if err := link.ExpireSession(ctx, old); err != nil {
				t.Fatal(err)
			}
			if c := waitDone(t, present, 20*time.Second, "Present done"); !errors.Is(c, recipes.ErrSessionLost) {
				t.Fatalf("cause %v, want ErrSessionLost", c)
			}
			// Data set while absent (or just back): SetData returns once
			// a node of ours carries it.
			if err := n.SetData(ctx, []byte("v2")); err != nil {
				t.Fatal(err)
			}
			waitPresent(t, n, present)
			if s.ID() == old {
				t.Fatal("same session after expiry")
			}
			p2 := n.Path()
			data, st, ok := stat(t, watcher, p2)
			if !ok || string(data) != "v2" || st.EphemeralOwner != s.ID() {
				t.Fatalf("re-created %s: found %v, data %q, owner 0x%x (session 0x%x)", p2, ok, data, st.EphemeralOwner, s.ID())
			}
			if protected == (p1 == p2) {
				t.Fatalf("path %s after %s", p2, p1)
			}
			if got := children(t, watcher, testPath(t)); len(got) != 1 {
				t.Fatalf("nodes %v, want 1", got)
			}
		})
	}
}

// TestTakenPath: a plain path held by another session's node is waited
// for: Start with a short ctx fails with ErrTaken and leaves the other node
// alone; once the holder's session dies (its process gone, nothing
// closed), the node is ours within about a session timeout.
func TestTakenPath(t *testing.T) {
	e := ensemble(t)
	s, counter := testutil.CountedSession(t, e.Addrs())
	holder, link := private(t, e, "holder")
	ctx := ctxT(t, 2*time.Minute)
	path := testPath(t) + "/member"
	mkdirs(t, holder, testPath(t))
	if _, err := holder.Conn().Create(path, []byte("old"), zk.FlagEphemeral, testutil.ACL()); err != nil {
		t.Fatal(err)
	}
	n := newNode(t, s, path, persistent.WithData([]byte("new")))
	short, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancel()
	before := counter.Snapshot()
	err := n.Start(short)
	if !errors.Is(err, persistent.ErrTaken) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Start on a taken path: %v", err)
	}
	// The create answered "exists", 1 getData found another owner, 1
	// exists set the watch that waits for it to go. The create is the
	// Session's first under testPath (made by mkdirs): in the secured pass
	// the open-parent check reads its ACL first.
	testutil.WantOps(t, "waiting for a taken path", counter.Snapshot().Sub(before),
		testutil.FirstCreateUnder(1, map[zkcount.Op]int64{zkcount.OpCreate: 1, zkcount.OpGetData: 1, zkcount.OpExists: 1}))
	if data, st, ok := stat(t, s, path); !ok || string(data) != "old" || st.EphemeralOwner != holder.ID() {
		t.Fatalf("the holder's node was touched: found %v, data %q", ok, data)
	}
	// The holder's process dies: its link goes silent, its session
	// expires on the server.
	if err := link.Blackhole(); err != nil {
		t.Fatal(err)
	}
	died := time.Now()
	if err := n.Start(ctx); err != nil {
		t.Fatal(err)
	}
	took := time.Since(died)
	t.Logf("ours %v after the holder went silent (session timeout %v)", took, sessionTimeout)
	if took > sessionTimeout+2*time.Second {
		t.Errorf("took %v, more than a session timeout", took)
	}
	if data, st, ok := stat(t, s, path); !ok || string(data) != "new" || st.EphemeralOwner != s.ID() {
		t.Fatalf("node after Start: found %v, data %q", ok, data)
	}
	if err := n.Leave(ctx); err != nil {
		t.Fatal(err)
	}
	if _, _, ok := stat(t, s, path); ok {
		t.Fatal("node left after Leave")
	}
}

// TestForeignData: data written by someone else is left alone (no fight),
// Present stays, and the next SetData writes ours over it.
func TestForeignData(t *testing.T) {
	e := ensemble(t)
	s, counter := testutil.CountedSession(t, e.Addrs())
	other := connect(t, e.Addrs())
	ctx := ctxT(t, time.Minute)
	path := testPath(t) + "/node"
	n := started(t, ctx, s, path, persistent.WithData([]byte("ours")))
	present := n.Present()
	before := counter.Snapshot()
	if _, err := other.Conn().Set(path, []byte("theirs"), -1); err != nil {
		t.Fatal(err)
	}
	// The Node sees the change (its watch fires and is set again: 1
	// exists) and writes nothing.
	waitFor(t, 10*time.Second, "the Node's watch set again", func() bool {
		return counter.Snapshot().Sub(before).Req(zkcount.OpExists) == 1
	})
	d := counter.Snapshot().Sub(before)
	testutil.WantOps(t, "a foreign write", d, map[zkcount.Op]int64{zkcount.OpExists: 1})
	if data, _, _ := stat(t, other, path); string(data) != "theirs" {
		t.Fatalf("data %q: the Node wrote back", data)
	}
	if present.Err() != nil || n.Present() != present {
		t.Fatalf("Present changed: %v", context.Cause(present))
	}
	if err := n.SetData(ctx, []byte("ours again")); err != nil {
		t.Fatal(err)
	}
	if data, _, _ := stat(t, other, path); string(data) != "ours again" {
		t.Fatalf("data %q after SetData", data)
	}
}

// TestConcurrentSetData: SetData from many goroutines; each returns once
// its data or a later one is on the node, and the node ends with the last.
func TestConcurrentSetData(t *testing.T) {
	e := ensemble(t)
	s := connect(t, e.Addrs())
	ctx := ctxT(t, time.Minute)
	path := testPath(t) + "/node"
	n := started(t, ctx, s, path)
	errs := make(chan error, 20)
	for i := range 20 {
		go func() { errs <- n.SetData(ctx, []byte{byte(i)}) }()
	}
	for range 20 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	want := n.Data()
	if data, _, _ := stat(t, s, path); string(data) != string(want) {
		t.Fatalf("node has %v, the Node's data is %v", data, want)
	}
}

// TestSessionClosed: closing the Session ends Present (ErrClosed, which
// matches ErrSessionLost) and the Node's goroutine (the leak check), and
// the Node's methods say so.
func TestSessionClosed(t *testing.T) {
	e := ensemble(t)
	s := connect(t, e.Addrs())
	watcher := connect(t, e.Addrs())
	ctx := ctxT(t, time.Minute)
	path := testPath(t) + "/node"
	n := started(t, ctx, s, path)
	present := n.Present()
	if err := s.CloseContext(ctx); err != nil {
		t.Fatal(err)
	}
	c := waitDone(t, present, 10*time.Second, "Present done")
	if !errors.Is(c, recipes.ErrClosed) || !errors.Is(c, recipes.ErrSessionLost) {
		t.Fatalf("cause %v", c)
	}
	if _, _, ok := stat(t, watcher, path); ok {
		t.Error("node left after the session closed")
	}
	if err := n.SetData(ctx, []byte("x")); !errors.Is(err, recipes.ErrClosed) {
		t.Errorf("SetData on a closed session: %v", err)
	}
	if err := n.Leave(ctx); err != nil {
		t.Errorf("Leave: %v", err)
	}
	// A Node started on a closed session fails at once.
	m := newNode(t, s, path)
	if err := m.Start(ctx); !errors.Is(err, recipes.ErrClosed) {
		t.Errorf("Start on a closed session: %v", err)
	}
}

// TestStartCancelled: a Start whose ctx ends while the path is held leaves
// nothing; a Start that succeeded and a Leave with a done ctx still delete
// the node (in the background).
func TestStartCancelled(t *testing.T) {
	e := ensemble(t)
	s := connect(t, e.Addrs())
	ctx := ctxT(t, time.Minute)
	path := testPath(t) + "/node"
	n := started(t, ctx, s, path)
	done, cancel := context.WithCancel(ctx)
	cancel()
	if err := n.Leave(done); err != nil {
		t.Fatalf("Leave with a done ctx: %v", err)
	}
	waitFor(t, 10*time.Second, "the node deleted in the background", func() bool {
		_, _, ok := stat(t, s, path)
		return !ok
	})
}

// TestSuspended: a connection lost for less than the session timeout does
// not end Present (the node stays on the server), and nothing is
// re-created.
func TestSuspended(t *testing.T) {
	e := ensemble(t)
	s, link := private(t, e, "suspend")
	watcher := connect(t, e.Addrs())
	ctx := ctxT(t, time.Minute)
	path := testPath(t) + "/node"
	n := started(t, ctx, s, path)
	present := n.Present()
	_, st, _ := stat(t, watcher, path)
	sub := s.Subscribe()
	defer sub.Close()
	if err := link.Cut(); err != nil {
		t.Fatal(err)
	}
	for {
		c, err := sub.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if c.State == recipes.StateSuspended {
			break
		}
	}
	if err := link.Restore(); err != nil {
		t.Fatal(err)
	}
	for {
		c, err := sub.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if c.State == recipes.StateReconnected {
			break
		}
		if c.State == recipes.StateLost {
			t.Fatal("session lost during a short cut")
		}
	}
	if present.Err() != nil || n.Present() != present {
		t.Fatalf("Present ended by a suspension: %v", context.Cause(present))
	}
	if _, st2, ok := stat(t, watcher, path); !ok || st2.Czxid != st.Czxid {
		t.Fatal("node re-created after a suspension")
	}
	// Still kept: a deletion now is repaired.
	if err := watcher.Conn().Delete(path, -1); err != nil {
		t.Fatal(err)
	}
	waitPresent(t, n, present)
}

// TestLostThenSameSessionBack: the lease reports the session lost while the
// server still has it (a half-open link: requests arrive, replies do not);
// Present is done (ErrSessionLost). When the same session comes back, the
// node is checked, kept (same path, same czxid: a protected node is not
// duplicated) and Present is a new context.
func TestLostThenSameSessionBack(t *testing.T) {
	for _, protected := range []bool{false, true} {
		name := "plain"
		var opts []persistent.Option
		if protected {
			name = "protected"
			opts = append(opts, persistent.WithProtected())
		}
		t.Run(name, func(t *testing.T) {
			e := ensemble(t)
			// A longer timeout: the server must still have the session when
			// the link heals after the lease's Lost.
			s, link := private(t, e, "lease-back", recipes.WithSessionTimeout(6*time.Second))
			watcher := connect(t, e.Addrs())
			ctx := ctxT(t, 2*time.Minute)
			n := started(t, ctx, s, testPath(t)+"/node", opts...)
			present, path, sid := n.Present(), n.Path(), s.ID()
			_, st, _ := stat(t, watcher, path)
			sub := s.Subscribe()
			defer sub.Close()
			if err := link.HalfOpen(); err != nil {
				t.Fatal(err)
			}
			if c := waitDone(t, present, 20*time.Second, "Present done"); !errors.Is(c, recipes.ErrSessionLost) {
				t.Fatalf("cause %v, want ErrSessionLost", c)
			}
			if err := link.Heal(); err != nil {
				t.Fatal(err)
			}
			if err := link.Cut(); err != nil { // drop the connection stuck in its handshake
				t.Fatal(err)
			}
			if err := link.Restore(); err != nil {
				t.Fatal(err)
			}
			for {
				c, err := sub.Next(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if c.State == recipes.StateReconnected && c.SessionID == sid {
					break
				}
				if c.State == recipes.StateConnected && c.SessionID != sid {
					t.Fatalf("a new session 0x%x: the server expired 0x%x", c.SessionID, sid)
				}
			}
			waitPresent(t, n, present)
			if n.Path() != path {
				t.Fatalf("path %s, was %s", n.Path(), path)
			}
			if _, st2, ok := stat(t, watcher, path); !ok || st2.Czxid != st.Czxid || st2.EphemeralOwner != sid {
				t.Fatalf("node changed: found %v", ok)
			}
			if got := children(t, watcher, testPath(t)); len(got) != 1 {
				t.Fatalf("nodes %v, want 1", got)
			}
		})
	}
}

// TestWritesWhileSuspended: while the connection is lost, SetData with a
// short ctx returns ctx's error but its data is recorded and written once
// the connection is back; Leave returns at once and the node is deleted in
// the background once it can be.
func TestWritesWhileSuspended(t *testing.T) {
	e := ensemble(t)
	s, link := private(t, e, "suspend")
	watcher := connect(t, e.Addrs())
	ctx := ctxT(t, time.Minute)
	path := testPath(t) + "/node"
	n := started(t, ctx, s, path, persistent.WithData([]byte("v1")))
	sub := s.Subscribe()
	defer sub.Close()
	if err := link.Cut(); err != nil {
		t.Fatal(err)
	}
	for {
		c, err := sub.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if c.State == recipes.StateSuspended {
			break
		}
	}
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	if err := n.SetData(short, []byte("v2")); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("SetData while suspended: %v", err)
	}
	if err := link.Restore(); err != nil {
		t.Fatal(err)
	}
	waitNode(t, watcher, path, s.ID(), []byte("v2"))

	if err := link.Cut(); err != nil {
		t.Fatal(err)
	}
	for {
		c, err := sub.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if c.State == recipes.StateSuspended {
			break
		}
	}
	begin := time.Now()
	if err := n.Leave(ctx); err != nil {
		t.Fatalf("Leave while suspended: %v", err)
	}
	if took := time.Since(begin); took > time.Second {
		t.Errorf("Leave while suspended took %v", took)
	}
	if _, _, ok := stat(t, watcher, path); !ok {
		t.Fatal("node gone while the link was cut")
	}
	if err := link.Restore(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the node deleted once the link is back", func() bool {
		_, _, ok := stat(t, watcher, path)
		return !ok
	})
}

// TestCreateRefused: a re-creation the server refuses (no create
// permission on the parent) is retried with a back-off, Present done
// meanwhile, and succeeds once the server allows it again.
func TestCreateRefused(t *testing.T) {
	e := ensemble(t)
	s := connect(t, e.Addrs())
	admin := connect(t, e.Addrs())
	ctx := ctxT(t, time.Minute)
	parent := testPath(t)
	n := started(t, ctx, s, parent+"/node")
	present := n.Present()
	if _, err := admin.Conn().SetACL(parent, zk.WorldACL(zk.PermRead|zk.PermDelete|zk.PermAdmin), -1); err != nil {
		t.Fatal(err)
	}
	if err := admin.Conn().Delete(parent+"/node", -1); err != nil {
		t.Fatal(err)
	}
	if c := waitDone(t, present, 10*time.Second, "Present done"); !errors.Is(c, recipes.ErrNodeDeleted) {
		t.Fatalf("cause %v", c)
	}
	// Refused, again and again: still absent a while later.
	deadline := time.Now().Add(time.Second)
	for time.Now().Before(deadline) {
		if _, _, ok := stat(t, admin, parent+"/node"); ok || n.Present().Err() == nil {
			t.Fatal("node created without permission")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, err := admin.Conn().SetACL(parent, zk.WorldACL(zk.PermAll), -1); err != nil {
		t.Fatal(err)
	}
	begin := time.Now()
	waitPresent(t, n, present)
	t.Logf("back %v after the permission was restored (back-off up to the session timeout, %v)", time.Since(begin), sessionTimeout)
	if took := time.Since(begin); took > sessionTimeout+sessionTimeout/2 { // slack for a loaded machine
		t.Errorf("took %v", took)
	}
	waitNode(t, admin, parent+"/node", s.ID(), nil)
}
