// The Provider: a service's instances as its cache holds them, the
// Stream that runs it (Watch), Pick with the strategy, and the errors
// noted against instances. How it
// follows the service is in provider_follow.go, its options in
// provider_options.go.

package discovery

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zkrecipes/zkrecipes/internal/latest"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// Provider is a cache of one service's instances that follows ZooKeeper,
// and picks one of them for each use (Curator's ServiceProvider, with its
// ServiceCache). Like Curator's ServiceCache on its cache, it follows the
// service's node with a cache.ChildrenCache (a child watch on the
// service's node, a data watch on every instance node), which runs on a
// goroutine of its own; the Session holds one watch per path and kind
// however many Providers of the service it serves.
//
// Usable instances are the cached ones that are enabled (not Disabled),
// pass every filter and are not noted down, sorted by node name. An
// instance node whose data is not an instance is left out.
//
// Invariants: the cache only changes to what ZooKeeper held at some
// moment: a listing and each instance's data as last read; once no event
// is pending it equals ZooKeeper's state as of its last reads. While the
// session is disconnected the cache keeps its last state; after a
// reconnection or a session expiry it is read again, and changes to what
// was read (see package cache). Reading the cache (Instances, Pick) sends
// nothing.
//
// Cost: the ChildrenCache's. Loading costs 1 getChildren + 1 getData per
// instance (each setting a watch); then an instance added costs 1
// getChildren + 1 getData, one removed 1 getChildren, a data change 1
// getData; a reconnection the load again, a session expiry the load and 1
// sync. While the service's node does not exist, the Provider waits with
// an exists watch (1 exists) and sends nothing else; unlike Curator's, it
// never creates the node.
//
// A Provider is safe for concurrent use. Watch runs it (NewProvider sends
// nothing); it stops when that Stream ends.
type Provider struct {
	d       *Discovery
	name    string
	path    string
	opts    providerOptions
	watched atomic.Bool // Watch was called (with a ctx)

	mu    sync.Mutex
	nodes map[string]cached    // by node name
	downs map[string]*downNote // by instance id
	err   error                // set once the Stream has ended
}

type cached struct {
	inst Instance
	raw  []byte
}

type downNote struct {
	first time.Time
	count int
}

// NewProvider makes a Provider of service name (Curator's
// serviceProviderBuilder().build()); Watch loads it and follows the
// service. It fails, wrapping a sentinel, on an invalid name
// (ErrInvalidInstance) or options (recipes.ErrBadArgument). A constructor:
// it sends nothing and starts no goroutine.
func (d *Discovery) NewProvider(name string, opts ...ProviderOption) (*Provider, error) {
	if d == nil {
		return nil, ErrNilReceiver
	}
	path, err := d.ServicePath(name)
	if err != nil {
		return nil, err
	}
	o := providerOptions{downWindow: DefaultDownWindow, downThreshold: DefaultDownThreshold}
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	if o.err != nil {
		return nil, fmt.Errorf("discovery: provider of %s: %w", path, o.err)
	}
	if o.strategy == nil {
		o.strategy = RoundRobin()
	}
	return &Provider{d: d, name: name, path: path, opts: o,
		nodes: map[string]cached{}, downs: map[string]*downNote{}}, nil
}

// Watch loads the Provider's cache and follows the service (Curator's
// ServiceProvider.start, until its close), reporting the usable instances
// on the returned Stream's C: first once the cache is loaded, then after
// every change of the cache (an instance added, removed or changed), each
// time as Instances returns them. C coalesces: a reader that falls behind
// gets the newest list, never an older one after a newer one, and the
// Provider never waits for the reader. Pick and Instances read the cache
// while the Stream runs; the first value on C says the load is done.
//
// C is closed once ctx is done or the reader calls Stop (after the request
// in flight, if any), or the session is closed; at once for bad input.
// Then the Stream's Err says why: nil after Stop, ctx's error, an error
// wrapping recipes.ErrClosed, or the input's (ErrNilReceiver,
// recipes.ErrNilSession, recipes.ErrNilContext). A done ctx sends
// nothing. The Provider stops with its Stream: later Picks fail with an
// error wrapping ErrProviderClosed (and the Stream's error, if any);
// Instances returns the last state. A Provider is watched once: a second
// Watch returns a Stream that ends at once with ErrProviderClosed.
//
// Cost: the load and the changes (see Provider). Watch runs 3 goroutines
// until C is closed: the cache's, the Provider's loop, and the one
// delivering to C.
func (p *Provider) Watch(ctx context.Context) *recipes.Stream[[]Instance] {
	if p == nil {
		return recipes.StartStream(ctx, func(context.Context, chan<- []Instance) error { return ErrNilReceiver })
	}
	if ctx != nil && !p.watched.CompareAndSwap(false, true) {
		return recipes.StartStream(ctx, func(context.Context, chan<- []Instance) error {
			return fmt.Errorf("%w: provider of %s watched before", ErrProviderClosed, p.path)
		})
	}
	return latest.Stream(ctx, func(ctx context.Context, put func([]Instance)) error {
		err := p.d.check(ctx)
		if err == nil {
			err = p.follow(ctx, put)
		}
		p.finish(err)
		return err
	})
}

// finish records that the Provider stopped, and why.
func (p *Provider) finish(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err == nil {
		p.err = ErrProviderClosed
	} else {
		p.err = fmt.Errorf("%w: %w", ErrProviderClosed, err)
	}
}

// Name returns the service's name.
func (p *Provider) Name() string { return p.name }

// Instances returns the usable instances, sorted by node name (Curator's
// getAllInstances), as copies. Sends nothing.
func (p *Provider) Instances() []Instance {
	if p == nil {
		return nil
	}
	now := time.Now()
	p.mu.Lock()
	names := sortedKeys(p.nodes)
	all := make([]Instance, 0, len(names))
	for _, n := range names {
		inst := p.nodes[n].inst
		if inst.Disabled || p.isDownLocked(inst.ID, now) {
			continue
		}
		all = append(all, inst.clone())
	}
	p.mu.Unlock()
	return slices.DeleteFunc(all, func(inst Instance) bool {
		for _, f := range p.opts.filters {
			if !f(inst) {
				return true
			}
		}
		return false
	})
}

// Pick returns one usable instance, chosen by the Provider's Strategy
// (Curator's getInstance). It fails with ErrNoInstances when none is
// usable (before Watch's first value too), with an error wrapping
// ErrProviderClosed once the Provider has stopped. Sends nothing.
func (p *Provider) Pick() (Instance, error) {
	if p == nil {
		return Instance{}, ErrNilReceiver
	}
	p.mu.Lock()
	err := p.err
	p.mu.Unlock()
	if err != nil {
		return Instance{}, err
	}
	all := p.Instances()
	if len(all) == 0 {
		return Instance{}, fmt.Errorf("%w: service %s", ErrNoInstances, p.path)
	}
	i := p.opts.strategy.Pick(all)
	if i < 0 || i >= len(all) {
		return Instance{}, fmt.Errorf("%w: service %s: the strategy chose none", ErrNoInstances, p.path)
	}
	return all[i], nil
}

// NoteError notes that using the instance id failed (Curator's
// noteError): once the down policy's threshold of notes is reached within
// its window, the instance is not usable until the window has passed since
// the first note. Sends nothing.
func (p *Provider) NoteError(id string) {
	if p == nil {
		return
	}
	now := time.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.purgeLocked(now)
	n := p.downs[id]
	if n == nil {
		n = &downNote{first: now}
		p.downs[id] = n
	}
	n.count++
}

func (p *Provider) purgeLocked(now time.Time) {
	for id, n := range p.downs {
		if now.Sub(n.first) >= p.opts.downWindow {
			delete(p.downs, id)
		}
	}
}

func (p *Provider) isDownLocked(id string, now time.Time) bool {
	n := p.downs[id]
	return n != nil && n.count >= p.opts.downThreshold && now.Sub(n.first) < p.opts.downWindow
}

// clone copies the instance's slices and maps.
func (inst Instance) clone() Instance {
	inst.Payload = bytes.Clone(inst.Payload)
	if inst.URISpec != nil {
		u := URISpec{Parts: slices.Clone(inst.URISpec.Parts)}
		inst.URISpec = &u
	}
	if inst.Extra != nil {
		extra := make(map[string]json.RawMessage, len(inst.Extra))
		for k, v := range inst.Extra {
			extra[k] = bytes.Clone(v)
		}
		inst.Extra = extra
	}
	return inst
}
