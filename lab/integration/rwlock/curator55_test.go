package rwlock_test

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"

	"github.com/go-zookeeper/zk"
	"github.com/google/uuid"
	"github.com/zkrecipes/zkrecipes/lab/internal/peers"
	"github.com/zkrecipes/zkrecipes/lab/internal/zkcount"
	"github.com/zkrecipes/zkrecipes/recipes"
	"github.com/zkrecipes/zkrecipes/rwlock"
	"github.com/zkrecipes/zkrecipes/testenv"
)

// curator55 emulates, with raw requests of its own session, a Curator 5.5+
// InterProcessReadWriteLock writer (CURATOR-621): it queues a protected
// sequential write node, and its downgrade creates a plain EPHEMERAL (not
// sequential) read node, protected with a fresh guid of its own and named
// after the write node's sequence, _c_<uuid36>-__READ__<sequence>, then
// deletes the write node. That read node sorts where the write node was:
// ahead of every writer already queued behind it. Curator 5.7.1 writes
// exactly that (curatorPeer checks it).
type curator55 struct {
	t     *testing.T
	s     *recipes.Session
	path  string
	guid  string
	write string // full path of the write node
	read  string // full path of the downgrade's read node, once created
}

func newCurator55(t *testing.T, s *recipes.Session, path string) *curator55 {
	t.Helper()
	c := &curator55{t: t, s: s, path: path, guid: uuid.NewString()}
	w, err := s.Conn().Create(fmt.Sprintf("%s/_c_%s-__WRIT__", path, c.guid), nil, zk.FlagEphemeralSequential, testutil.ACL())
	if err != nil {
		t.Fatalf("curator writer: %v", err)
	}
	c.write = w
	return c
}

// downgrade creates the read node, then deletes the write node, as
// Curator 5.5+ does.
func (c *curator55) downgrade() {
	c.t.Helper()
	seq := c.write[len(c.write)-10:]
	r, err := c.s.Conn().Create(fmt.Sprintf("%s/_c_%s-__READ__%s", c.path, uuid.NewString(), seq), nil, zk.FlagEphemeral, testutil.ACL())
	if err != nil {
		c.t.Fatalf("curator downgrade: %v", err)
	}
	if m := readNodeName.FindStringSubmatch(r[len(c.path)+1:]); m == nil || m[1] != seq {
		c.t.Fatalf("emulated read node %s is not Curator's form", r)
	}
	c.read = r
	if err := c.s.Conn().Delete(c.write, -1); err != nil {
		c.t.Fatalf("curator downgrade: delete write node: %v", err)
	}
}

// runlock deletes the downgraded read node.
func (c *curator55) runlock() {
	c.t.Helper()
	if err := c.s.Conn().Delete(c.read, -1); err != nil {
		c.t.Fatalf("curator runlock: %v", err)
	}
}

// downgrader is a Curator 5.5+ InterProcessReadWriteLock writer that holds
// the write lock: the raw emulation (curator55) or the real Curator 5.7.1
// (curatorPeer).
type downgrader interface {
	// downgrade takes the read lock and releases the write lock.
	downgrade()
	// runlock releases the read lock.
	runlock()
	// readNode is the read node's full path, once downgraded.
	readNode() string
}

func (c *curator55) readNode() string { return c.read }

// emulated makes the raw emulation of a Curator 5.5+ writer on path.
func emulated(t *testing.T, e *testenv.Ensemble, path string) downgrader {
	return newCurator55(t, connect(t, e.Addrs()), path)
}

// curatorPeer is a real Curator InterProcessReadWriteLock writer: a Java
// peer of peers.Testing (Curator 5.7.1, run in a container).
type curatorPeer struct {
	t     *testing.T
	p     *peers.Peer
	admin *recipes.Session
	path  string
	write string // the write node's name
	read  string // full path of the downgrade's read node, once created
}

// realCurator starts a Curator 5.7.1 peer and takes the write lock on path
// (it is free: the peer holds it once rw-wlock returns).
func realCurator(t *testing.T, e *testenv.Ensemble, path string) downgrader {
	t.Helper()
	if testutil.Secure() {
		// The secured pass's ensembles take TLS and digest only; the plain
		// pass runs this test.
		t.Skip("the Curator peer speaks neither TLS nor digest here; the plain pass runs this test")
	}
	ctx := testCtx(t, 15*time.Minute)
	rel := peers.Testing
	if err := rel.EnsureImage(ctx, nil); err != nil {
		t.Fatalf("peer image: %v", err)
	}
	p, err := rel.Start(ctx, peers.Curator, e.ConnectString(), 4*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	c := &curatorPeer{t: t, p: p, admin: connect(t, e.Addrs()), path: path}
	if _, err := p.Do(ctx, "rw-wlock "+path); err != nil {
		t.Fatalf("Curator %s write lock: %v", rel.Curator, err)
	}
	children := rawChildren(t, c.admin, path)
	if len(children) != 1 || !strings.Contains(children[0], "__WRIT__") {
		t.Fatalf("Curator's write lock left %v, want one write node", children)
	}
	c.write = children[0]
	return c
}

// readNodeName is the read node of a Curator 5.5+ downgrade:
// _c_<uuid36>-__READ__ and the write node's 10-digit sequence, no sequence
// of its own.
var readNodeName = regexp.MustCompile(`^_c_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}-__READ__([0-9]{10})$`)

// downgrade has Curator take its read lock and release its write lock, and
// checks that what it left is what curator55 emulates: one plain
// ephemeral node of its session, _c_<uuid36>-__READ__<the write node's
// sequence>, and no write node.
func (c *curatorPeer) downgrade() {
	c.t.Helper()
	if _, err := c.p.Do(testCtx(c.t, time.Minute), "rw-downgrade "+c.path); err != nil {
		c.t.Fatalf("Curator downgrade: %v", err)
	}
	var ours []string
	for _, n := range rawChildren(c.t, c.admin, c.path) {
		_, st, err := c.admin.Conn().Get(c.path + "/" + n)
		if err != nil {
			c.t.Fatal(err)
		}
		if st.EphemeralOwner == c.p.SessionID {
			ours = append(ours, n)
		}
	}
	seq := c.write[len(c.write)-10:]
	if len(ours) != 1 || readNodeName.FindStringSubmatch(ours[0]) == nil || readNodeName.FindStringSubmatch(ours[0])[1] != seq {
		c.t.Fatalf("after Curator's downgrade its session's nodes are %v, want only _c_<uuid36>-__READ__%s (the emulation's read node)", ours, seq)
	}
	c.read = c.path + "/" + ours[0]
}

func (c *curatorPeer) runlock() {
	c.t.Helper()
	if _, err := c.p.Do(testCtx(c.t, time.Minute), "rw-runlock "+c.path); err != nil {
		c.t.Fatalf("Curator runlock: %v", err)
	}
}

func (c *curatorPeer) readNode() string { return c.read }

// queued is one Go contender waiting in Lock or RLock on a counted session.
type queued struct {
	m     *rwlock.RWMutex
	c     *zkcount.Counter
	done  <-chan error
	start zkcount.Counts
}

func queue(t *testing.T, addrs []string, path string, ctx context.Context, write bool) *queued {
	t.Helper()
	s, c := countedSession(t, addrs)
	q := &queued{m: newRW(t, s, path), c: c, start: c.Snapshot()}
	f := q.m.Reader().Lock
	if write {
		f = q.m.Lock
	}
	q.done = async(func() error { return f(ctx) })
	waitFor(t, waitLong, "contender watching the node ahead", func() bool {
		return c.Snapshot().Sub(q.start).Req(zkcount.OpGetData) == 1
	})
	return q
}

// settledOrReturned waits until q returned, or until, since snap, it has
// listed the path again and set a watch after that (so it has acted on the
// wake-up and is waiting again). It reports whether q returned.
func (q *queued) settledOrReturned(t *testing.T, snap zkcount.Counts, gets int64) bool {
	t.Helper()
	returned := false
	waitFor(t, waitLong, "contender to act on its wake-up", func() bool {
		if !pending(q.done) {
			returned = true
			return true
		}
		d := q.c.Snapshot().Sub(snap)
		return d.Req(zkcount.OpGetChildren2) >= 1 && d.Req(zkcount.OpGetData) >= gets
	})
	return returned
}

// TestWriterBehindCurator55Downgrade: a Go writer queued right behind a
// Curator 5.5+ writer must not take the lock when that writer downgrades
// (its plain-ephemeral read node sorts ahead of the Go writer, which was
// woken by the write node's deletion); it gets the lock once the read node
// is deleted.
func TestWriterBehindCurator55Downgrade(t *testing.T) { writerBehindDowngrade(t, emulated) }

// TestWriterBehindCurator571Downgrade is TestWriterBehindCurator55Downgrade
// with the real Curator 5.7.1 as the downgrading writer.
func TestWriterBehindCurator571Downgrade(t *testing.T) { writerBehindDowngrade(t, realCurator) }

func writerBehindDowngrade(t *testing.T, mk func(*testing.T, *testenv.Ensemble, string) downgrader) {
	e := ensemble(t)
	path := testPath(t)
	admin := connect(t, e.Addrs())
	ensurePath(t, admin, path)
	cur := mk(t, e, path)
	ctx := testCtx(t, time.Minute)
	g := queue(t, e.Addrs(), path, ctx, true)

	snap := g.c.Snapshot()
	cur.downgrade()
	if g.settledOrReturned(t, snap, 1) {
		t.Fatalf("Go writer returned from Lock (%v) while Curator's downgraded read node %s exists", <-g.done, cur.readNode())
	}
	cur.runlock()
	if err := recv(t, g.done, waitLong, "Go writer after the read node went"); err != nil {
		t.Fatal(err)
	}
	if err := g.m.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestWritersBehindCurator55Downgrade: the same with two Go writers queued
// behind the Curator writer. The second one has two nodes ahead of it; when
// the first gives up (ctx cancelled) while the read node exists, the second
// is woken with a list that no longer shows anything ahead of it but the
// (departed) Curator write node, and still must not take the lock.
func TestWritersBehindCurator55Downgrade(t *testing.T) { writersBehindDowngrade(t, emulated) }

// TestWritersBehindCurator571Downgrade is TestWritersBehindCurator55Downgrade
// with the real Curator 5.7.1 as the downgrading writer.
func TestWritersBehindCurator571Downgrade(t *testing.T) { writersBehindDowngrade(t, realCurator) }

func writersBehindDowngrade(t *testing.T, mk func(*testing.T, *testenv.Ensemble, string) downgrader) {
	e := ensemble(t)
	path := testPath(t)
	admin := connect(t, e.Addrs())
	ensurePath(t, admin, path)
	cur := mk(t, e, path)
	ctx := testCtx(t, time.Minute)
	ctx1, cancel1 := context.WithCancel(ctx)
	defer cancel1()
	g1 := queue(t, e.Addrs(), path, ctx1, true)
	g2 := queue(t, e.Addrs(), path, ctx, true)

	snap1 := g1.c.Snapshot()
	cur.downgrade()
	if g1.settledOrReturned(t, snap1, 1) {
		t.Fatalf("first Go writer returned from Lock (%v) while Curator's read node %s exists", <-g1.done, cur.readNode())
	}
	snap2 := g2.c.Snapshot()
	cancel1()
	if err := recv(t, g1.done, waitLong, "first Go writer giving up"); !errors.Is(err, context.Canceled) {
		t.Fatalf("first Go writer: Lock = %v, want context.Canceled", err)
	}
	if g2.settledOrReturned(t, snap2, 2) {
		t.Fatalf("second Go writer returned from Lock (%v) while Curator's read node %s exists", <-g2.done, cur.readNode())
	}
	cur.runlock()
	if err := recv(t, g2.done, waitLong, "second Go writer after the read node went"); err != nil {
		t.Fatal(err)
	}
	if err := g2.m.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestReaderAndWriterBehindCurator55Downgrade: a Go reader and then a Go
// writer queue behind the Curator writer. The downgrade lets the reader in
// (readers share); the reader's release wakes the writer, whose list then
// shows nothing ahead but the departed Curator write node: it must still
// wait for Curator's read node.
func TestReaderAndWriterBehindCurator55Downgrade(t *testing.T) {
	readerAndWriterBehindDowngrade(t, emulated)
}

// TestReaderAndWriterBehindCurator571Downgrade is
// TestReaderAndWriterBehindCurator55Downgrade with the real Curator 5.7.1 as
// the downgrading writer.
func TestReaderAndWriterBehindCurator571Downgrade(t *testing.T) {
	readerAndWriterBehindDowngrade(t, realCurator)
}

func readerAndWriterBehindDowngrade(t *testing.T, mk func(*testing.T, *testenv.Ensemble, string) downgrader) {
	e := ensemble(t)
	path := testPath(t)
	admin := connect(t, e.Addrs())
	ensurePath(t, admin, path)
	cur := mk(t, e, path)
	ctx := testCtx(t, time.Minute)
	r := queue(t, e.Addrs(), path, ctx, false)
	w := queue(t, e.Addrs(), path, ctx, true)

	cur.downgrade()
	if err := recv(t, r.done, waitLong, "Go reader beside Curator's read holder"); err != nil {
		t.Fatal(err)
	}
	snap := w.c.Snapshot()
	if err := r.m.Reader().Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if w.settledOrReturned(t, snap, 2) {
		t.Fatalf("Go writer returned from Lock (%v) while Curator's read node %s exists", <-w.done, cur.readNode())
	}
	cur.runlock()
	if err := recv(t, w.done, waitLong, "Go writer after the read node went"); err != nil {
		t.Fatal(err)
	}
	if err := w.m.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}
