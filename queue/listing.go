// The consumers' cached listing, shared by Take, Poll and Claim: next
// hands out entries in order and lists again when they run out (or the
// child watch fired), with the claims when claiming; and the helpers that
// wait on the listing's watches.

package queue

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/zkrecipes/recipes"
)

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
