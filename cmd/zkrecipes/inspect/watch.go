package inspect

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/zkrecipes/internal/zkpath"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// minGap is the shortest time between two views: a burst of changes is
// drawn once.
const minGap = 100 * time.Millisecond

// clearScreen moves the cursor home and clears the terminal (ANSI).
const clearScreen = "\x1b[H\x1b[2J"

// watch draws the path, then draws it again whenever a child of the path
// (or of the layout's subpath: leases, locks, entries, taken) is added or
// removed, or the path is created or deleted, and at least every
// -interval; it returns nil when ctx is done or after -count views.
//
// Bounded: at most 3 watches are armed at a time, through the Session's
// registry (one go-zookeeper watch per path and kind, whoever subscribes),
// and views are at least minGap apart. Cost per view: Inspect's reads, the
// "cons" connections, and 1 getChildren (or exists) per watched path whose
// watch fired.
func (c *cli) watch(ctx context.Context, s *recipes.Session, out io.Writer) error {
	tick := time.NewTicker(c.interval)
	defer tick.Stop()
	for views := 0; c.count == 0 || views < c.count; views++ {
		if views > 0 {
			// Wait before drawing again, so bursts coalesce.
			t := time.NewTimer(minGap)
			select {
			case <-ctx.Done():
				t.Stop()
				return nil
			case <-t.C:
			}
		}
		rep, err := c.inspect(ctx, s)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return err
		}
		ws, err := c.arm(ctx, s, rep)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		if c.clear && !c.json() {
			_, _ = io.WriteString(out, clearScreen)
		}
		if err := c.write(out, rep); err != nil {
			closeAll(ws)
			return err
		}
		if c.count > 0 && views+1 == c.count {
			closeAll(ws)
			return nil
		}
		fired := make(chan struct{}, 1)
		stop := make(chan struct{})
		for _, w := range ws {
			go func(w *recipes.Watch) {
				select {
				case <-w.Fired():
					select {
					case fired <- struct{}{}:
					default:
					}
				case <-stop:
				}
			}(w)
		}
		select {
		case <-ctx.Done():
		case <-fired:
		case <-tick.C:
		}
		close(stop)
		closeAll(ws)
		if ctx.Err() != nil {
			return nil
		}
	}
	return nil
}

// arm subscribes to the child watches that tell the layout changed: on
// the path (an exists watch when it is absent) and on the subpaths its
// kind keeps nodes in. Watches armed before them may have fired already:
// the view drawn after arming is at least as new as their state.
func (c *cli) arm(ctx context.Context, s *recipes.Session, rep *Report) ([]*recipes.Watch, error) {
	paths := []string{rep.Path}
	switch rep.Kind {
	case KindSemaphore:
		if rep.Dialect == recipes.Kazoo.String() {
			paths = append(paths, zkpath.Join(rep.Path, kazooSemLock))
		} else {
			paths = append(paths, zkpath.Join(rep.Path, leasesChild), zkpath.Join(rep.Path, locksChild))
		}
	case KindQueue:
		paths = append(paths, zkpath.Join(rep.Path, takenChild), zkpath.Join(rep.Path, entriesChild))
	}
	var ws []*recipes.Watch
	for _, p := range paths {
		_, _, w, err := s.WatchChildren(ctx, p)
		if errors.Is(err, zk.ErrNoNode) {
			_, _, w, err = s.WatchExists(ctx, p)
		}
		if err != nil {
			closeAll(ws)
			return nil, err
		}
		ws = append(ws, w)
	}
	return ws, nil
}

func closeAll(ws []*recipes.Watch) {
	for _, w := range ws {
		w.Close()
	}
}
