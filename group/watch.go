package group

import (
	"context"
	"fmt"
	"slices"

	"github.com/zkrecipes/zkrecipes/cache"
	"github.com/zkrecipes/zkrecipes/internal/latest"
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
// recipes.ErrNilContext). A done
// ctx sends nothing. Through a session loss, Watch lists the group again
// once a new session is established, and sends the next Snapshot once
// every member is read again.
//
// Watch follows the group with a cache.ChildrenCache of the path, whose
// Costs it has: 1 getChildren with a child watch on the path, + 1 getData
// with a data watch per member, for the first Snapshot; then per change:
// a join, 1 getChildren + 1 getData; a leave, 1 getChildren; an update,
// 1 getData. While the path does not exist, 1 exists watch waits for it.
// A reconnection reads the path and every member again, a session loss
// too, with 1 sync first. Children that are not members in the layout
// (kazoo's Party) are listed but not read. Watch runs 3 goroutines until
// C is closed: the cache's, its reader's, and the one delivering to C.
func Watch(ctx context.Context, s *recipes.Session, path string, opts ...Option) *recipes.Stream[Snapshot] {
	l, err := newLister(s, path, opts)
	return latest.Stream(ctx, func(ctx context.Context, put func(Snapshot)) error {
		if err != nil {
			return err
		}
		return l.follow(ctx, put)
	})
}

// follow runs the cache and puts a Snapshot after each change, once the
// cache is initialized, until ctx is done (nil) or the cache stops (why).
func (l *lister) follow(ctx context.Context, put func(Snapshot)) error {
	if ctx.Err() != nil {
		return nil
	}
	if _, err := l.s.WaitUsable(ctx); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("group: watch %s: %w", l.path, err)
	}
	c, err := cache.NewChildrenCache(l.s, l.path, cache.WithChildFilter(func(p string) bool {
		_, name := zkpath.Split(p)
		return l.isMember(name)
	}))
	if err != nil {
		return fmt.Errorf("group: %w", err)
	}
	events := c.Watch(ctx)
	defer events.Stop()
	var (
		members   = map[string]Info{} // by node path
		ready     bool                // initialized, and not reset since
		last      Snapshot
		published bool
	)
	for ev := range events.C {
		switch ev.Type {
		case cache.EventAdded, cache.EventUpdated:
			_, name := zkpath.Split(ev.Node.Path)
			members[ev.Node.Path] = l.info(name, ev.Node.Data, &ev.Node.Stat)
		case cache.EventRemoved:
			delete(members, ev.Node.Path)
		case cache.EventReset:
			ready = false
		case cache.EventInitialized:
			ready = true
		}
		if !ready {
			continue
		}
		snap := make(Snapshot, 0, len(members))
		for _, i := range members {
			i.Data = slices.Clone(i.Data) // each Snapshot is the reader's own
			snap = append(snap, i)
		}
		sortInfos(snap)
		if !published || !snap.equal(last) {
			put(snap)
			last, published = snap, true
		}
	}
	if err := events.Err(); err != nil && ctx.Err() == nil {
		return fmt.Errorf("group: watch %s: %w", l.path, recipes.Answer(err))
	}
	return nil
}
