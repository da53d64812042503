package chaos

import (
	"context"
	"errors"
	"fmt"
	"path"
	"sort"
	"time"

	"github.com/go-zookeeper/zk"
)

// The run's root (Config.Root) holds a child per scenario. Invariant: the
// root has no child when the run starts (prepareRoot refuses one that
// has), so everything under it at the end is the run's own, and the run
// deletes it all (finishRoot), the root too when the run made it.

// prepareRoot makes root (and its parents) unless it exists; it fails with
// ErrRootInUse when root already has children. Cost: 1 exists, then 1
// children or up to one create per path component.
func (a *admin) prepareRoot(root string) (created bool, err error) {
	ok, _, err := a.conn.Exists(root)
	if err != nil {
		return false, fmt.Errorf("chaos: root %s: %w", root, err)
	}
	if ok {
		kids, _, err := a.conn.Children(root)
		if err != nil {
			return false, fmt.Errorf("chaos: root %s: %w", root, err)
		}
		if len(kids) > 0 {
			return false, fmt.Errorf("%w: %s has %d children (%v); choose another root", ErrRootInUse, root, len(kids), kids)
		}
		return false, nil
	}
	if err := a.ensure(root); err != nil {
		return false, fmt.Errorf("chaos: make root %s: %w", root, err)
	}
	return true, nil
}

// finishRoot deletes everything under root (root too when created) and
// returns what a final listing still finds there: every node under root,
// and root itself when the run made it. It tries again while nodes are
// left (an expired session's ephemeral nodes may linger while the
// ensemble recovers), for at most two session timeouts. Cost: a getChildren and
// a delete per node, then a sync and a getChildren per node left.
func (a *admin) finishRoot(ctx context.Context, root string, created bool) ([]string, error) {
	deadline := time.Now().Add(2 * a.st)
	for {
		kids, _, err := a.conn.Children(root)
		if err == nil {
			for _, k := range kids {
				a.removeAll(path.Join(root, k))
			}
			if created {
				_ = a.conn.Delete(root, -1)
			}
		}
		left, err := a.listRoot(root, created)
		if (err == nil && len(left) == 0) || time.Now().After(deadline) || ctx.Err() != nil {
			return left, err
		}
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// listRoot returns every node under root after a sync, and root itself
// when withRoot and it exists. A root that does not exist has nothing
// under it.
func (a *admin) listRoot(root string, withRoot bool) ([]string, error) {
	if _, err := a.conn.Sync(root); err != nil && !errors.Is(err, zk.ErrNoNode) {
		return nil, err
	}
	var out []string
	var walk func(p string) error
	walk = func(p string) error {
		kids, _, err := a.conn.Children(p)
		if err != nil {
			return err
		}
		for _, k := range kids {
			c := path.Join(p, k)
			out = append(out, c)
			if err := walk(c); err != nil && !errors.Is(err, zk.ErrNoNode) {
				return err
			}
		}
		return nil
	}
	err := walk(root)
	if errors.Is(err, zk.ErrNoNode) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if withRoot {
		out = append(out, root)
	}
	sort.Strings(out)
	return out, nil
}
