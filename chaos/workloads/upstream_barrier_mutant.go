package workloads

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/barrier"
	"github.com/zkrecipes/zkrecipes/chaos/checkers"
	"github.com/zkrecipes/zkrecipes/chaos/cluster"
	"github.com/zkrecipes/zkrecipes/chaos/history"
	"github.com/zkrecipes/zkrecipes/internal/zkpath"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// BarrierWake is the Curator GH-1290 variant and its twin: the barrier
// workload (rounds of Enter, a moment of work, Leave, each round on a fresh
// path) with a target (c1) that the fault reaches and bystanders that it
// does not. The bystanders pause half a session timeout before each
// round's Enter, so the target, which does not pause, spends most of the
// scenario waiting in Enter for them.
//
// With Mutant set, the target's member is wakeBarrier: our Enter with the
// one re-check removed. Curator's internalEnter (since 4.1.0) waited once
// and returned true whatever woke it, and its watcher is woken by any
// event: the ready node's, and the connection's state changes, which
// ZooKeeper's Java client delivers to every watcher. Under cut-short the
// target's connection drops while it waits, the suspension wakes it, and
// it passes Enter before the bystanders arrived: double-barrier catches it
// (an Enter that returned before n members invoked Enter). Without a
// session event (no fault, or latency-low) only the ready node's creation
// wakes it, and it behaves as ours. The twin's member is
// barrier.DoubleBarrier, whose Enter looks again after any event but the
// ready node's creation.
type BarrierWake struct {
	Mutant bool
}

// Name is "barrier-wake-mutant", or "barrier-wake" for the twin.
func (w *BarrierWake) Name() string { return mutantName("barrier-wake", w.Mutant) }

// QuickFaults names the faults that expose the barrier-wake mutant.
func (w *BarrierWake) QuickFaults() []string { return mutantFaults["barrier-wake"] }

// PacedOn: the target waits in Enter for the pausing bystanders; its
// faults are aimed at that wait.
func (w *BarrierWake) PacedOn() (string, history.Fn) { return "c1", history.FnEnter }

// members is the barrier's size: the clients of mutantClients(env, 3, 1).
func (w *BarrierWake) members(clients int) int { return max(3, clients) }

// Checkers: double-barrier, liveness, no-nodes-left (the barrier
// workload's).
func (w *BarrierWake) Checkers(cfg CheckConfig) []checkers.Checker {
	cfg.Clients = w.members(cfg.Clients)
	return (&Barrier{}).Checkers(cfg)
}

// Run runs the target and the bystanders as members of one double barrier
// per round until ctx is done, then audits the finished rounds.
func (w *BarrierWake) Run(ctx context.Context, env *cluster.Env) error {
	cs, closeLinks, err := mutantClients(env, 3, 1)
	if err != nil {
		return err
	}
	defer closeLinks()
	return (&Barrier{}).run(ctx, env, cs, len(cs), func(i int) barrierRole {
		switch {
		case i > 0:
			return barrierRole{newMember: newDouble, pause: env.SessionTimeout / 2}
		case w.Mutant:
			return barrierRole{newMember: newWakeBarrier}
		}
		return barrierRole{newMember: newDouble}
	})
}

// wakeBarrier is a double-barrier member on Curator's wire format whose
// Enter returns after any wake-up. It is barrier.DoubleBarrier's Enter and
// Leave, copied, with one step removed (see Enter); the argument checks of
// barrier.NewDouble are left out.
type wakeBarrier struct {
	s     *recipes.Session
	path  string
	n     int
	ready string
	name  string // our member node, "" when none
	sid   int64  // the session that owns it
}

func newWakeBarrier(s *recipes.Session, p string, n int) (barrierMember, error) {
	return &wakeBarrier{s: s, path: p, n: n, ready: zkpath.Join(p, barrier.ReadyNode)}, nil
}

// Enter is barrier.DoubleBarrier.Enter but for its wait: the watch on
// "ready" is also woken by every state change of the session (as a Java
// watcher is by the connection's events), and whatever wakes it, Enter
// returns as entered. Ours, woken by anything but the creation of
// "ready", arms the watch again and lists the members again.
func (d *wakeBarrier) Enter(ctx context.Context) error {
	d.name, d.sid = "", 0
	woken := make(chan struct{}, 1)
	_, _, stop := d.s.OnStateChange(func(recipes.StateChange) {
		select {
		case woken <- struct{}{}:
		default:
		}
	})
	defer stop()
	var ready bool
	var readyCh <-chan zk.Event
	err := recipes.Exec(ctx, d.s, func(conn *zk.Conn, _ int64) (err error) {
		ready, _, readyCh, err = conn.ExistsW(d.ready)
		return err
	})
	if err != nil {
		return fmt.Errorf("chaos: naive barrier %s: enter: %w", d.path, err)
	}
	name, sid, err := d.createMember(ctx)
	if err != nil {
		return err
	}
	d.name, d.sid = name, sid
	fail := func(err error) error {
		if d.s.ID() == sid {
			d.s.DeleteGuaranteed(zkpath.Join(d.path, name), sid)
		}
		d.name, d.sid = "", 0
		return err
	}
	if ready {
		return nil
	}
	children, err := recipes.Do(ctx, d.s, func(conn *zk.Conn, id int64) ([]string, error) {
		if id != sid {
			return nil, d.replaced(sid, id)
		}
		children, _, err := conn.Children(d.path)
		return children, err
	})
	if err != nil {
		return fail(fmt.Errorf("chaos: naive barrier %s: enter: %w", d.path, err))
	}
	members := barrier.Members(recipes.Curator, children)
	switch {
	case !slices.Contains(members, name):
		return fail(fmt.Errorf("%w (%w): %s: our node %s is gone", barrier.ErrMemberLost, recipes.ErrSessionLost, d.path, name))
	case slices.Contains(children, barrier.ReadyNode):
		return nil
	case len(members) >= d.n:
		if err := d.createReady(ctx); err != nil {
			return fail(err)
		}
		return nil
	}
	select {
	case <-readyCh:
	case <-woken:
	case <-ctx.Done():
		return fail(fmt.Errorf("chaos: naive barrier %s: enter: %w", d.path, recipes.ContextError(ctx)))
	}
	// The mutant: whatever woke us, we are through, without looking
	// whether "ready" exists (Curator's do { ... } while (false)).
	return nil
}

// replaced is the barrier.ErrMemberLost of a member whose session sid was
// replaced by session id.
func (d *wakeBarrier) replaced(sid, id int64) error {
	return fmt.Errorf("%w (%w): %s: session 0x%x replaced by 0x%x", barrier.ErrMemberLost, recipes.ErrSessionLost, d.path, sid, id)
}

// createMember creates our ephemeral member node (the barrier's path as
// containers when missing); a create whose outcome is unknown is resolved
// by the node's owner. Cost: 1 create (+1 exists).
func (d *wakeBarrier) createMember(ctx context.Context) (string, int64, error) {
	name := recipes.Curator.NewGUID()
	p := zkpath.Join(d.path, name)
	for {
		var sid int64
		err := recipes.Exec(ctx, d.s, func(conn *zk.Conn, id int64) error {
			sid = id
			_, err := conn.Create(p, nil, zk.FlagEphemeral, d.s.ACLFor(p))
			return err
		})
		switch {
		case err == nil && d.s.ID() == sid:
			return name, sid, nil
		case errors.Is(err, zk.ErrNoNode):
			if err := d.s.EnsureParents(d.path); err != nil && !recipes.IsConnErr(err) {
				return "", 0, fmt.Errorf("chaos: naive barrier: create %s: %w", d.path, err)
			}
			continue
		case err != nil && !errors.Is(err, zk.ErrNodeExists):
			d.s.DeleteGuaranteed(p, 0)
			return "", 0, fmt.Errorf("chaos: naive barrier %s: enter: %w", d.path, err)
		}
		var ok bool
		var st *zk.Stat
		err = recipes.Exec(ctx, d.s, func(conn *zk.Conn, id int64) (err error) {
			sid = id
			ok, st, err = conn.Exists(p)
			return err
		})
		switch {
		case err != nil:
			d.s.DeleteGuaranteed(p, 0)
			return "", 0, fmt.Errorf("chaos: naive barrier %s: enter: %w", d.path, err)
		case ok && st.EphemeralOwner == sid:
			return name, sid, nil
		case ok:
			_ = d.s.Conn().Delete(p, -1)
		}
	}
}

// createReady creates "ready" (no error if it exists). Cost: 1 create.
func (d *wakeBarrier) createReady(ctx context.Context) error {
	err := recipes.Exec(ctx, d.s, func(conn *zk.Conn, _ int64) error {
		_, err := conn.Create(d.ready, nil, 0, d.s.ACLFor(d.ready))
		return err
	})
	if err != nil && !errors.Is(err, zk.ErrNodeExists) {
		return fmt.Errorf("chaos: naive barrier: create %s: %w", d.ready, err)
	}
	return nil
}

// Leave is barrier.DoubleBarrier.Leave: ZooKeeper's algorithm (the lowest
// member waits for the highest to go until it is alone, every other one
// deletes itself and waits for the lowest), then the round's "ready" is
// deleted if it was there when no member was left (its czxid at most that
// listing's pzxid).
func (d *wakeBarrier) Leave(ctx context.Context) error {
	if d.name == "" {
		return fmt.Errorf("%w: %s", barrier.ErrNotEntered, d.path)
	}
	name, sid := d.name, d.sid
	defer func() { d.name, d.sid = "", 0 }()
	ours := true
	var children []string
	var pzxid int64
	for {
		var err error
		var st *zk.Stat
		children, err = recipes.Do(ctx, d.s, func(conn *zk.Conn, id int64) ([]string, error) {
			if ours && id != sid {
				return nil, d.replaced(sid, id)
			}
			kids, s, err := conn.Children(d.path)
			if errors.Is(err, zk.ErrNoNode) {
				return nil, nil
			}
			st = s
			return kids, err
		})
		if err != nil {
			return fmt.Errorf("chaos: naive barrier %s: leave: %w", d.path, err)
		}
		if st != nil {
			pzxid = st.Pzxid
		}
		members := barrier.Members(recipes.Curator, children)
		if len(members) == 0 {
			break
		}
		i := slices.Index(members, name)
		if i < 0 && ours {
			return fmt.Errorf("%w (%w): %s: our node %s is gone", barrier.ErrMemberLost, recipes.ErrSessionLost, d.path, name)
		}
		if len(members) == 1 && i == 0 {
			d.deleteOurs(name, sid)
			ours = false
			break
		}
		watch := members[0]
		if i == 0 {
			watch = members[len(members)-1]
		}
		var exists bool
		var ch <-chan zk.Event
		err = recipes.Exec(ctx, d.s, func(conn *zk.Conn, id int64) (err error) {
			if ours && id != sid {
				return d.replaced(sid, id)
			}
			exists, _, ch, err = conn.ExistsW(zkpath.Join(d.path, watch))
			return err
		})
		if err != nil {
			return fmt.Errorf("chaos: naive barrier %s: leave: %w", d.path, err)
		}
		if i > 0 && ours {
			d.deleteOurs(name, sid)
			ours = false
		}
		if exists {
			select {
			case <-ch:
			case <-ctx.Done():
				return fmt.Errorf("chaos: naive barrier %s: leave: %w", d.path, recipes.ContextError(ctx))
			}
		}
	}
	return d.deleteReady(ctx, children, pzxid)
}

// deleteOurs deletes our member node, in the background when the outcome
// is unknown. Cost: 1 delete.
func (d *wakeBarrier) deleteOurs(name string, sid int64) {
	p := zkpath.Join(d.path, name)
	if err := d.s.Conn().Delete(p, -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
		d.s.DeleteGuaranteed(p, sid)
	}
}

// deleteReady deletes the round's "ready" when last (the listing that
// showed no member, of pzxid) holds it, and only a node no younger than
// that listing. Cost: 1 exists + 1 delete, nothing when last has no ready.
func (d *wakeBarrier) deleteReady(ctx context.Context, last []string, pzxid int64) error {
	if !slices.Contains(last, barrier.ReadyNode) {
		return nil
	}
	for {
		if _, err := d.s.WaitUsable(ctx); err != nil {
			return fmt.Errorf("chaos: naive barrier %s: leave: %w", d.path, err)
		}
		ok, st, err := d.s.Conn().Exists(d.ready)
		if err == nil {
			if !ok || st.Czxid > pzxid {
				return nil
			}
			err = d.s.Conn().Delete(d.ready, st.Version)
			switch {
			case err == nil, errors.Is(err, zk.ErrNoNode):
				return nil
			case errors.Is(err, zk.ErrBadVersion):
				continue
			}
		}
		if !recipes.IsConnErr(err) {
			return fmt.Errorf("chaos: naive barrier %s: leave: %w", d.path, err)
		}
		if err := d.s.Pause(ctx); err != nil {
			return fmt.Errorf("chaos: naive barrier %s: leave: %w", d.path, err)
		}
	}
}
