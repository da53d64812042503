package partition

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/zkrecipes/zkrecipes/group"
	"github.com/zkrecipes/zkrecipes/internal/hooks"
	"github.com/zkrecipes/zkrecipes/internal/zkpath"
	"github.com/zkrecipes/zkrecipes/lock"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// Partitioner is this process's member of a set partition at a path: Run
// joins the group "<path>/party", splits the items among its members once
// they held still, takes this member's share with a lock per item, and
// sends it as a Partition; it splits again after every change of the
// members, once the Partition was released.
//
// A Partitioner is safe for concurrent use. It is one member: Run again
// while the stream of an earlier Run is open ends the new stream with
// ErrRunning.
type Partitioner struct {
	s     *recipes.Session
	path  string
	items []string // sorted
	cfg   config

	mu      sync.Mutex
	running bool
}

// New returns this process's member of the set partition of items at
// path. It sends nothing. It fails, wrapping a sentinel, on a nil session
// (recipes.ErrNilSession), an invalid path or one in /zookeeper
// (recipes.ErrInvalidPath), no items, an item twice or an item that is not
// one valid path segment (ErrInvalidItems), an invalid id (WithID:
// group.ErrInvalidID), a negative boundary or a nil partition function
// (recipes.ErrBadArgument), or an id too large for the session's requests
// (recipes.ErrDataTooLarge). The items are copied.
func New(s *recipes.Session, path string, items []string, opts ...Option) (*Partitioner, error) {
	c := newConfig(opts)
	if s == nil {
		return nil, fmt.Errorf("partition: %w", recipes.ErrNilSession)
	}
	if err := recipes.ValidateParentPath(path); err != nil {
		return nil, fmt.Errorf("partition: %w", err)
	}
	switch {
	case c.boundary < 0:
		return nil, fmt.Errorf("partition: %w: negative boundary %v", recipes.ErrBadArgument, c.boundary)
	case c.fn == nil:
		return nil, fmt.Errorf("partition: %w: nil partition function", recipes.ErrBadArgument)
	}
	p := &Partitioner{s: s, path: path, cfg: c}
	if err := group.ValidateID(p.partyPath(), c.id, p.groupOptions()...); err != nil {
		return nil, fmt.Errorf("partition: %w", err)
	}
	if err := recipes.CheckData([]byte(c.id), s.MaxData()); err != nil {
		return nil, fmt.Errorf("partition: id: %w", err)
	}
	sorted, err := checkItems(path, items)
	if err != nil {
		return nil, err
	}
	p.items = sorted
	for _, item := range sorted {
		if _, err := lock.New(s, p.lockPath(item), p.lockOptions()...); err != nil {
			return nil, fmt.Errorf("partition: item %q: %w", item, err)
		}
	}
	return p, nil
}

// checkItems validates the items and returns them sorted.
func checkItems(path string, items []string) ([]string, error) {
	if len(items) == 0 {
		return nil, fmt.Errorf("%w: no items (%w)", ErrInvalidItems, recipes.ErrBadArgument)
	}
	sorted := slices.Clone(items)
	slices.Sort(sorted)
	for i, item := range sorted {
		switch {
		case i > 0 && sorted[i-1] == item:
			return nil, fmt.Errorf("%w: %q twice (%w)", ErrInvalidItems, item, recipes.ErrBadArgument)
		case item == "" || strings.Contains(item, "/") || item == "." || item == "..":
			return nil, fmt.Errorf("%w: %q is not one path segment (%w)", ErrInvalidItems, item, recipes.ErrInvalidPath)
		}
		if err := recipes.ValidateParentPath(zkpath.Join(zkpath.Join(path, "locks"), item)); err != nil {
			return nil, fmt.Errorf("%w: %q: %w", ErrInvalidItems, item, err)
		}
	}
	return sorted, nil
}

// Path returns the partition's path. No ZooKeeper calls.
func (p *Partitioner) Path() string {
	if p == nil {
		return ""
	}
	return p.path
}

// ID returns this member's id. No ZooKeeper calls.
func (p *Partitioner) ID() string {
	if p == nil {
		return ""
	}
	return p.cfg.id
}

// Items returns the set, sorted (a copy). No ZooKeeper calls.
func (p *Partitioner) Items() []string {
	if p == nil {
		return nil
	}
	return slices.Clone(p.items)
}

func (p *Partitioner) partyPath() string { return zkpath.Join(p.path, "party") }

func (p *Partitioner) lockPath(item string) string {
	return zkpath.Join(zkpath.Join(p.path, "locks"), item)
}

func (p *Partitioner) groupOptions() []group.Option {
	if p.cfg.kazoo {
		return []group.Option{group.WithShallowParty()}
	}
	return nil
}

func (p *Partitioner) lockOptions() []lock.Option {
	opts := []lock.Option{lock.WithData([]byte(p.cfg.id))}
	if p.cfg.kazoo {
		opts = append(opts, lock.WithDialect(recipes.Kazoo))
	}
	if p.cfg.policy != nil {
		opts = append(opts, lock.WithLossPolicy(*p.cfg.policy))
	}
	return opts
}

// Run makes this process a member of the group and sends a Partition on
// the returned Stream's C each time it acquired its share: first once the
// members held still for the boundary (WithBoundary), then again after
// each change of the members and after each loss, every time only once
// the Partition sent before was released. The loop, kazoo's
// SetPartitioner's state machine:
//
//  1. allocating: wait until the members' ids held still for the
//     boundary, with this member among them (after a session loss it is
//     listed again once the group re-created its node; in Curator's
//     layout an id still held by the node of an earlier incarnation of
//     this member is waited for, as group.Join waits);
//  2. split the items with the partition function and lock each item of
//     this member's share, in order; when the members change meanwhile,
//     release what was taken and go back to 1;
//  3. acquired: send the Partition (none is sent already lost);
//  4. release: when the members change, its Context is done with
//     ErrRebalance (ErrStopped when the stream ends), or with a lock's
//     cause when one may be lost; the holder stops working on the items
//     and calls Release, which deletes the locks; then back to 1.
//
// A Partition is sent to one reader at a time: Run waits for its Release
// before it allocates again, and never deletes the locks of a Partition it
// sent. A Partition it could not send (the members changed or it was lost
// first) it releases itself.
//
// C is closed once ctx is done or the reader calls Stop, or the session is
// closed, or the partition function returned a bad share (ErrBadShare).
// Then the Stream's Err says why (nil after Stop; ctx's error; one wrapping
// recipes.ErrClosed, ErrBadShare, ErrRunning, ErrNilPartitioner, or a
// server's refusal), the member has left the group (1 exists + 1 delete,
// in the background when the connection is down), and a Partition still
// held has its Context done (ErrStopped): its locks stay until its
// Release, or the session's end. A done ctx sends nothing.
//
// Cost: joining, 1 create + 1 exists (+1 createContainer per missing
// level); following the members, group.Watch's (1 getChildren + 1 getData
// per member, then 1 getChildren + 1 getData per join, 1 getChildren per
// leave); each allocation, per item of the share a lock.Mutex.Lock (1
// create + 1 getChildren when free; +1 getData to wait behind a holder)
// and 1 getData (in the background) arming the watch on the lock node that
// ends the Partition if the node is deleted; Release, 1 delete per item. A
// change of the members costs every member a Release and an allocation.
// Run runs 1 goroutine, plus group.Watch's 3, the
// member node's 1 (persistent.Node), and 1 while it takes the locks, until
// C is closed.
func (p *Partitioner) Run(ctx context.Context) *recipes.Stream[*Partition] {
	fail := func(err error) *recipes.Stream[*Partition] {
		return recipes.StartStream(ctx, func(context.Context, chan<- *Partition) error { return err })
	}
	switch {
	case ctx == nil:
		return fail(nil) // StartStream reports the nil ctx
	case p == nil:
		return fail(ErrNilPartitioner)
	}
	p.mu.Lock()
	busy := p.running
	p.running = true
	p.mu.Unlock()
	if busy {
		return fail(fmt.Errorf("%w: member %q of %s", ErrRunning, p.cfg.id, p.path))
	}
	return recipes.StartStream(ctx, func(ctx context.Context, out chan<- *Partition) error {
		defer func() {
			p.mu.Lock()
			p.running = false
			p.mu.Unlock()
		}()
		err := p.run(ctx, out)
		if ctx.Err() != nil {
			return nil // the Stream says whose doing that was
		}
		return err
	})
}

// run is Run's loop.
func (p *Partitioner) run(ctx context.Context, out chan<- *Partition) error {
	gopts := p.groupOptions()
	m, err := group.Join(ctx, p.s, p.partyPath(), p.cfg.id, gopts...)
	if err != nil {
		return fmt.Errorf("partition: %w", err)
	}
	defer func() {
		lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), p.s.SessionTimeout())
		defer cancel()
		_ = m.Leave(lctx)
	}()
	w := group.Watch(ctx, p.s, p.partyPath(), gopts...)
	defer func() {
		w.Stop()
		for range w.C {
		}
	}()
	v := &view{w: w, id: p.cfg.id}
	for {
		members, err := v.stable(ctx, p.cfg.boundary)
		if err != nil {
			return err
		}
		share, err := checkShare(p.cfg.fn(p.cfg.id, slices.Clone(members), slices.Clone(p.items)), p.items)
		if err != nil {
			return fmt.Errorf("partition: %s as %q: %w", p.path, p.cfg.id, err)
		}
		part, err := p.allocate(ctx, v, members, share)
		if err != nil {
			return err
		}
		if part != nil {
			if err := p.deliver(ctx, out, v, part); err != nil {
				return err
			}
		}
	}
}

// allocate takes the locks of share. It returns nil, nil when the members
// changed meanwhile or a lock was lost on the way (what was taken is
// released): start over.
func (p *Partitioner) allocate(ctx context.Context, v *view, members, share []string) (*Partition, error) {
	actx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	type taken struct {
		locks []*lock.Mutex
		err   error
	}
	done := make(chan taken, 1)
	go func() {
		ls, err := p.lockAll(actx, share)
		if err == nil {
			hooks.AfterShareTaken(actx, p.path) // tests: a change arrives now
		}
		done <- taken{ls, err}
	}()
	changed := false
	for {
		select {
		case snap, ok := <-v.w.C:
			moved, err := v.recv(snap, ok)
			if err != nil {
				cancel(err)
				if t := <-done; t.err == nil {
					unlockAll(ctx, t.locks)
				}
				return nil, err
			}
			if moved && !changed {
				changed = true
				cancel(ErrRebalance)
			}
		case t := <-done:
			switch {
			case t.err != nil && changed:
				return nil, nil
			case t.err != nil:
				return nil, fmt.Errorf("partition: %s as %q: %w", p.path, p.cfg.id, t.err)
			case changed:
				unlockAll(ctx, t.locks)
				return nil, nil
			}
			part := newPartition(members, share, t.locks)
			if !part.live(p.s) {
				part.takeBack(ctx, recipes.ErrSessionLost)
				return nil, nil
			}
			return part, nil
		}
	}
}

// lockAll locks each item in order; on failure it releases what it took.
func (p *Partitioner) lockAll(ctx context.Context, items []string) ([]*lock.Mutex, error) {
	ls := make([]*lock.Mutex, 0, len(items))
	for _, item := range items {
		m, err := lock.New(p.s, p.lockPath(item), p.lockOptions()...)
		if err == nil {
			err = m.Lock(ctx)
		}
		if err != nil {
			unlockAll(ctx, ls)
			return nil, err
		}
		ls = append(ls, m)
	}
	return ls, nil
}

// unlockAll releases locks nobody was handed, last taken first.
func unlockAll(ctx context.Context, ls []*lock.Mutex) {
	for i := len(ls) - 1; i >= 0; i-- {
		_ = ls[i].Unlock(context.WithoutCancel(ctx))
	}
}

// deliver sends part, then waits for its Release, ending its Context when
// the members change or the stream ends. It returns nil to allocate again.
func (p *Partitioner) deliver(ctx context.Context, out chan<- *Partition, v *view, part *Partition) error {
	for sent := false; ; {
		var send chan<- *Partition
		if !sent {
			send = out
		}
		var lost <-chan struct{}
		if !sent {
			lost = part.ctx.Done()
		}
		select {
		case send <- part:
			sent = true
		case <-lost: // before anyone had it: start over
			part.takeBack(ctx, context.Cause(part.ctx))
			return nil
		case <-part.done:
			return nil
		case snap, ok := <-v.w.C:
			moved, err := v.recv(snap, ok)
			switch {
			case err != nil && sent:
				part.end(fmt.Errorf("%w: %w", ErrStopped, err))
				return err
			case err != nil:
				part.takeBack(ctx, ErrStopped)
				return err
			case moved && sent:
				part.end(ErrRebalance)
			case moved:
				part.takeBack(ctx, ErrRebalance)
				return nil
			}
		case <-ctx.Done():
			cause := fmt.Errorf("%w: %w", ErrStopped, context.Cause(ctx))
			if sent {
				part.end(cause)
			} else {
				part.takeBack(ctx, cause)
			}
			return recipes.ContextError(ctx)
		}
	}
}

// view is what a Run knows of the members: the ids of the newest
// Snapshot.
type view struct {
	w       *recipes.Stream[group.Snapshot]
	id      string
	members []string // sorted (Snapshots are)
	seen    bool
}

// recv takes in a receive from w.C and reports whether the member ids
// changed; an error when C is closed.
func (v *view) recv(snap group.Snapshot, ok bool) (bool, error) {
	if !ok {
		if err := v.w.Err(); err != nil {
			return false, err
		}
		return false, errors.New("partition: members' watch stopped")
	}
	ids := snap.IDs()
	moved := !v.seen || !slices.Equal(ids, v.members)
	v.members, v.seen = ids, true
	return moved, nil
}

// stable waits until the member ids held still for boundary with this
// member among them, and returns them. The wait starts now, and again at
// every change of the ids; a Snapshot with the same ids (a member's data
// updated, its node re-created after a session loss) does not count.
func (v *view) stable(ctx context.Context, boundary time.Duration) ([]string, error) {
	var deadline time.Time // zero while this member is not listed
	arm := func() {
		deadline = time.Time{}
		if v.seen && slices.Contains(v.members, v.id) {
			deadline = time.Now().Add(boundary)
		}
	}
	arm()
	t := time.NewTimer(time.Hour)
	// stop leaves t stopped with an empty channel (the module's Go 1.22
	// timers may hold a stale tick after Stop).
	stop := func() {
		if !t.Stop() {
			select {
			case <-t.C:
			default:
			}
		}
	}
	stop()
	for {
		var quiet <-chan time.Time
		if !deadline.IsZero() {
			t.Reset(time.Until(deadline))
			quiet = t.C
		}
		select {
		case snap, ok := <-v.w.C:
			stop()
			moved, err := v.recv(snap, ok)
			if err != nil {
				return nil, err
			}
			if moved {
				arm()
			}
		case <-quiet:
			return slices.Clone(v.members), nil
		case <-ctx.Done():
			stop()
			return nil, recipes.ContextError(ctx)
		}
	}
}
