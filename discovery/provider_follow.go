// How a Provider follows its service: a cache.ChildrenCache of the
// service's node whose events it applies to its instances, started again
// after a pause when a read is refused.

package discovery

import (
	"bytes"
	"context"
	"errors"
	"maps"
	"slices"

	"github.com/zkrecipes/zkrecipes/cache"
	"github.com/zkrecipes/zkrecipes/internal/zkpath"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// follow is the Provider's loop: a cache.ChildrenCache of the service's
// node, whose events it applies, putting the usable instances after the
// load and after each change. It returns nil when ctx ends, or the error
// that stopped it (the Session closed). A cache that ends for another
// reason (a read the server refused) is started again after a pause.
func (p *Provider) follow(ctx context.Context, put func([]Instance)) error {
	loaded := false
	for {
		if ctx.Err() != nil {
			return nil
		}
		if _, err := p.d.s.WaitUsable(ctx); err != nil {
			return p.stopped(ctx, err) // ErrClosed, ErrNilSession, or nil: ctx ended
		}
		c, err := cache.NewChildrenCache(p.d.s, p.path)
		if err != nil {
			return err
		}
		err = p.apply(ctx, c, put, &loaded)
		if ctx.Err() != nil {
			return nil
		}
		if err := p.stopped(ctx, err); err != nil || ctx.Err() != nil {
			return err
		}
	}
}

// apply runs c and applies its events until its stream ends, and returns
// why. A cache started again reports every instance again: the ones it
// does not report by its EventInitialized are dropped then. It puts the
// usable instances at the first load's end (*loaded turns true) and after
// each change once loaded.
func (p *Provider) apply(ctx context.Context, c *cache.ChildrenCache, put func([]Instance), loaded *bool) error {
	events := c.Watch(ctx)
	defer events.Stop()
	seen := map[string]bool{} // the instances this cache holds
	for ev := range events.C {
		_, name := zkpath.Split(ev.Node.Path)
		changed := false
		switch ev.Type {
		case cache.EventAdded, cache.EventUpdated:
			seen[name] = true
			inst, err := Unmarshal(ev.Node.Data)
			if err != nil {
				p.d.s.Logger().Debug("discovery: instance left out of the cache", "path", ev.Node.Path, "err", err)
				changed = p.drop(name)
				break
			}
			changed = p.put(name, inst, ev.Node.Data)
		case cache.EventRemoved:
			delete(seen, name)
			changed = p.drop(name)
		case cache.EventInitialized:
			changed = p.keepOnly(seen)
			if !*loaded {
				*loaded, changed = true, true
			}
		}
		if changed && *loaded {
			put(p.Instances())
		}
	}
	return events.Err()
}

// stopped sorts an error of a read: it returns the error that must stop
// the loop (the Session closed), or nil after pausing (a server answer such
// as an ACL refusal, to be tried again).
func (p *Provider) stopped(ctx context.Context, err error) error {
	if errors.Is(err, recipes.ErrClosed) || errors.Is(err, recipes.ErrNilSession) {
		return err
	}
	if ctx.Err() == nil {
		p.d.s.Logger().Warn("discovery: provider read failed; trying again", "path", p.path, "err", err)
		_ = p.d.s.Pause(ctx) // ends early with ctx
	}
	return nil
}

// sortedKeys returns m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// put caches c's instance; it reports whether the cache changed.
func (p *Provider) put(c string, inst Instance, raw []byte) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if old, ok := p.nodes[c]; ok && bytes.Equal(old.raw, raw) {
		return false
	}
	p.nodes[c] = cached{inst, raw}
	return true
}

// drop removes c from the cache; it reports whether the cache changed.
func (p *Provider) drop(c string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, ok := p.nodes[c]
	delete(p.nodes, c)
	return ok
}

// keepOnly drops the instances not in names; it reports whether the cache
// changed.
func (p *Provider) keepOnly(names map[string]bool) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := len(p.nodes)
	maps.DeleteFunc(p.nodes, func(c string, _ cached) bool { return !names[c] })
	return len(p.nodes) != n
}
