package group

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/zkrecipes/internal/latest"
	"github.com/zkrecipes/zkrecipes/internal/zkcall"
	"github.com/zkrecipes/zkrecipes/internal/zkpath"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// Watch reports the group's membership as it changes, on the returned
// Stream's C: first the current members (an empty Snapshot when there are
// none or the path does not exist), then a new Snapshot after every change
// seen: a member joined, left (its node deleted: Leave, or its session
// expired) or updated its data. C coalesces: a reader that falls behind
// gets the newest Snapshot, never an older one after a newer one, and
// Watch never waits for the reader. A Snapshot equal to the last one sent
// is not sent again.
//
// C is closed once ctx is done or the reader calls Stop (after the request
// in flight, if any), or the session is closed; at once for bad input.
// Then the Stream's Err says why: nil after Stop, ctx's error, an error
// wrapping recipes.ErrClosed, one wrapping recipes.ErrNoAuth (the server
// refused to list the group, or refuses a Session without credentials),
// or the input's (recipes.ErrNilSession, recipes.ErrInvalidPath,
// recipes.ErrBadArgument for a nil ctx). A done
// ctx sends nothing. Through a session loss, Watch lists the group again
// once a new session is established.
//
// Cost: 1 getChildren with a child watch on the path, + 1 getData with a
// data watch per member, for the first Snapshot (and again after a session
// loss); then per change: a join, 1 getChildren + 1 getData; a leave, 1
// getChildren (+1 getData when the member's own watch is seen first); an
// update, 1 getData. While the path does not exist, 1 exists watch waits
// for it. Watches are the Session's shared ones (see
// recipes.Session.WatchData), so a Watch on a group the Session already
// watches sends no request for what it watches, and a Watch that ends
// leaves at most one go-zookeeper watcher per node behind until that node
// changes. Watch runs 2 goroutines, plus 1 per member, until C is closed.
func Watch(ctx context.Context, s *recipes.Session, path string, opts ...Option) *recipes.Stream[Snapshot] {
	l, err := newLister(s, path, opts)
	return latest.Stream(ctx, func(ctx context.Context, put func(Snapshot)) error {
		if err != nil {
			return err
		}
		return l.follow(ctx, put)
	})
}

// cached is one member as a Watch knows it, with its data watch.
type cached struct {
	info Info
	w    *recipes.Watch
	stop chan struct{} // ends its waiter
}

// follower is one Watch's state; only follow's goroutine touches nodes.
type follower struct {
	*lister
	nodes  map[string]*cached // by node name
	wg     sync.WaitGroup     // the members' waiters
	notify chan struct{}      // capacity 1: "a member's watch fired"
	mu     sync.Mutex
	dirty  map[string]bool // names whose data watch fired
}

// follow lists the group and publishes Snapshots until ctx is done (nil)
// or the session closes (an error wrapping recipes.ErrClosed).
func (l *lister) follow(ctx context.Context, put func(Snapshot)) error {
	f := &follower{lister: l, nodes: map[string]*cached{}, notify: make(chan struct{}, 1), dirty: map[string]bool{}}
	defer f.dropAll()
	var (
		last      Snapshot
		published bool
	)
	publish := func() {
		snap := f.snapshot()
		if !published || !snap.equal(last) {
			put(snap)
			last, published = snap, true
		}
	}
	for ctx.Err() == nil {
		if _, err := zkcall.Usable(ctx, l.s); err != nil {
			return f.stopped(ctx, err)
		}
		names, _, cw, err := l.s.WatchChildren(ctx, l.path)
		switch {
		case errors.Is(err, zk.ErrNoNode):
			f.dropAll()
			publish()
			if err := f.waitCreated(ctx); err != nil {
				if err := f.retry(ctx, err); err != nil {
					return f.stopped(ctx, err)
				}
			}
			continue
		case err != nil:
			if err := f.retry(ctx, err); err != nil {
				return f.stopped(ctx, err)
			}
			continue
		}
		err = f.sync(ctx, names)
		publish()
		if err != nil {
			cw.Close()
			if err := f.retry(ctx, err); err != nil {
				return f.stopped(ctx, err)
			}
			continue
		}
		select {
		case <-cw.Fired():
		case <-f.notify:
		case <-ctx.Done():
		}
		cw.Close()
	}
	return nil
}

// waitCreated waits, with the Session's exists watch on the path, until
// the group's node may exist.
func (f *follower) waitCreated(ctx context.Context) error {
	found, _, w, err := f.s.WatchExists(ctx, f.path)
	if err != nil {
		return err
	}
	defer w.Close()
	if found {
		return nil
	}
	select {
	case <-w.Fired():
	case <-ctx.Done():
	}
	return nil
}

// sync brings nodes up to the listing: members gone are dropped, new ones
// and those whose watch fired are read (with a data watch). It returns the
// first error that must be retried; the members read so far are kept.
func (f *follower) sync(ctx context.Context, names []string) error {
	listed := make(map[string]bool, len(names))
	for _, n := range names {
		if f.isMember(n) {
			listed[n] = true
		}
	}
	for name := range f.nodes {
		if !listed[name] {
			f.drop(name)
		}
	}
	dirty := f.takeDirty()
	slices.Sort(names)
	for _, name := range names {
		if !listed[name] || f.nodes[name] != nil && !dirty[name] {
			continue
		}
		data, st, w, err := f.s.WatchData(ctx, zkpath.Join(f.path, name))
		switch {
		case errors.Is(err, zk.ErrNoNode):
			f.drop(name) // left meanwhile; the child watch fires too
			continue
		case err != nil:
			f.markDirty(name) // read it again next time
			return err
		}
		f.drop(name)
		c := &cached{info: f.info(name, data, st), w: w, stop: make(chan struct{})}
		f.nodes[name] = c
		f.wg.Add(1)
		go func() {
			defer f.wg.Done()
			select {
			case <-c.w.Fired():
				f.markDirty(name)
			case <-c.stop:
			}
		}()
	}
	return nil
}

func (f *follower) snapshot() Snapshot {
	snap := make(Snapshot, 0, len(f.nodes))
	for _, c := range f.nodes {
		i := c.info
		i.Data = slices.Clone(i.Data) // each Snapshot is the reader's own
		snap = append(snap, i)
	}
	sortInfos(snap)
	return snap
}

// drop forgets a member and ends its waiter.
func (f *follower) drop(name string) {
	if c := f.nodes[name]; c != nil {
		close(c.stop)
		c.w.Close()
		delete(f.nodes, name)
	}
}

// dropAll forgets every member and waits for their waiters.
func (f *follower) dropAll() {
	for name := range f.nodes {
		f.drop(name)
	}
	f.wg.Wait()
}

func (f *follower) markDirty(name string) {
	f.mu.Lock()
	f.dirty[name] = true
	f.mu.Unlock()
	select {
	case f.notify <- struct{}{}:
	default:
	}
}

func (f *follower) takeDirty() map[string]bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	d := f.dirty
	f.dirty = map[string]bool{}
	return d
}

// stopped is follow's result when it stops: nil when ctx ended, else why.
func (f *follower) stopped(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	return fmt.Errorf("group: watch %s: %w", f.path, err)
}

// retry pauses after a failed request and returns nil to go on, or the
// error to stop with: err once ctx is done or the session is closed; an
// error wrapping recipes.ErrNoAuth when the server refused the request or
// refuses the Session for missing authentication (a refusal is final, as
// everywhere in the recipes). Another error that is not about the
// connection is logged, and retried after 100 ms.
func (f *follower) retry(ctx context.Context, err error) error {
	if ctx.Err() != nil || errors.Is(err, recipes.ErrClosed) || f.s.State() == recipes.StateClosed {
		return err
	}
	if err := zkcall.Answer(err); errors.Is(err, recipes.ErrNoAuth) {
		return err
	}
	if zkcall.IsConnErr(err) {
		return zkcall.Pause(ctx, f.s)
	}
	f.s.Logger().Warn("group: watch", "path", f.path, "err", err)
	t := time.NewTimer(100 * time.Millisecond)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
