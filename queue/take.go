// Taking items: Take and Poll, the delete that decides which consumer
// gets an item, and what an uncertain or refused delete means.

package queue

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/zkrecipes/internal/zkpath"
	"github.com/zkrecipes/zkrecipes/recipes"
)

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
