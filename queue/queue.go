package queue

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/zkrecipes/internal/zkpath"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// Queue is a distributed queue under one ZooKeeper path: ZooKeeper's queue
// recipe. Every item is a persistent sequential child ("qn-<seq>" by
// default), so the order of items is the order in which the ensemble
// applied their creates; consumers order them by (priority, sequence), with
// sequences compared in RFC 1982 serial arithmetic.
//
// Invariants: an item put by an acknowledged Put or PutAll stays in the
// queue until one consumer removes it; Take removes an item by deleting its
// node, so exactly one consumer's delete succeeds and one consumer gets it;
// Claim holds an item with an ephemeral claim node, and an item whose
// claimant's session dies is delivered again; the items of one producer
// (one goroutine calling Put in turn) are taken in the order put.
//
// Consumers keep the sorted child list of their last listing and take from
// it in order, listing again only when it runs out (or, for a priority
// queue, when their child watch fired): Take costs 1 getData + 1 delete, not
// a getChildren per item. A child watch on the queue path is set only while
// a consumer has none pending, and is fired by the next put; it wakes every
// consumer (of this and other processes) blocked on an empty queue — a queue
// has no single successor to wake.
//
// Consumers with their own Queue values (other processes, other sessions)
// all try the head item, so only one of them wins each round and the
// others pay a getData or delete that fails: Take throughput does not grow
// with such consumers (BenchmarkQueue). Goroutines sharing one Queue take
// distinct items from its cached listing and never collide, so several
// goroutines per process are the way to consume faster.
//
// A Queue is safe for concurrent use; goroutines of one Queue share its
// cached listing. A path is consumed either with Take/Poll or with Claim,
// not both: Take does not look at claims.
type Queue struct {
	s    *recipes.Session
	path string
	cfg  config

	listing chan struct{} // token: one goroutine lists at a time

	mu         sync.Mutex
	cache      []entry         // the last listing, in order, minus the items handed out since
	watch      <-chan zk.Event // pending child watch on path, nil when none
	claimWatch <-chan zk.Event // pending child watch on the claims path
	stale      bool            // list again before taking from cache
	spread     spread          // which cached item to take next (spread.go)
	lastHead   string          // the head of the previous listing (spread.go)
}

// Item is one queue element.
type Item struct {
	// Name is the item's node name, e.g. "qn-0000000042".
	Name string
	// Priority is the item's priority (DefaultPriority for "qn-<seq>").
	Priority int
	// Seq is ZooKeeper's sequence number of the item's node.
	Seq int32
	// Data is the item's payload.
	Data []byte
}

// New returns a queue on path. Nothing is sent to ZooKeeper; the path is
// created (as container nodes) by the first Put or blocking Take. It fails,
// wrapping a sentinel, on a nil session (recipes.ErrNilSession), an invalid
// path or claim path, or one in the reserved /zookeeper tree
// (recipes.ErrInvalidPath), a claim path equal to the path
// (recipes.ErrBadArgument), a WithMaxItems bound that is not positive
// (recipes.ErrBadArgument), or claim data (WithData) larger than the
// session's request limit (recipes.ErrDataTooLarge).
func New(s *recipes.Session, path string, opts ...Option) (*Queue, error) {
	cfg := config{dialect: recipes.Curator, data: []byte(recipes.ProcessID())}
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	if s == nil {
		return nil, fmt.Errorf("queue: %w", recipes.ErrNilSession)
	}
	if err := recipes.ValidateParentPath(path); err != nil {
		return nil, fmt.Errorf("queue: %w", err)
	}
	if cfg.claimPath == "" {
		cfg.claimPath = zkpath.Join(path, "taken")
	}
	if err := recipes.ValidateWritePath(cfg.claimPath); err != nil {
		return nil, fmt.Errorf("queue: claim path: %w", err)
	}
	if cfg.claimPath == path {
		return nil, fmt.Errorf("queue: %w: claim path %s is the queue's path", recipes.ErrBadArgument, path)
	}
	if cfg.maxItems < 0 {
		return nil, fmt.Errorf("queue: %w: WithMaxItems needs a positive bound", recipes.ErrBadArgument)
	}
	if err := recipes.CheckData(cfg.data, s.MaxData()); err != nil {
		return nil, fmt.Errorf("queue: claim data: %w", err)
	}
	return &Queue{s: s, path: path, cfg: cfg, listing: make(chan struct{}, 1)}, nil
}

func (q *Queue) check(ctx context.Context) error {
	if q == nil {
		return ErrNilReceiver
	}
	_, err := q.usable(ctx)
	return err
}

// Path returns the queue's path.
func (q *Queue) Path() string { return q.path }

// Put appends data to the queue and returns the item's node name. Cost: 1
// create (plus 1 createContainer per missing level of the path the first
// time), and 1 exists first on a queue made WithMaxItems (ErrFull when it
// is full). Wakes every consumer blocked on an empty queue. Data larger than
// MaxData (the session's request limit, recipes.WithMaxData, less the
// request's own size) fails with recipes.ErrDataTooLarge before anything is
// sent, and so does a create too large with any data (the ACL the
// session's ACL provider gives items fills the session's limit). If the
// connection is lost
// with the create in flight the result wraps ErrUncertain: the item may or
// may not have been added (sequential names carry no identity to look for);
// on a server that refused the Session for missing authentication the
// result wraps recipes.ErrNoAuth instead (nothing was added). An
// authenticated Session also reads the queue path's ACL once (1 getACL,
// see recipes.WithAllowOpenParents) and fails with an error wrapping
// recipes.ErrOpenParent when anyone may create or delete items there.
func (q *Queue) Put(ctx context.Context, data []byte) (string, error) {
	return q.put(ctx, data, DefaultPriority, implicitPriority)
}

// PutPriority is Put with a priority (MinPriority..MaxPriority, lower taken
// first) on a queue made WithPriority.
func (q *Queue) PutPriority(ctx context.Context, data []byte, priority int) (string, error) {
	if q != nil && ctx != nil && !q.cfg.priority {
		return "", fmt.Errorf("%w: queue %s was not made WithPriority", ErrPriority, q.path)
	}
	return q.put(ctx, data, priority, explicitPriority)
}

func (q *Queue) put(ctx context.Context, data []byte, priority int, explicit bool) (string, error) {
	if q == nil {
		return "", ErrNilReceiver
	}
	if err := q.checkPut(data, priority); err != nil {
		return "", err
	}
	req := q.createReq(data, priority, explicit)
	if err := recipes.CheckRequest(q.s.MaxData(), req); err != nil {
		return "", fmt.Errorf("queue %s: put: %w", q.path, err)
	}
	if err := q.room(ctx, 1); err != nil {
		return "", err
	}
	resp, err := q.multi(ctx, []any{req})
	if err != nil {
		return "", err
	}
	_, name := zkpath.Split(resp[0].String)
	return name, nil
}

func (q *Queue) checkPut(data []byte, priority int) error {
	if priority < MinPriority || priority > MaxPriority {
		return fmt.Errorf("%w: %d (want %d..%d)", ErrPriority, priority, MinPriority, MaxPriority)
	}
	// Not recipes.CheckData: a limit of 0 means the default there.
	if limit := q.MaxData(); len(data) > limit {
		return fmt.Errorf("queue %s: %w: %d bytes of data, an item's create leaves room for %d (the session's limit %d less the request's own size)",
			q.path, recipes.ErrDataTooLarge, len(data), limit, q.s.MaxData())
	}
	return nil
}

// MaxData returns the largest item data a Put sends: the session's limit
// (the server's jute.maxbuffer, recipes.DefaultMaxData by default) minus
// what the rest of a create request takes, since the server's limit applies
// to the whole request (a larger one makes the server drop the connection).
// It is 0 when the ACL the session's ACL provider gives items leaves no
// room for any data; if it leaves no room for a create at all, Put fails
// with recipes.ErrDataTooLarge whatever the data.
func (q *Queue) MaxData() int {
	if q == nil || q.s == nil {
		return 0
	}
	return max(0, q.s.MaxData()-q.createOverhead())
}

// createOverhead is what a create request of an item adds to its data on
// the wire: xid, opcode, path (with the longest prefix and a sequence that
// the server appends only later, counted anyway), data length, ACLs (the
// larger of those of an item with and without an explicit priority), flags;
// plus a small margin.
func (q *Queue) createOverhead() int {
	n := 4 + 4 + 4 + len(q.path) + 1 + longestPrefix + 4 + 11 + 4 + 4 + 4
	acls := 0
	for _, explicit := range []bool{false, true} {
		k := 0
		for _, a := range q.s.ACLFor(zkpath.Join(q.path, itemPrefix(q.cfg.dialect, DefaultPriority, explicit))) {
			k += 4 + 4 + len(a.Scheme) + 4 + len(a.ID)
		}
		acls = max(acls, k)
	}
	return n + acls + 16
}

// multiHeader is the size of each operation's header in a multi request,
// and of the closing one.
const multiHeader = 4 + 1 + 4

func (q *Queue) createReq(data []byte, priority int, explicit bool) *zk.CreateRequest {
	if q.cfg.priority && !explicit {
		explicit = true // a priority queue always writes the priority
	}
	p := zkpath.Join(q.path, itemPrefix(q.cfg.dialect, priority, explicit))
	return &zk.CreateRequest{
		Path:  p,
		Data:  data,
		Acl:   q.s.ACLFor(p),
		Flags: zk.FlagSequence,
	}
}

// PutAll appends items in one multi: all of them or none, in order, with
// consecutive sequence numbers. It returns their node names. Cost: 1 multi.
// The whole request must fit the server's limit. Same uncertainty as Put.
func (q *Queue) PutAll(ctx context.Context, items [][]byte) ([]string, error) {
	if q == nil {
		return nil, ErrNilReceiver
	}
	if ctx == nil {
		return nil, recipes.ErrNilContext
	}
	if len(items) == 0 {
		return nil, nil
	}
	total := 0
	ops := make([]any, len(items))
	for i, data := range items {
		if err := q.checkPut(data, DefaultPriority); err != nil {
			return nil, fmt.Errorf("item %d: %w", i, err)
		}
		total += len(data) + q.createOverhead() + multiHeader
		ops[i] = q.createReq(data, DefaultPriority, implicitPriority)
	}
	if total += multiHeader; total > q.s.MaxData() {
		return nil, fmt.Errorf("queue %s: %w: batch of %d items is %d bytes on the wire, server limit %d",
			q.path, recipes.ErrDataTooLarge, len(items), total, q.s.MaxData())
	}
	if err := q.room(ctx, len(items)); err != nil {
		return nil, err
	}
	resp, err := q.multi(ctx, ops)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(resp))
	for i, r := range resp {
		_, names[i] = zkpath.Split(r.String)
	}
	return names, nil
}

// room checks, on a queue made WithMaxItems, that k more items fit: 1
// exists of the queue node, whose Stat counts its children (a claim path
// inside it among them). A missing queue node holds nothing. Without the
// option it sends nothing.
func (q *Queue) room(ctx context.Context, k int) error {
	if q.cfg.maxItems == 0 {
		return nil
	}
	n, err := recipes.Do(ctx, q.s, func(conn *zk.Conn, _ int64) (int, error) {
		ok, st, err := conn.Exists(q.path)
		if err != nil || !ok {
			return 0, err
		}
		return int(st.NumChildren), nil
	})
	switch {
	case recipes.Stopped(err):
		return fmt.Errorf("queue %s: put: %w", q.path, err)
	case err != nil:
		return fmt.Errorf("queue: put %s: %w", q.path, err)
	case n+k > q.cfg.maxItems:
		return fmt.Errorf("%w: %s holds %d children, %d more would pass the bound of %d", ErrFull, q.path, n, k, q.cfg.maxItems)
	}
	return nil
}

// multi sends creates (one as a create, more as a multi) through
// recipes.CreateUnder: the squatting check of the queue path, and its
// creation on ErrNoNode.
func (q *Queue) multi(ctx context.Context, ops []any) ([]zk.MultiResponse, error) {
	if ctx == nil {
		return nil, q.check(ctx) // ErrBadArgument
	}
	var resp []zk.MultiResponse
	var unknown error // a connection error after which the creates may have been applied
	err := recipes.CreateUnder(ctx, q.s, q.path, func(conn *zk.Conn, _ int64) (err error) {
		if c, ok := ops[0].(*zk.CreateRequest); ok && len(ops) == 1 {
			var name string
			name, err = conn.Create(c.Path, c.Data, c.Flags, c.Acl)
			resp = []zk.MultiResponse{{String: name}}
		} else {
			resp, err = conn.Multi(ops...)
		}
		if recipes.IsConnErr(err) && !errors.Is(err, zk.ErrSessionExpired) && !errors.Is(err, zk.ErrNoServer) {
			// Maybe applied: sending the (sequential) creates again
			// could put the items twice, so Exec must not retry.
			unknown = err
			return nil
		}
		// ErrSessionExpired, ErrNoServer: never reached the server (or
		// was flushed with its session before being applied), so Exec
		// may send it again.
		return err
	})
	switch {
	case recipes.Stopped(err):
		return nil, fmt.Errorf("queue %s: %w", q.path, err)
	case unknown != nil:
		if err := q.s.AuthRequired(); err != nil {
			return nil, fmt.Errorf("queue: put to %s: %w", q.path, err)
		}
		return nil, fmt.Errorf("%w: put to %s: %w", ErrUncertain, q.path, unknown)
	case err != nil:
		return nil, fmt.Errorf("queue: put to %s: %w", q.path, err)
	}
	return resp, nil
}

// Take removes and returns the first item, waiting until there is one or
// ctx is done. Cost per item: 1 getData + 1 delete, plus 1 getChildren each
// time the consumer's cached listing runs out (and, for a priority queue,
// after its child watch fired); another consumer winning an item costs one
// getData or delete more (with WithSpread, 1 getChildren instead: the
// consumer lists again and spreads over the head of its listing, at the
// price of FIFO order; see there). If a new listing still offers an
// item just refused (a lagging server's), Take pauses (100 ms, or until
// the session's state changes) before trying it again. On a connection loss during the delete
// the item is returned with an error wrapping ErrUncertain (see there).
func (q *Queue) Take(ctx context.Context) (Item, error) {
	return q.take(ctx, waitForItem)
}

// Poll is Take without waiting: ErrEmpty when the queue has no item. Cost as
// Take; an empty queue costs 1 getChildren.
func (q *Queue) Poll(ctx context.Context) (Item, error) {
	return q.take(ctx, returnEmpty)
}

func (q *Queue) take(ctx context.Context, empty whenEmpty) (Item, error) {
	if err := q.check(ctx); err != nil {
		return Item{}, err
	}
	var refused string // the item just taken by another consumer
	for {
		e, waits, err := q.next(ctx, empty, keepClaimed)
		if err != nil {
			return Item{}, err
		}
		if e == nil {
			if err := wait(ctx, waits...); err != nil {
				return Item{}, fmt.Errorf("queue %s: take: %w", q.path, err)
			}
			continue
		}
		if err := q.again(ctx, *e, refused); err != nil {
			return Item{}, err
		}
		it, ok, err := q.remove(ctx, *e)
		if err == nil {
			q.outcome(ok)
		}
		if err != nil || ok {
			return it, err
		}
		refused = e.name
	}
}

// remove reads and deletes one item; ok is false when another consumer got
// it first.
func (q *Queue) remove(ctx context.Context, e entry) (Item, bool, error) {
	p := zkpath.Join(q.path, e.name)
	conn := q.s.Conn()
	for {
		var data []byte
		var st *zk.Stat
		err := recipes.Exec(ctx, q.s, func(conn *zk.Conn, _ int64) (err error) {
			data, st, err = conn.Get(p)
			return err
		})
		switch {
		case recipes.Stopped(err):
			q.unread(e)
			return Item{}, false, fmt.Errorf("queue %s: %w", q.path, err)
		case errors.Is(err, zk.ErrNoNode):
			return Item{}, false, nil
		case err != nil:
			return Item{}, false, fmt.Errorf("queue: get %s: %w", p, err)
		}
		it := Item{Name: e.name, Priority: e.priority, Seq: e.seq, Data: data}
		// Not recipes.Exec: whether this delete was ours decides who took
		// the item, so one of unknown outcome is resolved by reading.
		err = conn.Delete(p, st.Version)
		switch {
		case err == nil:
			return it, true, nil
		case errors.Is(err, zk.ErrNoNode):
			return Item{}, false, nil
		case errors.Is(err, zk.ErrBadVersion):
			continue // rewritten by someone: read again
		case errors.Is(err, zk.ErrSessionExpired), errors.Is(err, zk.ErrNoServer):
			continue // not applied
		case recipes.IsConnErr(err):
			return q.resolveDelete(ctx, p, it, err)
		default:
			return Item{}, false, fmt.Errorf("queue: delete %s: %w", p, recipes.Answer(err))
		}
	}
}

// resolveDelete learns, after a delete whose outcome is unknown, whether
// the item is still there: then it deletes it again; when it is gone, it
// returns the item with ErrUncertain (we, or another consumer, deleted it).
func (q *Queue) resolveDelete(ctx context.Context, p string, it Item, cause error) (Item, bool, error) {
	conn := q.s.Conn()
	for {
		var ok bool
		var st *zk.Stat
		err := recipes.Exec(ctx, q.s, func(conn *zk.Conn, _ int64) (err error) {
			ok, st, err = conn.Exists(p)
			return err
		})
		switch {
		case recipes.Stopped(err):
			return it, true, fmt.Errorf("%w: take %s: %w (then queue %s: %w)", ErrUncertain, p, cause, q.path, err)
		case err != nil || !ok:
			return it, true, fmt.Errorf("%w: take %s: %w", ErrUncertain, p, cause)
		}
		// Not recipes.Exec, as in remove: an unknown outcome is read again.
		err = conn.Delete(p, st.Version)
		switch {
		case err == nil:
			return it, true, nil
		case errors.Is(err, zk.ErrNoNode):
			return Item{}, false, nil
		case recipes.IsConnErr(err):
			continue
		default:
			return Item{}, false, fmt.Errorf("queue: delete %s: %w", p, recipes.Answer(err))
		}
	}
}

// unread puts an entry we could not try back at the front of the cache.
func (q *Queue) unread(e entry) {
	q.mu.Lock()
	q.cache = append([]entry{e}, q.cache...)
	q.mu.Unlock()
}

// whenEmpty tells next (and take) what to do when the queue is empty.
type whenEmpty bool

const (
	returnEmpty whenEmpty = false // return ErrEmpty (Poll)
	waitForItem whenEmpty = true  // return the watches to wait on (Take, Claim)
)

// claimed tells next whether to list the claims and skip claimed items.
type claimed bool

const (
	keepClaimed claimed = false // Take, Poll: claims are not consulted
	skipClaimed claimed = true  // Claim
)

// The explicit argument of put and createReq (itemPrefix's): whether the
// item's name carries DefaultPriority. A priority queue's always do.
const (
	implicitPriority = false // Put, PutAll
	explicitPriority = true  // PutPriority
)

// next hands out the next cached entry, listing again when the cache ran out
// (or is stale). When the queue is empty it returns ErrEmpty (returnEmpty)
// or the watch channels to wait on (waitForItem). skipClaimed: also list
// the claims and skip claimed items.
//
// q.mu guards the cache and is held only briefly; q.listing (a token, so
// that waiting for it honours ctx) lets one goroutine at a time list.
func (q *Queue) next(ctx context.Context, empty whenEmpty, claims claimed) (*entry, []<-chan zk.Event, error) {
	if e := q.pop(); e != nil {
		return e, nil, nil
	}
	select {
	case q.listing <- struct{}{}:
	case <-ctx.Done():
		return nil, nil, fmt.Errorf("queue %s: %w", q.path, recipes.ContextError(ctx))
	}
	defer func() { <-q.listing }()
	for {
		// Another goroutine may have listed while we waited for the token.
		if e := q.pop(); e != nil {
			return e, nil, nil
		}
		q.mu.Lock()
		block := empty == waitForItem
		armItems := block && q.watch == nil
		armClaims := block && claims == skipClaimed && q.claimWatch == nil
		q.mu.Unlock()
		l, err := q.list(ctx, armItems, armClaims, claims == skipClaimed)
		if err != nil {
			return nil, nil, err
		}
		q.mu.Lock()
		if l.watch != nil {
			q.watch = l.watch
		}
		if l.claimWatch != nil {
			q.claimWatch = l.claimWatch
		}
		q.cache, q.stale = l.entries, false
		var e *entry
		if len(q.cache) > 0 {
			// A head passed over for a whole listing is taken first:
			// lanes must not starve it.
			if !q.cfg.spread || q.cache[0].name == q.lastHead {
				e = &q.cache[0]
				q.cache = q.cache[1:]
			} else {
				q.lastHead = q.cache[0].name
				e = q.takeCached()
			}
		}
		waits := []<-chan zk.Event{q.watch, q.claimWatch}
		q.mu.Unlock()
		switch {
		case e != nil:
			return e, nil, nil
		case !block:
			return nil, nil, fmt.Errorf("%w: %s", ErrEmpty, q.path)
		case waits[0] != nil && (l.claimed == 0 || waits[1] != nil):
			return nil, waits, nil
		}
		// A pending watch fired while we listed without arming one: list
		// again, arming a new one.
	}
}

// pop hands out the first cached entry, or nil when the cache is empty or
// stale. It notes fired watches: a fired child watch makes a priority
// queue's cache stale.
func (q *Queue) pop() *entry {
	q.mu.Lock()
	defer q.mu.Unlock()
	if fired(q.watch) {
		q.watch = nil
		if q.cfg.priority {
			q.stale = true
		}
	}
	if fired(q.claimWatch) {
		q.claimWatch = nil
	}
	if len(q.cache) == 0 || q.stale {
		return nil
	}
	return q.takeCached()
}

// takeCached removes and returns the cached entry the spread picks (the
// first one unless consumers collide; among those of the head's
// priority). q.cache must not be empty; q.mu held.
func (q *Queue) takeCached() *entry {
	// The window never reaches past the head's priority: spreading
	// changes the order within a priority, never across.
	n := 1
	for n < len(q.cache) && n < maxSpread && q.cache[n].priority == q.cache[0].priority {
		n++
	}
	i := q.spread.pick(n)
	e := q.cache[i]
	q.cache = append(q.cache[:i:i], q.cache[i+1:]...)
	return &e
}

// outcome records whether this consumer got the item it tried.
func (q *Queue) outcome(got bool) {
	if !q.cfg.spread {
		return // the head only: no lane, no relisting on a loss
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if got {
		q.spread.gotOne()
	} else {
		// Another consumer took it: the listing is going stale under
		// several consumers, each loss costing a request more; one
		// getChildren learns them all.
		q.spread.lost()
		q.stale = true
	}
}

// listing is the result of one list.
type listing struct {
	entries           []entry
	claimed           int             // items dropped because they are claimed
	watch, claimWatch <-chan zk.Event // armed by this listing, or nil
}

// list lists the queue, sorted. armItems sets a child watch on the queue
// path (creating the path when missing, since a watch needs the node);
// claims also lists the claims path and drops claimed items, with a child
// watch when armClaims. Cost: 1 getChildren (+1 getChildren of the claims
// path when claims and the queue is not empty).
func (q *Queue) list(ctx context.Context, armItems, armClaims, claims bool) (listing, error) {
	if ctx == nil {
		return listing{}, q.check(ctx) // ErrBadArgument
	}
	for {
		var l listing
		var names []string
		err := recipes.Exec(ctx, q.s, func(conn *zk.Conn, _ int64) (err error) {
			if armItems {
				names, _, l.watch, err = conn.ChildrenW(q.path)
			} else {
				names, _, err = conn.Children(q.path)
			}
			return err
		})
		switch {
		case recipes.Stopped(err):
			return listing{}, fmt.Errorf("queue %s: %w", q.path, err)
		case errors.Is(err, zk.ErrNoNode):
			if !armItems {
				return listing{}, nil
			}
			// An empty container that never had children is not reaped.
			if err := ctx.Err(); err != nil {
				return listing{}, fmt.Errorf("queue %s: %w", q.path, recipes.ContextError(ctx))
			}
			if err := q.s.EnsureParents(q.path); err != nil && !recipes.IsConnErr(err) {
				return listing{}, fmt.Errorf("queue: create %s: %w", q.path, err)
			}
			continue
		case err != nil:
			return listing{}, fmt.Errorf("queue: list %s: %w", q.path, err)
		}
		l.entries = sortNames(q.cfg.dialect, names)
		if claims && len(l.entries) > 0 {
			taken, ch, err := q.listClaims(ctx, armClaims)
			if err != nil {
				return listing{}, err
			}
			l.claimWatch = ch
			n := len(l.entries)
			l.entries = slices.DeleteFunc(l.entries, func(e entry) bool { return taken[e.name] })
			l.claimed = n - len(l.entries)
		}
		return l, nil
	}
}

// listClaims returns the names of claimed items, and a child watch on the
// claims path when arm. Cost: 1 getChildren.
func (q *Queue) listClaims(ctx context.Context, arm bool) (map[string]bool, <-chan zk.Event, error) {
	var names []string
	var ch <-chan zk.Event
	err := recipes.Exec(ctx, q.s, func(conn *zk.Conn, _ int64) (err error) {
		if arm {
			names, _, ch, err = conn.ChildrenW(q.cfg.claimPath)
		} else {
			names, _, err = conn.Children(q.cfg.claimPath)
		}
		return err
	})
	switch {
	case recipes.Stopped(err):
		return nil, nil, fmt.Errorf("queue %s: %w", q.path, err)
	case errors.Is(err, zk.ErrNoNode):
		return nil, nil, nil
	case err != nil:
		return nil, nil, fmt.Errorf("queue: list %s: %w", q.cfg.claimPath, err)
	}
	taken := make(map[string]bool, len(names))
	for _, n := range names {
		taken[n] = true
	}
	return taken, ch, nil
}

// Peek returns the first item without removing it (the head of a fresh
// listing, claimed or not), or ErrEmpty. Cost: 1 getChildren + 1 getData
// (more if items vanish meanwhile). Sets no watch.
func (q *Queue) Peek(ctx context.Context) (Item, error) {
	if err := q.check(ctx); err != nil {
		return Item{}, err
	}
	for {
		names, err := recipes.Do(ctx, q.s, func(conn *zk.Conn, _ int64) ([]string, error) {
			names, _, err := conn.Children(q.path)
			return names, err
		})
		switch {
		case recipes.Stopped(err):
			return Item{}, fmt.Errorf("queue %s: %w", q.path, err)
		case errors.Is(err, zk.ErrNoNode):
			names = nil
		case err != nil:
			return Item{}, fmt.Errorf("queue: list %s: %w", q.path, err)
		}
		entries := sortNames(q.cfg.dialect, names)
		if len(entries) == 0 {
			return Item{}, fmt.Errorf("%w: %s", ErrEmpty, q.path)
		}
		for _, e := range entries {
			data, err := recipes.Do(ctx, q.s, func(conn *zk.Conn, _ int64) ([]byte, error) {
				data, _, err := conn.Get(zkpath.Join(q.path, e.name))
				return data, err
			})
			switch {
			case recipes.Stopped(err):
				return Item{}, fmt.Errorf("queue %s: %w", q.path, err)
			case errors.Is(err, zk.ErrNoNode):
				continue
			case err != nil:
				return Item{}, fmt.Errorf("queue: get %s: %w", e.name, err)
			}
			return Item{Name: e.name, Priority: e.priority, Seq: e.seq, Data: data}, nil
		}
	}
}

// Len returns the number of items (claimed ones included). Cost: 1
// getChildren.
func (q *Queue) Len(ctx context.Context) (int, error) {
	if err := q.check(ctx); err != nil {
		return 0, err
	}
	names, err := recipes.Do(ctx, q.s, func(conn *zk.Conn, _ int64) ([]string, error) {
		names, _, err := conn.Children(q.path)
		return names, err
	})
	switch {
	case recipes.Stopped(err):
		return 0, fmt.Errorf("queue %s: %w", q.path, err)
	case errors.Is(err, zk.ErrNoNode):
		return 0, nil
	case err != nil:
		return 0, fmt.Errorf("queue: list %s: %w", q.path, err)
	}
	n := 0
	for _, name := range names {
		if _, ok := parseName(q.cfg.dialect, name); ok {
			n++
		}
	}
	return n, nil
}

// fired reports whether a watch channel has delivered its event.
func fired(ch <-chan zk.Event) bool {
	if ch == nil {
		return false
	}
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// wait blocks until one of chs fires or ctx is done.
func wait(ctx context.Context, chs ...<-chan zk.Event) error {
	var a, b <-chan zk.Event
	if len(chs) > 0 {
		a = chs[0]
	}
	if len(chs) > 1 {
		b = chs[1]
	}
	select {
	case <-a:
	case <-b:
	case <-ctx.Done():
		return recipes.ContextError(ctx)
	}
	return nil
}
