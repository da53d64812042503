package workloads

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zkrecipes/zkrecipes/chaos/checkers"
	"github.com/zkrecipes/zkrecipes/chaos/cluster"
	"github.com/zkrecipes/zkrecipes/chaos/history"
	"github.com/zkrecipes/zkrecipes/group"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// Membership is the workload of package group: env.Clients members (c1,
// c2, ...) each Join the group <root>/group with their own name as id and
// Update their payload every Pace; two observers (o1, o2) follow the group,
// each with a group.Watch (every Snapshot that lists a different set of
// nodes is recorded as a view, history.ViewWatch) and a Members call every
// Pace (an operation, its list recorded as a view, history.ViewMembers). A
// view names each member with its node's owner session. Every client
// records each new session id it gets (a session event "new": the runner's
// own sampling can miss one, when it samples while go-zookeeper has no
// session id between the expiry and the new session), and the runner
// records when its session is usable. Once ctx is done the observers stop
// first (a ViewClosed event each), then the members Leave; with their
// sessions still open the workload records the nodes left in the group,
// then closes every session.
//
// Checked by: membership (every observer lists every member with a usable
// session, and stops listing a session that expired or left, each within
// half the liveness bound of quiet time), liveness after every heal (a
// member's Update, an observer's Members call), and no nodes left once the
// members left and after every session closed.
//
// MembershipOnce runs it as a mutant and twin.
type Membership struct {
	// Pace is the pause between a member's updates and between an
	// observer's Members calls. Default 100 ms.
	Pace time.Duration
}

// Name is "membership".
func (w *Membership) Name() string { return "membership" }

// QuickFaults names the membership workload's quick-tier faults.
func (w *Membership) QuickFaults() []string { return quickFaults[w.Name()] }

// Checkers: membership, liveness, no-nodes-left. The membership bound is
// half the liveness bound (by default a session timeout + 2.5 s): ample for
// the few round trips a listing needs once both sessions are usable (see
// checkers.Membership), and short enough that a stretch starting when a
// member gets its session back after the last heal ends inside the
// history: the runner goes on for a whole liveness bound after its last
// heal while a client makes no progress, as a member that lost its node
// does not.
func (w *Membership) Checkers(cfg CheckConfig) []checkers.Checker {
	return []checkers.Checker{checkers.Membership(cfg.LivenessBound / 2), checkers.Liveness(cfg.LivenessBound), checkers.NoNodesLeft()}
}

// Run runs env.Clients members and two observers until ctx is done.
func (w *Membership) Run(ctx context.Context, env *cluster.Env) error {
	var members, observers []*cluster.Client
	for i := range env.Clients {
		c, err := env.NewClient(fmt.Sprintf("c%d", i+1))
		if err != nil {
			return err
		}
		members = append(members, c)
	}
	for i := range 2 {
		c, err := env.NewClient(fmt.Sprintf("o%d", i+1))
		if err != nil {
			return err
		}
		observers = append(observers, c)
	}
	return runGroup(ctx, env, members, observers, func(int) joinFunc { return joinGroup }, w.Pace)
}

// groupMember is a member as the workload drives it: group.Member, or the
// mutant's one-shot node.
type groupMember interface {
	Update(ctx context.Context, data []byte) error
	Leave(ctx context.Context) error
}

// joinFunc joins the group at path as id on s.
type joinFunc func(ctx context.Context, s *recipes.Session, path, id string) (groupMember, error)

// joinGroup is group.Join.
func joinGroup(ctx context.Context, s *recipes.Session, path, id string) (groupMember, error) {
	m, err := group.Join(ctx, s, path, id)
	if err != nil {
		return nil, err
	}
	return m, nil
}

// runGroup makes the group <root>/group and runs members (member i joins
// with joinOf(i)) and observers until ctx is done; then it stops the
// observers, lets the members leave, records the nodes left in the group
// and closes every session.
func runGroup(ctx context.Context, env *cluster.Env, members, observers []*cluster.Client, joinOf func(i int) joinFunc, pace time.Duration) error {
	if pace == 0 {
		pace = 100 * time.Millisecond
	}
	setup, err := env.ConnectSetup(ctx)
	if err != nil {
		return err
	}
	defer setup.Close()
	path := env.Root + "/group"
	if _, err := setup.Create(path, nil, 0, env.ACL()); err != nil {
		return fmt.Errorf("chaos: membership setup: %w", err)
	}
	var (
		watching, leaving, closed sync.WaitGroup
		release                   = make(chan struct{})
		watched                   = make(chan struct{}) // every observer stopped
		mu                        sync.Mutex
		errs                      []error
	)
	fail := func(err error) {
		if err != nil {
			mu.Lock()
			errs = append(errs, err)
			mu.Unlock()
		}
	}
	for _, c := range observers {
		watching.Add(1)
		closed.Add(1)
		go func() {
			defer closed.Done()
			fail(groupObserver(ctx, env, c, path, pace, watching.Done))
		}()
	}
	for i, c := range members {
		leaving.Add(1)
		closed.Add(1)
		go func() {
			defer closed.Done()
			fail(groupMemberClient(ctx, env, c, path, joinOf(i), pace, watched, leaving.Done, release))
		}()
	}
	watching.Wait()
	close(watched)
	leaving.Wait()
	recordQuiesced(env, setup, path)
	close(release)
	closed.Wait()
	return errors.Join(errs...)
}

// recordNewSessions records a session event "new" (Value = the id) each
// time s gets a session id other than the last one; stop ends it.
func recordNewSessions(s *recipes.Session, c *cluster.Client) (stop func()) {
	var last atomic.Int64
	_, id, stop := s.OnStateChange(func(sc recipes.StateChange) {
		if sc.State != recipes.StateConnected || sc.SessionID == 0 || last.Swap(sc.SessionID) == sc.SessionID {
			return
		}
		c.Log.Event(history.Event{Kind: history.KindSession, Value: sc.SessionID, Detail: "new"})
	})
	last.CompareAndSwap(0, id)
	return stop
}

// groupMemberClient joins (until it has joined or ctx is done), updates
// its payload every pace until ctx is done, waits for the observers to
// stop (watched), leaves, calls left, and closes its session once release
// is closed.
func groupMemberClient(ctx context.Context, env *cluster.Env, c *cluster.Client, path string, join joinFunc, pace time.Duration,
	watched <-chan struct{}, left func(), release <-chan struct{}) error {
	once := sync.OnceFunc(left)
	defer once()
	s, err := connectRecipes(ctx, env, c)
	if s == nil {
		return err
	}
	defer closeRecipes(s, env.SessionTimeout)
	defer recordNewSessions(s, c)()
	st := env.SessionTimeout
	var m groupMember
	for m == nil && ctx.Err() == nil {
		op := c.Log.Invoke(history.FnJoin, c.Name, 0)
		jctx, cancel := context.WithTimeout(ctx, st)
		got, err := join(jctx, s, path, c.Name)
		cancel()
		if err != nil {
			op.Fail(err.Error()) // Join leaves nothing behind when it fails
			cluster.Sleep(ctx, pace)
			continue
		}
		op.OK(s.ID())
		m = got
	}
	for n := int64(1); m != nil && ctx.Err() == nil; n++ {
		op := c.Log.Invoke(history.FnUpdate, c.Name, n)
		uctx, cancel := context.WithTimeout(ctx, st)
		err := m.Update(uctx, []byte(fmt.Sprintf("%s#%d", c.Name, n)))
		cancel()
		switch {
		case err == nil:
			op.OK(n)
		case errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled):
			op.Unknown(err.Error()) // the payload is written once the node is back
		default:
			op.Fail(err.Error())
		}
		cluster.Sleep(ctx, pace)
	}
	<-watched
	if m != nil {
		op := c.Log.Invoke(history.FnLeave, c.Name, 0)
		lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), st)
		if err := m.Leave(lctx); err != nil {
			op.Unknown(err.Error())
		} else {
			op.OK(0)
		}
		cancel()
	}
	once()
	<-release
	return nil
}

// groupObserver follows the group with a Watch (recording each Snapshot
// that lists a different set of nodes) and a Members call every pace,
// until ctx is done; then it records the Watch's end, calls stopped and
// closes its session.
func groupObserver(ctx context.Context, env *cluster.Env, c *cluster.Client, path string, pace time.Duration, stopped func()) error {
	once := sync.OnceFunc(stopped)
	defer once()
	s, err := connectRecipes(ctx, env, c)
	if s == nil {
		return err
	}
	defer closeRecipes(s, env.SessionTimeout)
	defer recordNewSessions(s, c)()
	w := group.Watch(ctx, s, path)
	done := make(chan struct{})
	go func() {
		defer close(done)
		last := "-"
		for snap := range w.C {
			if d := viewOf(snap); d != last {
				last = d
				c.Log.Event(history.Event{Kind: history.KindView, Key: path, Mode: history.ViewWatch, Value: int64(len(snap)), Detail: d})
			}
		}
		c.Log.Event(history.Event{Kind: history.KindView, Key: path, Mode: history.ViewClosed, Detail: fmt.Sprint(w.Err())})
	}()
	for ctx.Err() == nil {
		id := env.Rec.NewOpID()
		c.Log.Event(history.Event{Kind: history.KindInvoke, Op: id, Fn: history.FnMembers, Key: path})
		mctx, cancel := context.WithTimeout(ctx, env.SessionTimeout)
		snap, err := group.Members(mctx, s, path)
		cancel()
		if err != nil {
			c.Log.Event(history.Event{Kind: history.KindFail, Op: id, Fn: history.FnMembers, Key: path, Detail: err.Error()})
		} else {
			c.Log.Event(history.Event{Kind: history.KindView, Op: id, Key: path, Mode: history.ViewMembers, Value: int64(len(snap)), Detail: viewOf(snap)})
			c.Log.Event(history.Event{Kind: history.KindOK, Op: id, Fn: history.FnMembers, Key: path, Value: int64(len(snap))})
		}
		cluster.Sleep(ctx, pace)
	}
	w.Stop()
	<-done
	once()
	return nil
}

// viewOf renders snap as a view's Detail.
func viewOf(snap group.Snapshot) string {
	es := make([]history.ViewEntry, len(snap))
	for i, m := range snap {
		es[i] = history.ViewEntry{ID: m.ID, Session: m.SessionID}
	}
	return history.FormatView(es)
}
