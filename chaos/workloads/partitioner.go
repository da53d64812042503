package workloads

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/chaos/checkers"
	"github.com/zkrecipes/zkrecipes/chaos/cluster"
	"github.com/zkrecipes/zkrecipes/partition"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// Partitioner is the workload of package partition: every client, with its
// own recipes.Session on its own link, is a member of one set partition of
// items "item-0", "item-1", ... (6, or 2 more than the members when there
// are more than 4) at <root>/part, with a boundary of a tenth of the
// session timeout. Each Partition a member receives is recorded as one
// holding per item (the item's name as key, its lock's fencing token),
// from its receipt (when its Context is not done yet) to its Context done:
// released when the member was asked to give it up (partition.ErrRebalance,
// partition.ErrStopped), lost otherwise; the member then releases it.
// While it holds, a member writes each of its items' data node every 100
// ms, fenced by the item's lock, recorded as fenced writes. With 3 members
// or more, the last one churns: it runs for half a session timeout, stops
// (leaving the group) and runs again a tenth of a session timeout later,
// so the set is split again and again, with or without a fault.
//
// Once its context is done, the workload stops churning and waits, up to
// twice the session timeout, until every item is held, so that the
// history does not end in the middle of a rebalance; then every member
// stops and releases, the nodes left under the path are recorded, and the
// sessions close.
//
// Checked by: mutual exclusion per item (no item held by two members at
// any instant; each item's tokens grow), converged (every item owned at
// one instant within the liveness bound of the last heal), liveness after
// every heal, and no nodes left.
//
// PartitionerStale runs it as a mutant and twin.
type Partitioner struct{}

// Name is "partitioner".
func (w *Partitioner) Name() string { return "partitioner" }

// QuickFaults names the partitioner workload's quick-tier faults (see
// workloads.go).
func (w *Partitioner) QuickFaults() []string { return quickFaults[w.Name()] }

// partitionItems is the set of a partitioner workload of n members.
func partitionItems(n int) []string {
	var items []string
	for i := range max(6, n+2) {
		items = append(items, fmt.Sprintf("item-%d", i))
	}
	return items
}

// partitionCheckers are the partitioner workloads' checkers for n members.
func partitionCheckers(cfg CheckConfig, n int) []checkers.Checker {
	return []checkers.Checker{checkers.MutualExclusion(1), checkers.Converged(partitionItems(n), cfg.LivenessBound),
		checkers.Liveness(cfg.LivenessBound), checkers.NoNodesLeft()}
}

// Checkers: mutual-exclusion, converged, liveness, no-nodes-left.
func (w *Partitioner) Checkers(cfg CheckConfig) []checkers.Checker {
	return partitionCheckers(cfg, cfg.Clients)
}

// Run runs env.Clients members until ctx is done and the set is owned;
// see Partitioner.
func (w *Partitioner) Run(ctx context.Context, env *cluster.Env) error {
	var cs []*cluster.Client
	for i := range env.Clients {
		c, err := env.NewClient(fmt.Sprintf("c%d", i+1))
		if err != nil {
			return err
		}
		cs = append(cs, c)
	}
	roles := make([]memberRole, len(cs))
	if len(cs) >= 3 {
		roles[len(cs)-1].churn = true
	}
	return runPartitioners(ctx, env, cs, roles)
}

// memberRole is how one member of a partitioner workload behaves.
type memberRole struct {
	// churn: run for half a session timeout, stop, start again.
	churn bool
	// restart: after a loss (its Partition's Context done with a cause
	// other than a request to release), stop the stream (leaving the
	// group) before anything else, and run again once the Partition was
	// released: as kazoo's SetPartitioner is used, whose failure after a
	// session loss ends it.
	restart bool
	// stale (the mutant): after a loss, keep working on the items and
	// believing it holds them for two session timeouts.
	stale bool
}

// ownership counts, per item, the members that believe they hold it.
type ownership struct {
	mu    sync.Mutex
	count map[string]int
}

func (o *ownership) add(items []string, d int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, it := range items {
		o.count[it] += d
	}
}

// all reports whether every item is held by some member.
func (o *ownership) all(items []string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, it := range items {
		if o.count[it] <= 0 {
			return false
		}
	}
	return true
}

// runPartitioners makes <root>/part and a data node per item, runs a
// member per client with its role until ctx is done and then until every
// item is owned (at most two session timeouts more), stops them, records
// the nodes left under the path once they released, and closes their
// sessions.
func runPartitioners(ctx context.Context, env *cluster.Env, cs []*cluster.Client, roles []memberRole) error {
	items := partitionItems(len(cs))
	setup, err := env.ConnectSetup(ctx)
	if err != nil {
		return err
	}
	defer setup.Close()
	base := env.Root + "/part"
	acl := env.ACL()
	ops := []any{&zk.CreateRequest{Path: base, Acl: acl}, &zk.CreateRequest{Path: base + "/data", Acl: acl}}
	for _, it := range items {
		ops = append(ops, &zk.CreateRequest{Path: base + "/data/" + it, Data: []byte("0"), Acl: acl})
	}
	if _, err := setup.Multi(ops...); err != nil {
		return fmt.Errorf("chaos: partitioner setup: %w", err)
	}
	run, stopRun := context.WithCancel(context.WithoutCancel(ctx))
	defer stopRun()
	own := &ownership{count: map[string]int{}}
	var (
		stopped, closed sync.WaitGroup
		release         = make(chan struct{})
		mu              sync.Mutex
		errs            []error
	)
	for i, c := range cs {
		stopped.Add(1)
		closed.Add(1)
		go func() {
			defer closed.Done()
			once := sync.OnceFunc(stopped.Done)
			defer once()
			m := &partMember{env: env, c: c, role: roles[i], base: base, items: items, own: own}
			if err := m.run(ctx, run, func() { once(); <-release }); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}()
	}
	<-ctx.Done()
	deadline := time.Now().Add(2 * env.SessionTimeout)
	for !own.all(items) && time.Now().Before(deadline) {
		<-time.After(20 * time.Millisecond)
	}
	stopRun()
	stopped.Wait()
	recordQuiesced(env, setup, base)
	close(release)
	closed.Wait()
	return errors.Join(errs...)
}

// partMember is one member of a partitioner workload.
type partMember struct {
	env   *cluster.Env
	c     *cluster.Client
	role  memberRole
	base  string
	items []string
	own   *ownership
}

// run connects and runs the member's Partitioner (again after each churn
// or stream end) until run is done; churning stops once ctx is done. Then
// it calls quiesce and closes its session.
func (m *partMember) run(ctx, run context.Context, quiesce func()) error {
	s, err := connectRecipes(run, m.env, m.c)
	if s == nil {
		return err
	}
	defer closeRecipes(s, m.env.SessionTimeout)
	defer quiesce()
	st := m.env.SessionTimeout
	p, err := partition.New(s, m.base, m.items, partition.WithID(m.c.Name), partition.WithBoundary(st/10))
	if err != nil {
		return err
	}
	for run.Err() == nil {
		rctx, cancel := context.WithCancel(run)
		end := context.CancelFunc(func() {})
		churning := m.role.churn && ctx.Err() == nil
		if churning {
			rctx, end = context.WithTimeout(rctx, st/2)
		}
		stream := p.Run(rctx)
		for part := range stream.C {
			m.hold(run, part, cancel)
		}
		end()
		cancel()
		pause := 50 * time.Millisecond // the stream failed: try again
		if churning {
			pause = st / 10
		}
		cluster.Sleep(run, pause)
	}
	return nil
}

// hold records part as held, works on its items until its Context is done
// (or, stale, for two session timeouts after a loss), and releases it.
// Its end is recorded the instant its Context is done, by a goroutine that
// waits for it, as the lock workload records: work notices the end only
// between fenced writes, and a write in flight can take up to a session
// timeout to return, which would put the recorded end after another
// member's acquisition. The stale mutant's end is recorded when its belief
// ends. stop ends the stream.
func (m *partMember) hold(run context.Context, part *partition.Partition, stop context.CancelFunc) {
	log := m.c.Log
	held := part.Context()
	items := part.Items()
	if held.Err() != nil {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(run), m.env.SessionTimeout)
		_ = part.Release(rctx)
		cancel()
		return // lost before it was seen: never believed held
	}
	for _, it := range items {
		log.Acquired(it, part.Fence(it).Token, "")
	}
	m.own.add(items, 1)
	var once sync.Once
	end := func(asked bool, cause error) {
		once.Do(func() {
			for _, it := range items {
				if asked {
					log.Released(it, part.Fence(it).Token)
				} else {
					log.Lost(it, part.Fence(it).Token, fmt.Sprint(cause))
				}
			}
		})
	}
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		<-held.Done()
		cause := context.Cause(held)
		if asked := askedToRelease(cause); asked || !m.role.stale {
			end(asked, cause)
		}
	}()
	defer func() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(run), m.env.SessionTimeout)
		_ = part.Release(rctx) // cancels the Context first: the watcher ends
		cancel()
		<-watched
		m.own.add(items, -1)
	}()
	m.work(run, held, part)
	if held.Err() == nil {
		end(true, nil) // stopping (run done, the Partition still held): a release
		return
	}
	cause := context.Cause(held)
	if askedToRelease(cause) {
		return
	}
	if m.role.restart {
		stop() // leave now; run again once released
	}
	if m.role.stale && run.Err() == nil {
		// The mutant: it goes on as if nothing happened, for a while.
		belief, cancel := context.WithTimeout(run, 2*m.env.SessionTimeout)
		m.work(run, belief, part)
		cancel()
		end(true, nil)
	}
	end(false, cause) // the stale mutant stopping with run: lost
}

// askedToRelease reports whether a Partition ended with cause because its
// member was asked to give it up (partition.ErrRebalance,
// partition.ErrStopped, its own Release): a release, not a loss.
func askedToRelease(cause error) bool {
	return cause == nil || errors.Is(cause, partition.ErrRebalance) || errors.Is(cause, partition.ErrStopped) || errors.Is(cause, recipes.ErrReleased)
}

// work writes each item's data node every 100 ms, fenced by the item's
// lock, until held or run is done.
func (m *partMember) work(run, held context.Context, part *partition.Partition) {
	log := m.c.Log
	var n int64
	for held.Err() == nil && run.Err() == nil {
		for _, it := range part.Items() {
			n++
			set := &zk.SetDataRequest{Path: m.base + "/data/" + it, Data: []byte(fmt.Sprint(n)), Version: -1}
			wctx, cancel := context.WithTimeout(run, m.env.SessionTimeout)
			_, err := part.FencedMulti(wctx, it, set)
			cancel()
			switch {
			case err == nil:
				log.Fenced(it, part.Fence(it).Token, n, true, "")
			case errors.Is(err, recipes.ErrFenced):
				log.Fenced(it, part.Fence(it).Token, n, false, err.Error())
			}
		}
		select {
		case <-held.Done():
		case <-run.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
}
