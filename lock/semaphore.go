package lock

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"sync"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/internal/lockopt"
	"github.com/zkrecipes/zkrecipes/internal/zkpath"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// Semaphore hands out at most a maximum number of permits at a ZooKeeper
// path: a fixed n (NewSemaphore) or the value of a shared count that may
// change at run time (NewSemaphoreCount).
//
// Wire format: Curator's InterProcessSemaphoreV2, so Go and Java (Curator)
// processes using the same path and the same maximum share the permits. An
// acquirer takes the mutex at "<path>/locks" (Curator "lock-" nodes),
// creates its permits "<path>/leases/_c_<uuid36>-lease-<seq>" (protected,
// ephemeral sequential) and, still holding the mutex, waits until the
// permits number at most the maximum; then it releases the mutex. As in
// Curator, every child of "<path>/leases" counts as a permit. kazoo's
// Semaphore uses a different layout and does not interoperate;
// NewSemaphore rejects WithDialect(recipes.Kazoo) with ErrDialect.
//
// Invariant: a permit is granted only while the permits, its own included,
// number at most the maximum in force: only the mutex holder can add a
// permit that counts as held, and it grants only after listing the permits
// and then reading the maximum (for a count, a fresh read on the
// Semaphore's own session, after its permit was created, so that it sees
// every change of the count that completed before the acquisition began).
// Permits only go away while the mutex holder waits, so the count it saw
// bounds the holders at the moment it read the maximum. A maximum lowered
// below the number of holders revokes nobody (Curator does not either),
// but no permit is granted until the holders are fewer than the maximum;
// a maximum raised wakes the waiting acquirer.
//
// Recorded maximum: a Semaphore with a fixed n records n as the data of
// "<path>/leases" (decimal text, as kazoo's semaphore records its maximum in
// its node's data) and refuses, with ErrMaxMismatch, to join permits held
// under another recorded maximum, so that peers configured with different
// n fail with a clear error instead of silently exceeding the smaller n.
// The record is written and checked under the mutex, once per Semaphore
// and permits node (cost: 1 setData when there is no record, 1 getData when
// there is one this Semaphore has not read yet). When no other permit is
// held, a different record is replaced by ours: redeploying every peer
// with a new n works without cleaning up. The record lives in the data of
// a node Curator already makes, so no node is added to the layout: Curator
// lists "<path>/leases" and "<path>/locks" and never reads their data, and
// the tools that walk the layout (Curator's ChildReaper with
// InterProcessSemaphoreV2.LOCK_SCHEMA) know exactly those two children.
// The record goes with the permits node (a container when this package or
// Curator made it, removed by the server some time after it empties). Curator's semaphores neither write nor check it: mixed with
// them, the maximum is a convention again. A count-based Semaphore
// records and checks nothing (the count is the maximum); do not mix it
// with fixed-n Semaphores on one path.
//
// Watchers: only the one acquirer holding the mutex watches the permits
// parent (and, count-based, the count's node), and each waiter for the
// mutex watches only the node ahead of it, so a mutex release wakes exactly
// one process and a permit release wakes the one acquirer waiting for a
// permit, plus at most the child watch left armed by the previous acquirer
// that had to wait (go-zookeeper cannot remove a watch; Curator leaves the
// same one). An acquirer that did not wait leaves no watch; one that
// waited, count-based, leaves its session's one data watch on the count
// armed until the count changes (reused by the next one that waits).
//
// A Semaphore is safe for concurrent use; each acquisition returns its own
// permits.
type Semaphore struct {
	s    *recipes.Session
	path string
	cfg  lockopt.Config

	n      int    // the fixed maximum; 0 for a count-based semaphore
	record []byte // n as recorded in the permits node's data

	count     CountNode // the maximum's node; nil for a fixed n
	countPath string
	seed      int32

	mu       sync.Mutex
	verified nodeVersion // the permits node, and data version, whose record matched ours
}

// nodeVersion names one incarnation of a node (its czxid) at one data
// version.
type nodeVersion struct {
	czxid   int64
	version int32
}

// NewSemaphore returns a semaphore of n permits at path. It sends nothing.
// It fails as New does, and on n < 1 (ErrPermits) or a dialect other than
// Curator's (ErrDialect); both also wrap recipes.ErrBadArgument.
func NewSemaphore(s *recipes.Session, path string, n int, opts ...Option) (*Semaphore, error) {
	cfg := config(opts)
	if err := checkArgs(s, path, cfg, recipes.RoleLease); err != nil {
		return nil, err
	}
	if n < 1 {
		return nil, fmt.Errorf("%w (%w): %d", ErrPermits, recipes.ErrBadArgument, n)
	}
	return &Semaphore{s: s, path: path, n: n, cfg: cfg, record: []byte(strconv.Itoa(n))}, nil
}

// Path returns the semaphore's path (its mutex is under "<path>/locks", its
// permits under "<path>/leases").
func (sem *Semaphore) Path() string { return sem.path }

func (sem *Semaphore) leasesPath() string { return zkpath.Join(sem.path, "leases") }

// Acquire waits for a permit until ctx is done. If ctx ends first, every node
// it created is deleted before it returns. Cost, uncontended: 1 create + 1
// getChildren (mutex), 1 create (permit), 1 getChildren (permits), 1 delete
// (mutex): 5 requests; count-based, 1 getData of the count more (6); a
// fixed-n Semaphore's first acquisition on a permits node also writes or
// reads the record (1 setData or 1 getData, see Semaphore); +1 getData with
// WithRevocation. An acquirer that must wait lists the permits again with a
// child watch (count-based: reads the count again, and subscribes to the
// session's data watch on it: 1 getData unless the session has it armed),
// and watches its mutex node and its permit nodes (1 getData each, in the
// background), so that the wait ends as soon as one may be lost. A release
// wakes it at the cost of 1 getChildren (count-based: + 1 getData), a
// change of the count at the cost of 1 getChildren + 2 getData (the
// count, and its watch set again).
//
// Acquire never returns a permit whose Context() is already done. If the
// mutex or the permit may be lost before the permit counts (the connection
// is suspended under the default loss policy, the session changes, a node
// is deleted), both are given up and Acquire starts over; the permit is
// always created under the same session as the mutex that guards it. It
// fails without retrying with an error wrapping ErrMaxMismatch when the
// recorded maximum is not ours, and ErrBadCount when the count's node does
// not hold a count.
func (sem *Semaphore) Acquire(ctx context.Context) (*Permit, error) {
	ls, err := sem.take(ctx, 1, waitTurn)
	if err != nil {
		return nil, err
	}
	return ls[0], nil
}

// AcquireN waits for qty permits, all or nothing: they are created together
// under the mutex and granted at the same moment, once the permits, ours
// included, number at most the maximum (Curator's acquire(qty) takes them
// one at a time; two such acquirers can each hold part of what they need
// and wait forever, which this cannot). Until then no other acquirer is
// served (the mutex is held), so a large qty is not overtaken by small
// ones. The permits may be released together (Permits.Release) or one by one.
// Cost: Acquire's, with qty creates instead of 1; count-based, qty > 1:
// +1 getData of the count before anything else.
//
// A qty that cannot be granted fails at once with ErrPermits (and
// recipes.ErrBadArgument), writing nothing: qty < 1, or above a fixed n,
// or above math.MaxInt32 (no count reaches it), sending nothing at all;
// count-based, qty > 1 above the count read first (that getData, and
// nothing else, is sent; a missing count node reads as its seed and is not
// created). A count lowered below such a qty while AcquireN waits makes it
// fail the same way once it reads the count, its nodes deleted: AcquireN
// never waits for a count to grow past what it was when asked, since
// creating qty permits that cannot count would hold the mutex, and every
// other acquirer, behind them. qty 1 (Acquire) waits for a count below 1
// to grow, as documented at NewSemaphoreCount.
func (sem *Semaphore) AcquireN(ctx context.Context, qty int) (Permits, error) {
	return sem.take(ctx, qty, waitTurn)
}

// TryAcquire takes a permit only if one is free now, without waiting. When
// none is free it writes nothing: it lists the permits (1 getChildren; +1
// getData of the count, count-based) and returns an error wrapping
// ErrNoPermit (and recipes.ErrWouldBlock). It also returns ErrNoPermit,
// after 1 getChildren of the mutex and nothing written, when another
// acquirer holds the mutex: that one is ahead in line, and may be waiting
// for a permit itself. Otherwise it takes the mutex without waiting and
// proceeds as Acquire does (uncontended: 7 requests, 9 count-based); if
// the permits filled up meanwhile, its nodes are deleted and the result is
// ErrNoPermit.
func (sem *Semaphore) TryAcquire(ctx context.Context) (*Permit, error) {
	ls, err := sem.take(ctx, 1, tryOnce)
	if err != nil {
		return nil, err
	}
	return ls[0], nil
}

// TryAcquireN is TryAcquire for qty permits, all or nothing (see AcquireN).
// A qty AcquireN refuses fails with ErrPermits in the same way; count-based,
// after TryAcquire's reads (1 getChildren + 1 getData), nothing written.
func (sem *Semaphore) TryAcquireN(ctx context.Context, qty int) (Permits, error) {
	return sem.take(ctx, qty, tryOnce)
}

func (sem *Semaphore) take(ctx context.Context, qty int, try whenBusy) (Permits, error) {
	if sem == nil {
		return nil, ErrNilReceiver
	}
	if qty < 1 || (sem.count == nil && qty > sem.n) || qty > math.MaxInt32 {
		return nil, fmt.Errorf("%w (%w): %d asked of semaphore %s", ErrPermits, recipes.ErrBadArgument, qty, sem.path)
	}
	if err := recipes.ContextError(ctx); err != nil {
		return nil, fmt.Errorf("lock: semaphore %s: %w", sem.path, err)
	}
	if sem.count != nil && qty > 1 && !try {
		// Read the count before writing anything (TryAcquireN's attempt
		// reads it first anyway).
		limit, _, err := sem.max(ctx, readOnly)
		if err != nil {
			return nil, fmt.Errorf("lock: semaphore %s: %w", sem.path, err)
		}
		if err := tooMany(qty, limit); err != nil {
			return nil, fmt.Errorf("lock: semaphore %s: %w", sem.path, err)
		}
	}
	for {
		hs, err := sem.attempt(ctx, qty, try)
		if err == nil {
			ls := make(Permits, len(hs))
			for i, h := range hs {
				ls[i] = &Permit{sem: sem, h: h}
			}
			return ls, nil
		}
		if try == waitTurn && ctx.Err() == nil && retryable(err) {
			continue
		}
		return nil, fmt.Errorf("lock: semaphore %s: %w", sem.path, err)
	}
}

// retryable reports whether an attempt failed because its mutex or permit
// may have been lost (so a new attempt may succeed), rather than for good.
func retryable(err error) bool {
	return !errors.Is(err, recipes.ErrClosed) && (errors.Is(err, recipes.ErrSessionLost) ||
		errors.Is(err, recipes.ErrNodeNotFound) || errors.Is(err, recipes.ErrSuspended) ||
		errors.Is(err, recipes.ErrNodeDeleted))
}

// tooMany returns the error of an acquisition of qty permits that the
// maximum limit can never grant (qty > 1 and above limit), or nil. Pure.
func tooMany(qty, limit int) error {
	if qty > 1 && qty > limit {
		return fmt.Errorf("%w (%w): %d asked, maximum %d", ErrPermits, recipes.ErrBadArgument, qty, limit)
	}
	return nil
}

// noPermit is the error of a try that found no permit free.
func noPermit(format string, args ...any) error {
	return fmt.Errorf("%w (%w): %s", ErrNoPermit, recipes.ErrWouldBlock, fmt.Sprintf(format, args...))
}

// attempt takes the mutex, creates qty permits and waits (unless try) until
// they count; it returns them, or an error with every node it made given
// up.
func (sem *Semaphore) attempt(ctx context.Context, qty int, try whenBusy) ([]*recipes.Holding, error) {
	if try {
		// Reads only, so that a full semaphore costs no write.
		n, err := sem.peek(ctx)
		if err != nil {
			return nil, err
		}
		limit, _, err := sem.max(ctx, readOnly)
		if err != nil {
			return nil, err
		}
		if err := tooMany(qty, limit); err != nil {
			return nil, err
		}
		if n+qty > limit {
			return nil, noPermit("%d permits held, %d asked, maximum %d", n, qty, limit)
		}
	}
	policy := sem.cfg.LossPolicy(sem.s)
	mspec := recipes.Spec{
		Path: zkpath.Join(sem.path, "locks"), Dialect: recipes.Curator, Role: recipes.RoleLock,
		Data: sem.cfg.Data, Policy: policy,
	}
	var mu *recipes.Holding
	var err error
	if try {
		mu, err = recipes.TryAcquire(ctx, sem.s, mspec)
		if errors.Is(err, recipes.ErrWouldBlock) {
			return nil, noPermit("another acquirer holds the mutex")
		}
	} else {
		mu, err = recipes.Acquire(ctx, sem.s, mspec)
	}
	if err != nil {
		return nil, err
	}
	defer func() { _ = mu.Release(context.WithoutCancel(ctx)) }()
	lspec := recipes.Spec{
		Path: sem.leasesPath(), Dialect: recipes.Curator, Role: recipes.RoleLease,
		Data: sem.cfg.Data, Policy: policy, Revocable: sem.cfg.Revocable,
	}
	hs := make([]*recipes.Holding, 0, min(qty, 64))
	giveUp := func(err error) ([]*recipes.Holding, error) {
		for _, h := range hs {
			_ = h.Release(context.WithoutCancel(ctx))
		}
		return nil, err
	}
	for range qty {
		h, err := recipes.Enter(ctx, sem.s, lspec)
		if err != nil {
			return giveUp(err)
		}
		hs = append(hs, h)
	}
	if err := sem.await(ctx, mu, hs, try); err != nil {
		return giveUp(err)
	}
	return hs, nil
}

// peek returns how many permits there are now. Cost: 1 getChildren.
func (sem *Semaphore) peek(ctx context.Context) (int, error) {
	l, err := sem.list(ctx, noWatch)
	if errors.Is(err, zk.ErrNoNode) {
		return 0, nil
	}
	return len(l.children), err
}

// listing is one answer to a listing of the permits.
type listing struct {
	children []string
	stat     *zk.Stat
	watch    <-chan zk.Event // the child watch, when one was asked for
}

// childWatch says whether list sets a child watch on the permits.
type childWatch bool

const (
	noWatch  childWatch = false
	setWatch childWatch = true
)

// whenBusy says what take does when no permit is free.
type whenBusy bool

const (
	waitTurn whenBusy = false // wait for a permit (Acquire)
	tryOnce  whenBusy = true  // return at once (TryAcquire)
)

// list lists the permits, with a child watch when watch is setWatch. A missing
// permits node is an error wrapping zk.ErrNoNode.
func (sem *Semaphore) list(ctx context.Context, watch childWatch) (listing, error) {
	leases := sem.leasesPath()
	l, err := recipes.Do(ctx, sem.s, func(conn *zk.Conn, _ int64) (l listing, err error) {
		if watch {
			l.children, l.stat, l.watch, err = conn.ChildrenW(leases)
		} else {
			l.children, l.stat, err = conn.Children(leases)
		}
		return l, err
	})
	if err != nil && !recipes.Stopped(err) {
		err = fmt.Errorf("list %s: %w", leases, err)
	}
	return l, err
}

// await decides, holding the mutex mu, when the permits hs count: it lists
// the permits, checks the record (fixed n, first listing), reads the
// maximum, and grants once the permits number at most the maximum. Unless
// try, it waits for a change of the permits or of the count, or for a
// holding to be lost.
func (sem *Semaphore) await(ctx context.Context, mu *recipes.Holding, hs []*recipes.Holding, try whenBusy) error {
	// guard reports why the permits cannot count now: the mutex or a permit
	// may be lost, or a permit was created under a session other than the
	// mutex's (the session changed in between: the mutex is gone).
	guard := func() error {
		if err := mu.Cause(); err != nil {
			return fmt.Errorf("mutex %s: %w", mu.Path(), err)
		}
		for _, h := range hs {
			switch {
			case h.Cause() != nil:
				return fmt.Errorf("lease %s: %w", h.Path(), h.Cause())
			case h.SessionID() != mu.SessionID():
				return fmt.Errorf("%w: lease of session 0x%x, mutex of 0x%x", recipes.ErrSessionLost, h.SessionID(), mu.SessionID())
			}
		}
		return nil
	}
	// The wait ends when ctx does or a holding may be lost; the holdings'
	// node watches are armed only if we have to wait.
	wctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var stops []func() bool
	defer func() {
		for _, stop := range stops {
			stop()
		}
	}()
	var (
		childW <-chan zk.Event // our pending child watch on the permits
		countW *recipes.Watch  // our subscription to the count's data watch
	)
	defer func() { countW.Close() }()
	first := true
	for {
		if err := guard(); err != nil {
			return err
		}
		l, err := sem.list(wctx, childWatch(!first && childW == nil))
		if errors.Is(err, zk.ErrNoNode) {
			return fmt.Errorf("%w: %w", recipes.ErrNodeNotFound, err)
		}
		if err != nil {
			return err
		}
		if l.watch != nil {
			childW = l.watch
		}
		for _, h := range hs {
			if !slices.Contains(l.children, h.Name()) {
				return fmt.Errorf("%w: %s", recipes.ErrNodeNotFound, h.Path())
			}
			if h.SessionID() != sem.s.ID() {
				return recipes.ErrSessionLost
			}
		}
		if first {
			if err := sem.checkRecord(wctx, l, hs); err != nil {
				return err
			}
		}
		// The maximum is read after the listing: permits only go away in
		// between, so the listing's count bounds the holders when the
		// maximum read was in force.
		limit, mzxid, err := sem.max(wctx, createMissing)
		if err != nil {
			return err
		}
		if len(l.children) <= limit {
			return guard() // a holding may have ended after the listing
		}
		if err := tooMany(len(hs), limit); err != nil {
			return err // the count was lowered below qty: never granted
		}
		if try {
			return noPermit("%d permits with ours, maximum %d", len(l.children), limit)
		}
		if first {
			first = false
			for _, c := range append([]*recipes.Holding{mu}, hs...) {
				hctx := c.Context()
				stops = append(stops, context.AfterFunc(hctx, func() { cancel(guard()) }))
			}
			continue // list again, with a child watch
		}
		if sem.count != nil && countW == nil {
			_, st, w, err := sem.s.WatchData(wctx, sem.countPath)
			switch {
			case errors.Is(err, zk.ErrNoNode):
				continue // deleted meanwhile: max creates it again
			case err != nil:
				return err
			}
			countW = w
			if st.Mzxid != mzxid {
				continue // changed since we read it (or the watch predates our read)
			}
		}
		var countFired <-chan struct{}
		if countW != nil {
			countFired = countW.Fired()
		}
		select {
		case <-childW:
			childW = nil
		case <-countFired:
			countW.Close()
			countW = nil
		case <-wctx.Done():
			return recipes.ContextError(wctx)
		}
	}
}
