// The Provider: a service's instances as its cache holds them, Pick
// with the strategy, and the errors noted against instances. How it
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
	"time"

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
// A Provider is safe for concurrent use. Start it (NewProvider sends
// nothing), and Close it when done.
type Provider struct {
	d      *Discovery
	name   string
	path   string
	opts   providerOptions
	ready  chan struct{} // closed after the first load
	loaded bool          // ready is closed (the loop's own)
	done   chan struct{} // closed when the loop has returned, or by Close before Start

	mu      sync.Mutex
	started bool               // Start was called
	stop    context.CancelFunc // ends the loop; set by Start
	nodes   map[string]cached  // by node name
	changed chan struct{}
	downs   map[string]*downNote // by instance id
	err     error                // set once the loop has ended
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
// serviceProviderBuilder().build()); Start loads it and follows the
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
		ready: make(chan struct{}), done: make(chan struct{}),
		nodes: map[string]cached{}, changed: make(chan struct{}), downs: map[string]*downNote{}}, nil
}

// Start loads the Provider's cache and returns once it is loaded
// (Curator's ServiceProvider.start); the goroutine it starts follows the
// service until Close or the Session's close. It fails with ctx's error
// when ctx ends before the load (nothing is sent when ctx is already
// done; the Provider is then closed), with recipes.ErrClosed, or with
// ErrProviderClosed when the Provider was started or closed before.
// Cost: the load (see Provider).
func (p *Provider) Start(ctx context.Context) error {
	if p == nil {
		return ErrNilReceiver
	}
	if err := p.d.check(ctx); err != nil {
		return err
	}
	p.mu.Lock()
	if p.started || p.err != nil {
		p.mu.Unlock()
		return fmt.Errorf("%w: provider of %s started or closed before", ErrProviderClosed, p.path)
	}
	lctx, stop := context.WithCancel(context.Background())
	p.started, p.stop = true, stop
	p.mu.Unlock()
	go func() {
		err := p.follow(lctx)
		p.finish(err)
	}()
	select {
	case <-p.ready:
		return nil
	case <-p.done:
		return p.Err()
	case <-ctx.Done():
		_ = p.Close()
		return fmt.Errorf("discovery: provider of %s: %w", p.path, recipes.ContextError(ctx))
	}
}

// finish records why the loop ended and wakes everyone.
func (p *Provider) finish(err error) {
	p.mu.Lock()
	if err == nil {
		p.err = ErrProviderClosed
	} else {
		p.err = fmt.Errorf("%w: %w", ErrProviderClosed, err)
	}
	close(p.changed)
	p.mu.Unlock()
	close(p.done)
}

// Name returns the service's name.
func (p *Provider) Name() string { return p.name }

// Close stops the Provider and waits for its goroutine; its watches are
// left to fire (they cost nothing more). Later Picks fail with
// ErrProviderClosed; Instances returns the last state. Closing again, or
// closing a Provider never started, does nothing more. Sends nothing.
func (p *Provider) Close() error {
	if p == nil {
		return ErrNilReceiver
	}
	p.mu.Lock()
	stop, started := p.stop, p.started
	p.started = true // a Start after Close fails
	p.mu.Unlock()
	if stop != nil {
		stop()
	} else if !started {
		p.finish(nil)
	}
	<-p.done
	return nil
}

// Err returns nil until the Provider stops, then an error wrapping
// ErrProviderClosed and, when it stopped on its own, the cause
// (recipes.ErrClosed: its session was closed).
func (p *Provider) Err() error {
	if p == nil {
		return ErrNilReceiver
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// Changed returns a channel closed at the next change of the cache (an
// instance added, removed or changed) or when the Provider stops. Call it
// again for the next change. Sends nothing.
func (p *Provider) Changed() <-chan struct{} {
	if p == nil {
		c := make(chan struct{})
		close(c)
		return c
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.changed
}

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
// usable, with ErrProviderClosed once the Provider has stopped. Sends
// nothing.
func (p *Provider) Pick() (Instance, error) {
	if p == nil {
		return Instance{}, ErrNilReceiver
	}
	if err := p.Err(); err != nil {
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
