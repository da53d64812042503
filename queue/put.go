// Putting items: Put, PutPriority and PutAll, the size checks against
// the Session's request limit, the create requests (with the item's name
// and priority) and the bound of a queue made WithMaxItems.

package queue

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/zkrecipes/internal/zkpath"
	"github.com/zkrecipes/zkrecipes/recipes"
)

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

// The explicit argument of put and createReq (itemPrefix's): whether the
// item's name carries DefaultPriority. A priority queue's always do.
const (
	implicitPriority = false // Put, PutAll
	explicitPriority = true  // PutPriority
)
