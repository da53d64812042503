package workloads

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/chaos/checkers"
	"github.com/zkrecipes/zkrecipes/chaos/cluster"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// MembershipOnce is the membership mutant and its twin: the membership
// workload with the target (c1, the only client the faults reach) and
// bystander members (c2, ..., at least one) and observers (o1, o2).
//
// The twin's target joins with group.Join, whose persistent.Node creates
// the member node again on the new session after its session expired.
// With Mutant set, the target joins as go-zookeeper users do without the
// recipe: one plain ephemeral create of <group>/c1, and updates with a set
// of that node. When its session expires (partition-expire aimed at it),
// the node goes with the session and nothing creates it again: the target
// has a usable new session and is absent from every view, which the
// membership checker catches. Without a fault, or under one its session
// survives (cut-short), the node stays and the mutant is correct.
type MembershipOnce struct {
	Mutant bool
}

// Name is "membership-once-mutant", or "membership-once" for the twin.
func (w *MembershipOnce) Name() string { return mutantName("membership-once", w.Mutant) }

// QuickFaults names the faults that expose the membership once mutant.
func (w *MembershipOnce) QuickFaults() []string { return mutantFaults["membership-once"] }

// Checkers are the membership workload's.
func (w *MembershipOnce) Checkers(cfg CheckConfig) []checkers.Checker {
	return (&Membership{}).Checkers(cfg)
}

// Run runs the target, the bystanders and the observers until ctx is done.
// The bystanders' sessions are sampled as the runner samples the target's
// (cluster.SampleSessions over an Env of their own, which no fault reads).
func (w *MembershipOnce) Run(ctx context.Context, env *cluster.Env) error {
	target, err := env.NewClient("c1")
	if err != nil {
		return err
	}
	shadow := &cluster.Env{Ensemble: env.Ensemble, Rec: env.Rec, Root: env.Root, SessionTimeout: env.SessionTimeout, Clients: env.Clients, Logger: env.Logger}
	defer func() {
		for _, c := range shadow.ClientList() {
			_ = c.Link.Close()
		}
	}()
	members := []*cluster.Client{target}
	for i := 1; i < max(2, env.Clients); i++ {
		c, err := shadow.NewClient(fmt.Sprintf("c%d", i+1))
		if err != nil {
			return err
		}
		members = append(members, c)
	}
	var observers []*cluster.Client
	for i := range 2 {
		c, err := shadow.NewClient(fmt.Sprintf("o%d", i+1))
		if err != nil {
			return err
		}
		observers = append(observers, c)
	}
	var sampled sync.WaitGroup
	sampled.Add(1)
	go func() { defer sampled.Done(); cluster.SampleSessions(ctx, shadow) }()
	defer sampled.Wait()
	return runGroup(ctx, env, members, observers, func(i int) joinFunc {
		if i == 0 && w.Mutant {
			return joinOnce
		}
		return joinGroup
	}, 0)
}

// oneShot is the mutant's member: a plain ephemeral node created once.
type oneShot struct {
	s    *recipes.Session
	node string
}

// joinOnce creates <path>/<id> as an ephemeral node, once; a create whose
// answer was lost is resolved by reading the node's owner.
func joinOnce(ctx context.Context, s *recipes.Session, path, id string) (groupMember, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	node := path + "/" + id
	conn := s.Conn()
	if _, err := conn.Create(node, []byte(id), zk.FlagEphemeral, s.ACLFor(node)); err != nil {
		// The node exists, or the answer was lost: ours if our session owns it.
		if _, st, gerr := conn.Get(node); gerr != nil || st.EphemeralOwner != s.ID() {
			return nil, err
		}
	}
	return &oneShot{s: s, node: node}, nil
}

// Update sets the node's data (whatever its version): it fails with
// zk.ErrNoNode once the node went with an expired session.
func (m *oneShot) Update(ctx context.Context, data []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	_, err := m.s.Conn().Set(m.node, data, -1)
	return err
}

// Leave deletes the node if it is still ours.
func (m *oneShot) Leave(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	conn := m.s.Conn()
	_, st, err := conn.Get(m.node)
	switch {
	case errors.Is(err, zk.ErrNoNode):
		return nil
	case err != nil:
		return err
	case st.EphemeralOwner != m.s.ID():
		return nil
	}
	if err := conn.Delete(m.node, st.Version); err != nil && !errors.Is(err, zk.ErrNoNode) {
		return err
	}
	return nil
}
