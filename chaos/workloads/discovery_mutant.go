package workloads

import (
	"context"
	"errors"
	"sort"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/chaos/checkers"
	"github.com/zkrecipes/zkrecipes/chaos/cluster"
	"github.com/zkrecipes/zkrecipes/discovery"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// DiscoveryRearm is the discovery provider's re-arm mutant and its twin:
// the discovery workload with one provider, the target (c1, the only
// client a fault reaches), and three bystanders: two registrants and the
// mortal registrant (c2, c3, c4; more providers when the run asks for more
// clients).
//
// The twin's target is a discovery.Provider. With Mutant set, the target
// is a cache written by hand on the same watches (a child watch on the
// service's node, a data watch on each instance, read again when they
// fire) that takes a dropped watch (zk.EventNotWatching, which the Session
// delivers to every watch when the session expires) for "nothing
// changed": it does not set the watch again, as the Provider does by
// reloading everything on the next session. Without a fault its session
// never expires, and within one session go-zookeeper sets the watches
// again after a reconnection (cut-short): the mutant is correct. Under
// partition-expire aimed at it, its session expires, every watch is
// dropped, and its view stays frozen while the registrants go on
// updating, unregistering and registering: discovery-converges catches it
// (a view that keeps old versions, lacks new instances, lists
// unregistered ones, or an abandoned session's instances past their
// expiry).
type DiscoveryRearm struct {
	Mutant bool
}

// QuickFaults names the faults that expose the discovery re-arm mutant.
func (w *DiscoveryRearm) QuickFaults() []string { return mutantFaults["discovery-rearm"] }

// Name is "discovery-rearm-mutant", or "discovery-rearm" for the twin.
func (w *DiscoveryRearm) Name() string { return mutantName("discovery-rearm", w.Mutant) }

// Checkers are the discovery workload's.
func (w *DiscoveryRearm) Checkers(cfg CheckConfig) []checkers.Checker {
	return (&Discovery{}).Checkers(cfg)
}

// Run runs the target and the bystanders until ctx is done.
func (w *DiscoveryRearm) Run(ctx context.Context, env *cluster.Env) error {
	cs, closeLinks, err := mutantClients(env, 4, 1)
	if err != nil {
		return err
	}
	defer closeLinks()
	roles := make([]discRole, len(cs))
	for i := range roles {
		switch i {
		case 0:
			roles[i] = discProvider
			if w.Mutant {
				roles[i] = discForgetful
			}
		case 1, 2:
			roles[i] = discRegistrant
		case 3:
			roles[i] = discMortal
		default:
			roles[i] = discProvider
		}
	}
	return runDiscovery(ctx, env, cs, roles, 0)
}

// forgetful is the mutant's provider: a cache of the service's instances
// kept by one goroutine on one-shot watches set through the Session.
type forgetful struct {
	s    *recipes.Session
	path string
	stop context.CancelFunc
	done chan struct{}

	mu      sync.Mutex
	nodes   map[string]discovery.Instance // by node name
	changed chan struct{}                 // closed at the next change
	next    chan struct{}                 // changed as of the last Instances
}

// newForgetful starts the mutant's provider of the service at path and
// returns once its cache is loaded, or with ctx's error.
func newForgetful(ctx context.Context, s *recipes.Session, path string) (*forgetful, error) {
	lctx, stop := context.WithCancel(context.Background())
	p := &forgetful{s: s, path: path, stop: stop, done: make(chan struct{}), nodes: map[string]discovery.Instance{}, changed: make(chan struct{})}
	ready := make(chan struct{})
	go func() {
		defer close(p.done)
		p.follow(lctx, ready)
	}()
	select {
	case <-ready:
		return p, nil
	case <-ctx.Done():
		_ = p.Close()
		return nil, ctx.Err()
	}
}

// wait returns true at the first change after the last Instances, false
// when ctx is done first.
func (p *forgetful) wait(ctx context.Context) bool {
	p.mu.Lock()
	ch := p.next
	if ch == nil {
		ch = p.changed
	}
	p.mu.Unlock()
	select {
	case <-ch:
		return true
	case <-ctx.Done():
		return false
	}
}

// Instances returns the cached instances, sorted by node name.
func (p *forgetful) Instances() []discovery.Instance {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.next = p.changed
	names := make([]string, 0, len(p.nodes))
	for n := range p.nodes {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]discovery.Instance, len(names))
	for i, n := range names {
		out[i] = p.nodes[n]
	}
	return out
}

// Err is nil: the mutant stops only when closed.
func (p *forgetful) Err() error { return nil }

// Close stops the goroutine.
func (p *forgetful) Close() error {
	p.stop()
	<-p.done
	return nil
}

// set caches (ok) or drops node c and publishes a change.
func (p *forgetful) set(c string, inst discovery.Instance, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	old, had := p.nodes[c]
	if ok {
		if had && old.Equal(inst) {
			return
		}
		p.nodes[c] = inst
	} else {
		if !had {
			return
		}
		delete(p.nodes, c)
	}
	close(p.changed)
	p.changed = make(chan struct{})
}

// fired is a watch's event, for the node name key ("" for the service).
type fired struct {
	key string
	ev  zk.Event
}

// follow lists the service with a child watch and reads every new or
// changed instance with a data watch, again after each event, until ctx
// ends. Any event on an instance marks it to be read again (the read
// finds it gone or changed), so events arriving in any order leave the
// cache right.
func (p *forgetful) follow(ctx context.Context, ready chan struct{}) {
	events := make(chan fired)
	var wg sync.WaitGroup
	defer wg.Wait()
	watch := func(key string, w *recipes.Watch) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer w.Close()
			select {
			case <-w.Fired():
				select {
				case events <- fired{key, w.Event()}:
				case <-ctx.Done():
				}
			case <-ctx.Done():
			}
		}()
	}
	relist, dirty := true, map[string]bool{}
	for ctx.Err() == nil {
		if relist {
			children, _, w, err := p.s.WatchChildren(ctx, p.path)
			if err != nil {
				cluster.Sleep(ctx, 100*time.Millisecond)
				continue
			}
			watch("", w)
			relist = false
			listed := map[string]bool{}
			for _, c := range children {
				listed[c] = true
				p.mu.Lock()
				_, cached := p.nodes[c]
				p.mu.Unlock()
				if !cached {
					dirty[c] = true
				}
			}
			p.mu.Lock()
			var gone []string
			for c := range p.nodes {
				if !listed[c] {
					gone = append(gone, c)
				}
			}
			p.mu.Unlock()
			for _, c := range gone {
				p.set(c, discovery.Instance{}, false)
			}
		}
		for c := range dirty {
			data, _, w, err := p.s.WatchData(ctx, p.path+"/"+c)
			if errors.Is(err, zk.ErrNoNode) {
				delete(dirty, c)
				p.set(c, discovery.Instance{}, false)
				continue
			}
			if err != nil {
				break
			}
			watch(c, w)
			delete(dirty, c)
			inst, err := discovery.Unmarshal(data)
			p.set(c, inst, err == nil)
		}
		if len(dirty) > 0 {
			cluster.Sleep(ctx, 100*time.Millisecond)
			continue
		}
		if ready != nil {
			close(ready)
			ready = nil
		}
		select {
		case f := <-events:
			switch {
			case f.ev.Type == zk.EventNotWatching:
				// The bug: a dropped watch (the session expired) is
				// taken for "nothing changed", and not set again.
			case f.key == "":
				relist = true
			default:
				dirty[f.key] = true
			}
		case <-ctx.Done():
			return
		}
	}
}
