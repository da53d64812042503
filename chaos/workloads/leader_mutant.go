package workloads

import (
	"context"
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/google/uuid"
	"github.com/zkrecipes/zkrecipes/chaos/checkers"
	"github.com/zkrecipes/zkrecipes/chaos/cluster"
	"github.com/zkrecipes/zkrecipes/leader"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// LeaderOwner is the leader owner mutant and its twin: participants that
// loop Campaign, fenced increments of a counter every 100 ms, Release. The
// target (c1) keeps each term for three session timeouts; the bystanders
// resign after two writes.
//
// The twin's participants are leader.Election: a term begins only once an
// explicit check found our node with our current session as its ephemeral
// owner, and ends the moment the holding may be lost (suspension, loss of
// the session, deletion of the node). With Mutant set, the target is a
// latch that trusts its node (CURATOR-696): it campaigns with one GUID for
// its whole life and, after an ambiguous create or a reconnect, adopts the
// node carrying that GUID whoever owns it; it leads until a watch on its
// node says the node was deleted, and takes "cannot tell" (a dropped watch,
// a connection error) for "still mine", never comparing the node's owner
// with its current session. Under partition-expire its session expires and
// a bystander leads while the target, cut off, still believes it leads
// until it reconnects and finds its node gone: single-leader catches the
// overlap. Without a fault its session never changes and the latch is
// correct.
type LeaderOwner struct {
	Mutant bool
}

// Name is "leader-owner-mutant", or "leader-owner" for the twin.
func (w *LeaderOwner) Name() string { return mutantName("leader-owner", w.Mutant) }

// Checkers: single-leader, fencing, liveness, no-nodes-left.
func (w *LeaderOwner) Checkers(cfg CheckConfig) []checkers.Checker {
	return []checkers.Checker{checkers.SingleLeader(), checkers.FencedWrites(), checkers.Liveness(cfg.LivenessBound), checkers.NoNodesLeft()}
}

// Run makes <root>/election and <root>/counter = 0 and runs the target and
// the bystanders until ctx is done.
func (w *LeaderOwner) Run(ctx context.Context, env *cluster.Env) error {
	election, counter := env.Root+"/election", env.Root+"/counter"
	return runAimed(ctx, env, election, counter, func(i int, c *cluster.Client, quiesce func()) error {
		hold := 10 * time.Millisecond
		if i == 0 {
			hold = 3 * env.SessionTimeout
		}
		return aimedHolder(ctx, env, c, election, counter, hold, quiesce, func(s *recipes.Session) func(context.Context) (*holding, error) {
			if i == 0 && w.Mutant {
				l := &trustingLatch{s: s, path: election, guid: uuid.NewString(), id: c.Name}
				return l.campaign
			}
			e, err := leader.New(s, election, leader.WithData([]byte(c.Name)))
			if err != nil {
				return func(context.Context) (*holding, error) { return nil, err }
			}
			return func(ctx context.Context) (*holding, error) {
				t, err := e.Campaign(ctx)
				if err != nil {
					return nil, err
				}
				return &holding{held: t.Context(), fence: t.Fence(), multi: t.FencedMulti, release: t.Release}, nil
			}
		})
	})
}

// trustingLatch is the mutant leader latch, in Curator's dialect
// ("_c_<guid>-latch-<seq>", ordered by the sequence): it trusts its node.
type trustingLatch struct {
	s        *recipes.Session
	path     string
	guid, id string
}

// campaign adopts or creates our node, waits until it is first, and
// returns the term.
func (l *trustingLatch) campaign(ctx context.Context) (*holding, error) {
	conn := l.s.Conn()
	prefix := "_c_" + l.guid + "-latch-"
	kids, _, err := conn.Children(l.path)
	if err != nil {
		return nil, fmt.Errorf("chaos: trusting latch: %w", err)
	}
	node := ""
	for _, k := range kids {
		if strings.HasPrefix(k, prefix) {
			node = k // the mutant: ours by its GUID, whoever owns it
		}
	}
	if node == "" {
		p, err := conn.Create(l.path+"/"+prefix, []byte(l.id), zk.FlagEphemeral|zk.FlagSequence, l.s.ACLFor(l.path+"/"+prefix))
		if err != nil {
			return nil, fmt.Errorf("chaos: trusting latch: %w", err) // the next campaign adopts it if it was created
		}
		node = path.Base(p)
	}
	full := l.path + "/" + node
	for {
		kids, _, err := conn.Children(l.path)
		if err != nil {
			return nil, fmt.Errorf("chaos: trusting latch: %w", err)
		}
		sort.Slice(kids, func(i, j int) bool {
			a, b := seqSuffix(kids[i]), seqSuffix(kids[j])
			return a < b || a == b && kids[i] < kids[j]
		})
		i := sortIndex(kids, node)
		if i < 0 {
			return nil, errors.New("chaos: trusting latch: own node gone")
		}
		if i == 0 {
			break
		}
		_, _, ch, err := conn.GetW(l.path + "/" + kids[i-1])
		switch {
		case errors.Is(err, zk.ErrNoNode):
			continue
		case err != nil:
			_ = conn.Delete(full, -1)
			return nil, fmt.Errorf("chaos: trusting latch: %w", err)
		}
		select {
		case <-ctx.Done():
			_ = conn.Delete(full, -1)
			return nil, ctx.Err()
		case <-ch:
		}
	}
	_, st, ch, err := conn.GetW(full)
	if err != nil {
		return nil, fmt.Errorf("chaos: trusting latch: %w", err)
	}
	held, drop := context.WithCancelCause(context.Background())
	go l.watch(held, drop, full, ch)
	return &holding{
		held:  held,
		fence: recipes.Fence{Token: st.Czxid, Path: full, SessionID: st.EphemeralOwner, Version: st.Version},
		multi: func(ctx context.Context, ops ...any) ([]zk.MultiResponse, error) {
			return recipes.FencedMulti(ctx, l.s, recipes.Fence{Token: st.Czxid, Path: full, SessionID: st.EphemeralOwner, Version: st.Version}, ops...)
		},
		release: func(context.Context) error {
			drop(recipes.ErrReleased)
			return conn.Delete(full, -1)
		},
	}, nil
}

// watch ends the term when the node is seen deleted; a dropped watch or a
// connection error is taken for "still ours" and the watch is set again.
func (l *trustingLatch) watch(held context.Context, drop context.CancelCauseFunc, full string, ch <-chan zk.Event) {
	for {
		select {
		case <-held.Done():
			return
		case ev := <-ch:
			if ev.Type == zk.EventNodeDeleted {
				drop(fmt.Errorf("%w: %s", recipes.ErrNodeDeleted, full))
				return
			}
		}
		for {
			var err error
			_, _, ch, err = l.s.Conn().GetW(full)
			if errors.Is(err, zk.ErrNoNode) {
				drop(fmt.Errorf("%w: %s", recipes.ErrNodeDeleted, full))
				return
			}
			if err == nil {
				break
			}
			if errors.Is(err, zk.ErrClosing) || !cluster.Sleep(held, 50*time.Millisecond) {
				drop(err)
				return
			}
		}
	}
}
