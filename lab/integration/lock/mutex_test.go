package lock_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/internal/zkpath"
	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"github.com/zkrecipes/zkrecipes/lab/internal/zkcount"
	"github.com/zkrecipes/zkrecipes/lock"
	"github.com/zkrecipes/zkrecipes/recipes"
)

func ensurePath(t *testing.T, s *recipes.Session, p string, data []byte) {
	t.Helper()
	parent, _ := zkpath.Split(p)
	if parent != "/" {
		ensurePath(t, s, parent, nil)
	}
	if _, err := s.Conn().Create(p, data, 0, testutil.ACL()); err != nil && !errors.Is(err, zk.ErrNodeExists) {
		t.Fatalf("create %s: %v", p, err)
	}
}

type interval struct {
	from, to time.Time
	token    int64
}

// TestMutexFencedCounter: 8 sessions x 50 acquisitions, each incrementing a
// counter znode with a fenced write. The counter ends at exactly 400 and no
// two holdings overlap on the monotonic clock.
func TestMutexFencedCounter(t *testing.T) {
	e := ensemble(t)
	const sessions, rounds = 8, 50
	path := testPath(t)
	counter := path + "-counter"
	admin := connect(t, e.Addrs())
	ensurePath(t, admin, counter, nil)
	if _, err := admin.Conn().Set(counter, make([]byte, 8), -1); err != nil { // rerunnable with -count
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var (
		mu        sync.Mutex
		intervals []interval
		wg        sync.WaitGroup
		errs      = make(chan error, sessions)
	)
	for range sessions {
		s := connect(t, e.Addrs())
		m := newMutex(t, s, path)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range rounds {
				if err := m.Lock(ctx); err != nil {
					errs <- err
					return
				}
				from := time.Now()
				data, st, err := s.Conn().Get(counter)
				if err != nil {
					errs <- err
					return
				}
				next := binary.BigEndian.AppendUint64(nil, binary.BigEndian.Uint64(data)+1)
				if _, err := m.FencedMulti(ctx, &zk.SetDataRequest{Path: counter, Data: next, Version: st.Version}); err != nil {
					errs <- err
					return
				}
				token := m.Fence().Token
				to := time.Now()
				if _, st, err := s.Conn().Exists(m.Node()); err != nil || st.Czxid != token {
					errs <- fmt.Errorf("fencing token %d, node czxid %d (%v)", token, st.Czxid, err)
					return
				}
				if err := m.Unlock(ctx); err != nil {
					errs <- err
					return
				}
				mu.Lock()
				intervals = append(intervals, interval{from, to, token})
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	data, _, err := admin.Conn().Get(counter)
	if err != nil {
		t.Fatal(err)
	}
	if got := binary.BigEndian.Uint64(data); got != sessions*rounds {
		t.Fatalf("counter = %d, want %d", got, sessions*rounds)
	}
	slices.SortFunc(intervals, func(a, b interval) int { return a.from.Compare(b.from) })
	for i := 1; i < len(intervals); i++ {
		if intervals[i].from.Before(intervals[i-1].to) {
			t.Fatalf("holdings overlap: %v..%v and %v..%v", intervals[i-1].from, intervals[i-1].to, intervals[i].from, intervals[i].to)
		}
		if intervals[i].token <= intervals[i-1].token {
			t.Fatalf("fencing token did not grow across holders: %d then %d", intervals[i-1].token, intervals[i].token)
		}
	}
	if left := rawChildren(t, admin, path); len(left) != 0 {
		t.Fatalf("nodes left behind: %v", left)
	}
}

// TestMutexCancelWhileWaiting: a waiter whose ctx ends leaves no node.
func TestMutexCancelWhileWaiting(t *testing.T) {
	e := ensemble(t)
	path := testPath(t)
	a, b := connect(t, e.Addrs()), connect(t, e.Addrs())
	ctx := context.Background()
	holder := newMutex(t, a, path)
	if err := holder.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	waiter := newMutex(t, b, path)
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- waiter.Lock(wctx) }()
	waitFor(t, 10*time.Second, "two contenders", func() bool { return len(rawChildren(t, a, path)) == 2 })
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Lock = %v, want context.Canceled", err)
	}
	// Deleted before Lock returned: no waiting needed.
	if left := rawChildren(t, a, path); len(left) != 1 {
		t.Fatalf("children after cancel = %v, want only the holder", left)
	}
	if err := waiter.Unlock(ctx); !errors.Is(err, lock.ErrNotHeld) {
		t.Fatalf("Unlock after cancelled Lock = %v", err)
	}
	// A deadline while waiting behaves the same.
	tctx, cancel2 := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel2()
	if err := waiter.Lock(tctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Lock = %v, want deadline exceeded", err)
	}
	if left := rawChildren(t, a, path); len(left) != 1 {
		t.Fatalf("children after timeout = %v", left)
	}
	if err := holder.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if left := rawChildren(t, a, path); len(left) != 0 {
		t.Fatalf("children after unlock = %v", left)
	}
}

// errShutdown is a caller's own cancellation cause.
var errShutdown = errors.New("test: service shutting down")

// TestMutexCancelCauseWhileWaiting: a waiter cancelled through
// context.WithCancelCause gets an error that matches both context.Canceled
// and the caller's cause, and leaves no node.
func TestMutexCancelCauseWhileWaiting(t *testing.T) {
	e := ensemble(t)
	path := testPath(t)
	a, b := connect(t, e.Addrs()), connect(t, e.Addrs())
	ctx := context.Background()
	holder := newMutex(t, a, path)
	if err := holder.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	waiter := newMutex(t, b, path)
	wctx, cancel := context.WithCancelCause(ctx)
	done := make(chan error, 1)
	go func() { done <- waiter.Lock(wctx) }()
	waitFor(t, 10*time.Second, "two contenders", func() bool { return len(rawChildren(t, a, path)) == 2 })
	cancel(errShutdown)
	err := <-done
	if !errors.Is(err, context.Canceled) || !errors.Is(err, errShutdown) {
		t.Fatalf("Lock = %v, want an error matching context.Canceled and the cause", err)
	}
	if left := rawChildren(t, a, path); len(left) != 1 {
		t.Fatalf("children after cancel = %v, want only the holder", left)
	}
	// Already cancelled: nothing sent, same error.
	if err := waiter.Lock(wctx); !errors.Is(err, context.Canceled) || !errors.Is(err, errShutdown) {
		t.Fatalf("Lock(done ctx) = %v", err)
	}
	// A deadline with a cause: both match too.
	tctx, cancel2 := context.WithTimeoutCause(ctx, 300*time.Millisecond, errShutdown)
	defer cancel2()
	if err := waiter.Lock(tctx); !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, errShutdown) {
		t.Fatalf("Lock = %v, want deadline exceeded and the cause", err)
	}
	if err := holder.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if left := rawChildren(t, a, path); len(left) != 0 {
		t.Fatalf("children after unlock = %v", left)
	}
}

// warmUp locks and unlocks m once, so that its Session has made its first
// create under m's path: in the secured pass that first create is preceded
// by the open-parent check's getACL, which a half-open link would leave
// unanswered, and the create would never be sent. After warmUp the create
// is the first request of the next Lock.
func warmUp(t *testing.T, m *lock.Mutex) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := m.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestMutexAmbiguousCreate: the create's response is dropped (half-open
// link) after ZooKeeper applied it. Lock finds its node by GUID: exactly one
// node, and the lock is held.
func TestMutexAmbiguousCreate(t *testing.T) {
	e := ensemble(t)
	path := testPath(t)
	admin := connect(t, e.Addrs())
	ensurePath(t, admin, path, nil)
	link, err := e.NewLink("ambiguous")
	if err != nil {
		t.Fatal(err)
	}
	defer link.Close()
	s := connect(t, link.Addrs())
	m := newMutex(t, s, path)
	warmUp(t, m)
	if err := link.HalfOpen(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- m.Lock(ctx) }()
	// The create reaches the server; its answer does not reach us.
	waitFor(t, 10*time.Second, "the create applied", func() bool { return len(rawChildren(t, admin, path)) == 1 })
	// The lease may report the session lost right after suspended (at
	// T - lag without a reply); either state means the client noticed.
	waitFor(t, 10*time.Second, "the client to notice", func() bool {
		st := s.State()
		return st == recipes.StateSuspended || st == recipes.StateLost
	})
	if err := link.Heal(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("Lock = %v", err)
	}
	children := rawChildren(t, admin, path)
	if len(children) != 1 || zkpath.Join(path, children[0]) != m.Node() {
		t.Fatalf("children = %v, our node %s", children, m.Node())
	}
	if err := m.Context().Err(); err != nil {
		t.Fatalf("Context() = %v", context.Cause(m.Context()))
	}
	if err := m.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestMutexAmbiguousCreateFails: same, but ctx ends while the outcome is
// unknown. Lock fails cleanly and the node is removed once the link heals.
func TestMutexAmbiguousCreateFails(t *testing.T) {
	e := ensemble(t)
	path := testPath(t)
	admin := connect(t, e.Addrs())
	ensurePath(t, admin, path, nil)
	link, err := e.NewLink("ambiguous-fail")
	if err != nil {
		t.Fatal(err)
	}
	defer link.Close()
	s := connect(t, link.Addrs())
	m := newMutex(t, s, path)
	warmUp(t, m)
	if err := link.HalfOpen(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Lock(ctx) }()
	waitFor(t, 10*time.Second, "the create applied", func() bool { return len(rawChildren(t, admin, path)) == 1 })
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Lock = %v, want context.Canceled", err)
	}
	if err := link.Heal(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 15*time.Second, "the node cleaned up", func() bool { return len(rawChildren(t, admin, path)) == 0 })
	if s.State() == recipes.StateLost {
		t.Fatal("session lost; cleanup proved nothing")
	}
}

// TestMutexSessionExpiry: expiry while holding cancels Context() (even with
// StepDownOnLost: at the session's lease deadline, before the server
// expires it), and the old holder's fenced write is rejected.
func TestMutexSessionExpiry(t *testing.T) {
	e := ensemble(t)
	path := testPath(t)
	target := path + "-data"
	admin := connect(t, e.Addrs())
	ensurePath(t, admin, target, nil)
	link, err := e.NewLink("expiry")
	if err != nil {
		t.Fatal(err)
	}
	defer link.Close()
	s := connect(t, link.Addrs())
	m := newMutex(t, s, path, lock.WithLossPolicy(recipes.StepDownOnLost))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	held := m.Context()
	fence := m.Fence()
	if err := link.ExpireSession(ctx, s.ID()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-held.Done():
	case <-ctx.Done():
		t.Fatal("Context() not cancelled after expiry")
	}
	if cause := context.Cause(held); !errors.Is(cause, recipes.ErrLeaseExpired) {
		t.Fatalf("cause = %v, want ErrLeaseExpired", cause)
	}
	// Context() ended before the expiry; write once the client knows of it.
	waitFor(t, 20*time.Second, "the expiry to be learned", func() bool { return s.ID() != fence.SessionID })
	set := &zk.SetDataRequest{Path: target, Data: []byte("stale"), Version: -1}
	if _, err := m.FencedMulti(ctx, set); !errors.Is(err, recipes.ErrFenced) {
		t.Fatalf("fenced write after expiry = %v", err)
	}
	// ZooKeeper itself rejects the old fence, whoever sends it.
	if _, err := recipes.FencedMulti(ctx, admin, recipes.Fence{Path: fence.Path, SessionID: admin.ID(), Version: fence.Version}, set); !errors.Is(err, recipes.ErrFenced) || !errors.Is(err, zk.ErrNoNode) {
		t.Fatalf("server-side fenced write = %v", err)
	}
	if data, _, _ := admin.Conn().Get(target); string(data) == "stale" {
		t.Fatal("stale write applied")
	}
	if err := m.Unlock(ctx); !errors.Is(err, recipes.ErrReleased) || !errors.Is(err, context.Cause(held)) {
		t.Fatalf("Unlock after loss = %v, want recipes.ErrReleased and the loss's cause %v", err, context.Cause(held))
	}
	// The new session can take the lock again.
	waitFor(t, 20*time.Second, "a new session", func() bool { return s.State() == recipes.StateConnected })
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	if m.Fence().Token <= fence.Token {
		t.Fatalf("token did not grow: %d then %d", fence.Token, m.Fence().Token)
	}
	if err := m.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestMutexStepDownBeforeExpiry: with the default policy, a disconnect
// cancels Context() (cause ErrSuspended) while the server still keeps the
// session, i.e. before anyone else could acquire.
func TestMutexStepDownBeforeExpiry(t *testing.T) {
	e := ensemble(t)
	path := testPath(t)
	admin := connect(t, e.Addrs())
	link, err := e.NewLink("stepdown")
	if err != nil {
		t.Fatal(err)
	}
	defer link.Close()
	s := connect(t, link.Addrs())
	m := newMutex(t, s, path)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	held := m.Context()
	node := m.Node()
	if err := link.Blackhole(); err != nil {
		t.Fatal(err)
	}
	cut := time.Now()
	<-held.Done()
	stepped := time.Since(cut)
	if cause := context.Cause(held); !errors.Is(cause, recipes.ErrSuspended) {
		t.Fatalf("cause = %v, want ErrSuspended", cause)
	}
	ok, st, err := admin.Conn().Exists(node)
	if err != nil || !ok || st.EphemeralOwner != s.ID() {
		t.Fatalf("our node gone when we stepped down after %v: %v %v", stepped, ok, err)
	}
	if stepped >= sessionTimeout {
		t.Fatalf("stepped down after %v, session timeout %v", stepped, sessionTimeout)
	}
	t.Logf("stepped down %v after the disconnect, session timeout %v", stepped, sessionTimeout)
	if err := link.Heal(); err != nil {
		t.Fatal(err)
	}
	if err := m.Unlock(ctx); !errors.Is(err, recipes.ErrReleased) || !errors.Is(err, recipes.ErrSuspended) {
		t.Fatalf("Unlock after the step-down = %v, want recipes.ErrReleased and recipes.ErrSuspended", err)
	}
}

func TestMutexBadInput(t *testing.T) {
	e := ensemble(t)
	counter := zkcount.New()
	s := testutil.ConnectWrapped(t, e.Addrs(), counter.Wrap)
	ctx := context.Background()
	root := "/zkrecipes-test"
	before := counter.Snapshot()
	for _, p := range []string{"", "relative/path", root + "/trailing/", root + "/a/../b", root + "/a/./b", root + "//x", "/zookeeper/lock"} {
		if m, err := lock.New(s, p); m != nil || !errors.Is(err, recipes.ErrInvalidPath) {
			t.Errorf("New(%q) = %v, %v; want ErrInvalidPath", p, m, err)
		}
		if sem, err := lock.NewSemaphore(s, p, 1); sem != nil || !errors.Is(err, recipes.ErrInvalidPath) {
			t.Errorf("NewSemaphore(%q) = %v, %v; want ErrInvalidPath", p, sem, err)
		}
	}
	if _, err := lock.New(nil, root+"/x"); !errors.Is(err, recipes.ErrNilSession) {
		t.Errorf("New(nil session) = %v", err)
	}
	var nilMutex *lock.Mutex
	if err := nilMutex.Lock(ctx); !errors.Is(err, lock.ErrNilReceiver) {
		t.Errorf("nil Mutex Lock = %v", err)
	}
	if nilMutex.Context().Err() == nil || nilMutex.Node() != "" || nilMutex.Fence().Valid() {
		t.Error("nil Mutex accessors")
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	m := newMutex(t, s, testPath(t))
	if err := m.Lock(cancelled); !errors.Is(err, context.Canceled) {
		t.Errorf("Lock(cancelled) = %v", err)
	}
	if err := m.TryLock(cancelled); !errors.Is(err, context.Canceled) {
		t.Errorf("TryLock(cancelled) = %v", err)
	}
	if err := m.Unlock(ctx); !errors.Is(err, lock.ErrNotHeld) {
		t.Errorf("Unlock unheld = %v", err)
	}
	if _, err := m.FencedMulti(ctx); !errors.Is(err, lock.ErrNotHeld) {
		t.Errorf("FencedMulti unheld = %v", err)
	}
	if cause := context.Cause(m.Context()); !errors.Is(cause, lock.ErrNotHeld) {
		t.Errorf("Context() unheld cause = %v", cause)
	}
	for _, n := range []int{0, -3} {
		if _, err := lock.NewSemaphore(s, testPath(t), n); !errors.Is(err, lock.ErrPermits) {
			t.Errorf("NewSemaphore(%d) = %v", n, err)
		}
	}
	if _, err := lock.NewSemaphore(s, testPath(t), 1, lock.WithDialect(recipes.Kazoo)); !errors.Is(err, lock.ErrDialect) {
		t.Errorf("kazoo semaphore = %v", err)
	}
	if _, err := lock.New(s, testPath(t), lock.WithData(make([]byte, recipes.DefaultMaxData+1))); !errors.Is(err, recipes.ErrDataTooLarge) {
		t.Errorf("New with huge data = %v", err)
	}
	if err := lock.Revoke(ctx, s, "relative"); !errors.Is(err, recipes.ErrInvalidPath) {
		t.Errorf("Revoke(relative) = %v", err)
	}
	if err := lock.Revoke(ctx, nil, "/x"); !errors.Is(err, recipes.ErrNilSession) {
		t.Errorf("Revoke(nil session) = %v", err)
	}
	// None of the failed calls sent anything.
	if d := counter.Snapshot().Sub(before); d.Total() != 0 {
		t.Errorf("bad input sent requests: %v", d.Requests)
	}

	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := m.Lock(ctx); !errors.Is(err, lock.ErrAlreadyHeld) {
		t.Errorf("second Lock = %v", err)
	}
	if err := m.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := m.Unlock(ctx); !errors.Is(err, lock.ErrNotHeld) {
		t.Errorf("double Unlock = %v", err)
	}
	if left := rawChildren(t, s, testPath(t)); len(left) != 0 {
		t.Errorf("nodes left: %v", left)
	}

	closed := connect(t, e.Addrs())
	if err := closed.Close(); err != nil {
		t.Fatal(err)
	}
	if err := newMutex(t, closed, testPath(t)).Lock(ctx); !errors.Is(err, recipes.ErrClosed) {
		t.Errorf("Lock on closed session = %v", err)
	}
	if err := newMutex(t, closed, testPath(t)).TryLock(ctx); !errors.Is(err, recipes.ErrClosed) {
		t.Errorf("TryLock on closed session = %v", err)
	}
}

// TestMutexCloseWhileWaiting: closing the session ends a waiting Lock with
// ErrClosed, and the session's nodes are gone.
func TestMutexCloseWhileWaiting(t *testing.T) {
	e := ensemble(t)
	path := testPath(t)
	a, b := connect(t, e.Addrs()), connect(t, e.Addrs())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	holder := newMutex(t, a, path)
	if err := holder.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	waiter := newMutex(t, b, path)
	done := make(chan error, 1)
	go func() { done <- waiter.Lock(ctx) }()
	waitFor(t, 10*time.Second, "waiter queued", func() bool { return len(rawChildren(t, a, path)) == 2 })
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, recipes.ErrClosed) {
		t.Fatalf("Lock = %v, want ErrClosed", err)
	}
	waitFor(t, 10*time.Second, "waiter's node gone", func() bool { return len(rawChildren(t, a, path)) == 1 })
	held := holder.Context()
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if cause := context.Cause(held); !errors.Is(cause, recipes.ErrClosed) || !errors.Is(cause, recipes.ErrSessionLost) {
		t.Fatalf("Context() cause after Close = %v", cause)
	}
	if err := holder.Unlock(ctx); !errors.Is(err, recipes.ErrReleased) || !errors.Is(err, recipes.ErrClosed) {
		t.Fatalf("Unlock after Close = %v, want recipes.ErrReleased and recipes.ErrClosed", err)
	}
}

// TestMutexWaiterSurvivesCut: the holder releases while the waiter's
// connection is cut (shorter than the session timeout); once the link is
// restored, go-zookeeper re-sets the waiter's watch, the deletion is
// reported and the waiter takes the lock under its same session.
func TestMutexWaiterSurvivesCut(t *testing.T) {
	e := ensemble(t)
	path := testPath(t)
	link, err := e.NewLink("waiter-cut")
	if err != nil {
		t.Fatal(err)
	}
	defer link.Close()
	a, b := connect(t, e.Addrs()), connect(t, link.Addrs())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	holder, waiter := newMutex(t, a, path), newMutex(t, b, path)
	if err := holder.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	sid := b.ID()
	done := make(chan error, 1)
	go func() { done <- waiter.Lock(ctx) }()
	waitFor(t, 10*time.Second, "waiter queued", func() bool { return len(rawChildren(t, a, path)) == 2 })
	if err := link.Cut(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "waiter suspended", func() bool { return b.State() == recipes.StateSuspended })
	if err := holder.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := link.Restore(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if b.ID() != sid || waiter.Context().Err() != nil {
		t.Fatalf("session 0x%x -> 0x%x, held: %v", sid, b.ID(), context.Cause(waiter.Context()))
	}
	if err := waiter.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestMutexGuaranteedDelete: Unlock while the link silently drops
// everything; the delete's outcome is unknown, so it is retried in the
// background and the node disappears once the link heals, under the same
// session.
func TestMutexGuaranteedDelete(t *testing.T) {
	e := ensemble(t)
	path := testPath(t)
	link, err := e.NewLink("guaranteed-delete")
	if err != nil {
		t.Fatal(err)
	}
	defer link.Close()
	admin, s := connect(t, e.Addrs()), connect(t, link.Addrs(), recipes.WithSessionTimeout(4*time.Second))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	m := newMutex(t, s, path, lock.WithLossPolicy(recipes.StepDownOnLost))
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	sid := s.ID()
	if err := link.Blackhole(); err != nil {
		t.Fatal(err)
	}
	if err := m.Unlock(ctx); err != nil {
		t.Fatalf("Unlock = %v", err)
	}
	if n := len(rawChildren(t, admin, path)); n != 1 {
		t.Fatalf("%d nodes while blackholed, want 1 (the delete cannot have arrived)", n)
	}
	// go-zookeeper has already redialled into the blackhole, and its
	// handshake would wait 10x its receive timeout for an answer that was
	// dropped: cut those connections, heal, and accept new ones.
	if err := link.Cut(); err != nil {
		t.Fatal(err)
	}
	if err := link.Heal(); err != nil {
		t.Fatal(err)
	}
	if err := link.Restore(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 15*time.Second, "the node deleted in the background", func() bool { return len(rawChildren(t, admin, path)) == 0 })
	if s.ID() != sid {
		t.Fatalf("session changed 0x%x -> 0x%x: the session's end, not the retry, removed the node", sid, s.ID())
	}
}

// TestMutexUnlockHonoursCtx: under a blackhole, Unlock returns once its ctx
// ends instead of waiting for the delete's answer (go-zookeeper gives up on
// a silent connection only after two thirds of the session timeout); the
// delete goes on in the background and removes our node once the link
// heals, under the same session.
func TestMutexUnlockHonoursCtx(t *testing.T) {
	e := ensemble(t)
	path := testPath(t)
	link, err := e.NewLink("unlock-ctx")
	if err != nil {
		t.Fatal(err)
	}
	defer link.Close()
	const timeout = 9 * time.Second // go-zookeeper's receive timeout: 6s
	admin, s := connect(t, e.Addrs()), connect(t, link.Addrs(), recipes.WithSessionTimeout(timeout))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	m := newMutex(t, s, path, lock.WithLossPolicy(recipes.StepDownOnLost))
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	sid := s.ID()
	if err := link.Blackhole(); err != nil {
		t.Fatal(err)
	}
	uctx, ucancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer ucancel()
	start := time.Now()
	err = m.Unlock(uctx)
	took := time.Since(start)
	if err != nil {
		t.Fatalf("Unlock = %v", err)
	}
	if took > 2*time.Second {
		t.Fatalf("Unlock returned %v after its call, its ctx ended after 300ms", took)
	}
	if cause := context.Cause(m.Context()); !errors.Is(cause, lock.ErrNotHeld) {
		t.Fatalf("Context after Unlock: %v, want ErrNotHeld", cause)
	}
	if n := len(rawChildren(t, admin, path)); n != 1 {
		t.Fatalf("%d nodes while blackholed, want 1 (the delete cannot have arrived)", n)
	}
	// As in TestMutexGuaranteedDelete: reset the connections opened into
	// the blackhole, heal, accept new ones.
	if err := link.Cut(); err != nil {
		t.Fatal(err)
	}
	if err := link.Heal(); err != nil {
		t.Fatal(err)
	}
	if err := link.Restore(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "the node deleted in the background", func() bool { return len(rawChildren(t, admin, path)) == 0 })
	if s.ID() != sid {
		t.Fatalf("session changed 0x%x -> 0x%x: the session's end, not the retry, removed the node", sid, s.ID())
	}
}
