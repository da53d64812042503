package lock

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync/atomic"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/internal/zkpath"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// Permit is one acquired permit, a recipes.Held. It is safe for concurrent
// use.
type Permit struct {
	sem      *Semaphore
	h        *recipes.Holding
	released atomic.Bool
}

var _ recipes.Held = (*Permit)(nil)

// Release returns the permit: Context() is cancelled, then the permit node is
// deleted, which wakes at most the one acquirer waiting for a permit. Cost:
// 1 delete (retried in the background if ambiguous).
//
// It returns nil when it released a live permit; otherwise, as every
// Release does (see recipes.Held), an error that errors.Is
// recipes.ErrReleased: ErrNotHeld for a permit released before (nothing is
// sent); after the permit was lost (Context() done), an error that also
// wraps the loss's cause, the permit being given up all the same (the
// delete is sent only while its node may still be there).
func (l *Permit) Release(ctx context.Context) error {
	if l == nil {
		return ErrNilReceiver
	}
	if ctx == nil {
		return recipes.ErrNilContext
	}
	if l.released.Swap(true) {
		return ErrNotHeld
	}
	if err := l.h.Release(ctx); err != nil {
		return fmt.Errorf("lock: release lease: %w", err)
	}
	return nil
}

// Context returns the permit's lifetime context, cancelled with a cause that
// errors.Is a recipes sentinel the moment the permit may be lost (see
// recipes.Held). The first call arms a data watch on the permit node (1
// getData, in the background) unless one is set. On a nil Permit it returns
// a context already cancelled with ErrNotHeld.
func (l *Permit) Context() context.Context {
	if l == nil {
		ctx, cancel := context.WithCancelCause(context.Background())
		cancel(ErrNotHeld)
		return ctx
	}
	return l.h.Context()
}

// Revoked is closed when someone revoked this permit (WithRevocation).
func (l *Permit) Revoked() <-chan struct{} {
	if l == nil {
		return nil
	}
	return l.h.Revoked()
}

// Fence returns the permit's fencing token.
func (l *Permit) Fence() recipes.Fence {
	if l == nil {
		return recipes.Fence{}
	}
	return l.h.Fence()
}

// Node returns the full path of the permit node.
func (l *Permit) Node() string {
	if l == nil {
		return ""
	}
	return l.h.Path()
}

// FencedMulti runs ops in one multi together with a version check of the
// permit node, so ZooKeeper rejects them (error wrapping recipes.ErrFenced)
// once the permit is gone. Cost: 1 multi.
func (l *Permit) FencedMulti(ctx context.Context, ops ...any) ([]zk.MultiResponse, error) {
	if l == nil {
		return nil, ErrNilReceiver
	}
	if ctx == nil {
		return nil, recipes.ErrNilContext
	}
	res, err := recipes.FencedMulti(ctx, l.sem.s, l.h.Fence(), ops...)
	if err != nil {
		return res, fmt.Errorf("lock: %w", err)
	}
	return res, nil
}

// Permits are permits acquired together (AcquireN, TryAcquireN). Each is a
// Permit of its own, to release one by one if need be; Release gives back
// every one.
type Permits []*Permit

// Release releases every permit, the last first (cost: 1 delete each). It
// returns nil when each was a live permit it released; otherwise the
// errors of those that were not (each errors.Is recipes.ErrReleased, as
// Permit.Release answers), joined.
func (ls Permits) Release(ctx context.Context) error {
	var errs []error
	for i := len(ls) - 1; i >= 0; i-- {
		if err := ls[i].Release(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Participants lists the permits (every child of "<path>/leases", each
// counting as a permit, as in Curator) with their data, which is each
// holder's identity (WithData; Curator's setNodeData), and their owner's
// session. Permit nodes in Curator's names come first, in creation order,
// then any other child by name. They are the permits held and, if an
// acquirer is waiting for permits, its own (the newest). Cost: 1
// getChildren + 1 getData per permit; permits released meanwhile are left
// out. Curator's getParticipantNodes returns the same names, without data.
func (sem *Semaphore) Participants(ctx context.Context) ([]Participant, error) {
	if sem == nil {
		return nil, ErrNilReceiver
	}
	leases := sem.leasesPath()
	children, err := recipes.Do(ctx, sem.s, func(conn *zk.Conn, _ int64) ([]string, error) {
		c, _, err := conn.Children(leases)
		return c, err
	})
	switch {
	case errors.Is(err, zk.ErrNoNode):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("lock: participants %s: %w", leases, err)
	}
	out := make([]Participant, 0, len(children))
	for _, name := range PermitOrder(children) {
		p := zkpath.Join(leases, name)
		r, err := recipes.Do(ctx, sem.s, func(conn *zk.Conn, _ int64) (countRead, error) {
			data, st, err := conn.Get(p)
			return countRead{data, st}, err
		})
		switch {
		case errors.Is(err, zk.ErrNoNode):
			continue
		case err != nil:
			return nil, fmt.Errorf("lock: participants %s: %w", leases, err)
		}
		out = append(out, Participant{Node: p, Data: r.data, SessionID: r.stat.EphemeralOwner})
	}
	return out, nil
}

// PermitOrder returns the names of a semaphore's permit nodes (the children
// of its permits node) in the order the semaphore counts them: Curator's
// names ("_c_<uuid36>-lease-<seq>") first, by sequence (serial
// arithmetic, as contenders are ordered), then the others by name (every
// child counts as a permit, as in Curator). The inspection command shows
// permits in this order. Pure.
func PermitOrder(children []string) []string {
	var cs []recipes.Contender
	var others []string
	for _, c := range children {
		if ct, ok := recipes.Curator.Parse(c, recipes.RoleLease); ok {
			cs = append(cs, ct)
		} else {
			others = append(others, c)
		}
	}
	if len(cs) > 0 {
		recipes.SortBySeq(cs, cs[0].Seq)
	}
	sort.Strings(others)
	out := make([]string, 0, len(children))
	for _, c := range cs {
		out = append(out, c.Name)
	}
	return slices.Concat(out, others)
}
