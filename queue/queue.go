// The Queue: its type and invariants, the Item it hands out, its
// constructor, and the reads that change nothing (Peek, Len). Putting is in
// put.go, taking in take.go, the consumers' shared listing in listing.go,
// and claims in claim*.go.

package queue

import (
	"context"
	"errors"
	"fmt"
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
