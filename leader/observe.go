package leader

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/internal/latest"
	"github.com/zkrecipes/zkrecipes/internal/zkpath"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// Participant is one participant of an election as ZooKeeper sees it: its
// node, in line order. The first one leads. The zero Participant (Node "")
// stands for "nobody leads" in Watch.
type Participant struct {
	ID        string // the node's data: the participant id (WithData)
	Node      string // full path of its node
	SessionID int64  // the node's ephemeral owner
	// Token is the node's czxid: the fencing token of its term when it
	// leads. Successive leaders have strictly growing tokens.
	Token int64
}

// IsZero reports whether p is the zero Participant (nobody).
func (p Participant) IsZero() bool { return p.Node == "" }

func (e *Election) roles() []recipes.Role { return e.cfg.dialect.Blocking(e.role) }

// read returns the participant at node name, or ok=false when the node is
// gone. Cost: 1 getData. It sets no watch.
func (e *Election) read(name string) (p Participant, ok bool, err error) {
	path := zkpath.Join(e.path, name)
	data, st, err := e.s.Conn().Get(path)
	if errors.Is(err, zk.ErrNoNode) {
		return Participant{}, false, nil
	}
	if err != nil {
		return Participant{}, false, recipes.Answer(err)
	}
	return participant(path, data, st), true, nil
}

// readWatch is read with a data watch: the Session's one watch on the node
// (recipes.Session.WatchData), so an Watch that ends leaves no watcher
// behind beyond that one. Cost: 1 getData, or none when the Session already
// watches the node. w is nil when the node is gone.
func (e *Election) readWatch(ctx context.Context, name string) (p Participant, w *recipes.Watch, err error) {
	path := zkpath.Join(e.path, name)
	data, st, w, err := e.s.WatchData(ctx, path)
	if errors.Is(err, zk.ErrNoNode) {
		return Participant{}, nil, nil
	}
	if err != nil {
		return Participant{}, nil, err
	}
	return participant(path, data, st), w, nil
}

func participant(path string, data []byte, st *zk.Stat) Participant {
	return Participant{ID: string(data), Node: path, SessionID: st.EphemeralOwner, Token: st.Czxid}
}

// Leader returns the participant first in line, the one that leads or is
// about to (a leader that just lost its term is first until its node is
// deleted). It returns ErrNoLeader when nobody campaigns. Cost: 1
// getChildren + 1 getData (again if the head left in between). It sets no
// watch.
func (e *Election) Leader(ctx context.Context) (Participant, error) {
	if err := e.usable(ctx); err != nil {
		return Participant{}, err
	}
	for {
		cs, err := recipes.Contenders(ctx, e.s, e.cfg.dialect, e.path, e.roles()...)
		if err != nil {
			return Participant{}, fmt.Errorf("leader: leader of %s: %w", e.path, err)
		}
		if len(cs) == 0 {
			return Participant{}, fmt.Errorf("%w: %s", ErrNoLeader, e.path)
		}
		if err := recipes.ContextError(ctx); err != nil {
			return Participant{}, err
		}
		p, ok, err := e.read(cs[0].Name)
		if err != nil {
			return Participant{}, fmt.Errorf("leader: leader of %s: %w", e.path, err)
		}
		if ok {
			return p, nil
		}
	}
}

// Participants lists every participant in line order, the leader first.
// Nodes of other names under the path are ignored. Cost: 1 getChildren + 1
// getData per participant; participants that leave meanwhile are skipped.
// It sets no watch.
func (e *Election) Participants(ctx context.Context) ([]Participant, error) {
	if err := e.usable(ctx); err != nil {
		return nil, err
	}
	cs, err := recipes.Contenders(ctx, e.s, e.cfg.dialect, e.path, e.roles()...)
	if err != nil {
		return nil, fmt.Errorf("leader: participants of %s: %w", e.path, err)
	}
	out := make([]Participant, 0, len(cs))
	for _, c := range cs {
		if err := recipes.ContextError(ctx); err != nil {
			return nil, err
		}
		p, ok, err := e.read(c.Name)
		if err != nil {
			return nil, fmt.Errorf("leader: participants of %s: %w", e.path, err)
		}
		if ok {
			out = append(out, p)
		}
	}
	return out, nil
}

// Watch reports the leader as it changes, on the returned Stream's C.
// The first value is the current leader (the zero Participant when nobody
// leads); then every change seen. C coalesces: a reader that falls behind
// gets the newest value, never an older leader after a newer one (leaders'
// tokens strictly grow), and Watch itself never waits for the reader.
// Changes quicker than a listing may be skipped (ZooKeeper's watches are
// one-shot).
//
// C is closed once ctx is done or the reader calls Stop (after any request
// in flight), or the session is closed; at once on a nil Election. Then the
// Stream's Err says why: nil after Stop, ctx's error, an error wrapping
// recipes.ErrClosed, or ErrNilReceiver. A reader that stops early calls
// Stop (or cancels ctx): the goroutines end even if they were about to
// send.
//
// Cost: 1 getChildren + 1 getData per change, with a data watch on the head
// node only: a change among the waiting participants wakes no observer.
// While nobody leads, one getChildren with a watch on the path (or an exists
// watch while the path does not exist) waits for the first participant.
// Watches are the Session's shared ones (recipes.Session.WatchData): an
// Watch on a path the Session already watches sends no getData for it,
// and Observes that end leave at most one go-zookeeper watcher per watched
// node behind, until that node changes. Watch runs two goroutines until
// C is closed.
func (e *Election) Watch(ctx context.Context) *recipes.Stream[Participant] {
	return latest.Stream(ctx, func(ctx context.Context, put func(Participant)) error {
		if err := e.usable(ctx); err != nil {
			return err
		}
		return e.watchHead(ctx, put)
	})
}

// watchHead follows the head of the line and publishes leader changes until
// ctx is done (it returns nil) or the session closes (an error wrapping
// recipes.ErrClosed).
func (e *Election) watchHead(ctx context.Context, put func(Participant)) error {
	var (
		cur       Participant
		maxToken  int64
		published bool
	)
	publish := func(p Participant) {
		switch {
		case p.IsZero() && (!published || !cur.IsZero()):
		case !p.IsZero() && p.Token > maxToken:
			maxToken = p.Token
		default:
			return // unchanged, or older than what was already seen
		}
		cur, published = p, true
		put(p)
	}
	// stopped says why the loop ends: ctx (nil) or a closed session.
	stopped := func(err error) error {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("leader: observe %s: %w", e.path, err)
	}
	for ctx.Err() == nil {
		if err := waitUsable(ctx, e.s); err != nil {
			return stopped(err)
		}
		cs, err := recipes.Contenders(ctx, e.s, e.cfg.dialect, e.path, e.roles()...)
		if err != nil {
			if errors.Is(err, recipes.ErrClosed) || !e.retry(ctx, err) {
				return stopped(recipes.ErrClosed)
			}
			continue
		}
		var w *recipes.Watch
		if len(cs) > 0 {
			p, pw, err := e.readWatch(ctx, cs[0].Name)
			if err != nil {
				if !e.retry(ctx, err) {
					return stopped(recipes.ErrClosed)
				}
				continue
			}
			if pw == nil {
				continue // the head just left: list again
			}
			publish(p)
			w = pw
		} else {
			publish(Participant{})
			ew, err := e.watchEmpty(ctx)
			if err != nil {
				if !e.retry(ctx, err) {
					return stopped(recipes.ErrClosed)
				}
				continue
			}
			if ew == nil {
				continue
			}
			w = ew
		}
		select {
		case <-w.Fired():
			// Deleted, changed, or not watching any more (session
			// lost or closing): list again.
			w.Close()
		case <-ctx.Done():
			w.Close()
			return nil
		}
	}
	return nil
}

// watchEmpty sets a watch that fires when the first participant may have
// joined an empty election: a child watch on the path, or an exists watch
// while the path does not exist (the Session's one watch of each kind on
// the path, see recipes.Session.WatchChildren). w is nil when someone
// joined already.
func (e *Election) watchEmpty(ctx context.Context) (w *recipes.Watch, err error) {
	children, _, w, err := e.s.WatchChildren(ctx, e.path)
	if errors.Is(err, zk.ErrNoNode) {
		found, _, w, err := e.s.WatchExists(ctx, e.path)
		if err == nil && found {
			w.Close()
			return nil, nil // created meanwhile
		}
		return w, err
	}
	if err != nil {
		return nil, err
	}
	for _, c := range children {
		if _, ok := e.cfg.dialect.Parse(c, e.roles()...); ok {
			w.Close()
			return nil, nil
		}
	}
	return w, nil
}

// retry pauses after a failed request and reports whether to go on: false
// once ctx is done or the session is closed. An error that is not about
// the connection is logged, and retried.
func (e *Election) retry(ctx context.Context, err error) bool {
	if ctx.Err() != nil {
		return false
	}
	if !isConnErr(err) {
		if e.s.State() == recipes.StateClosed {
			return false
		}
		e.s.Logger().Warn("leader: observe", "path", e.path, "err", err)
	}
	t := time.NewTimer(100 * time.Millisecond)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// waitUsable waits until the session is connected. It fails when ctx is
// done or the session is closed.
func waitUsable(ctx context.Context, s *recipes.Session) error {
	switch s.State() {
	case recipes.StateConnected, recipes.StateReconnected:
		return nil
	case recipes.StateClosed:
		return recipes.ErrClosed
	}
	sub := s.Subscribe()
	defer sub.Close()
	for {
		c, err := sub.Next(ctx)
		if err != nil {
			return err
		}
		switch c.State {
		case recipes.StateConnected, recipes.StateReconnected:
			return nil
		case recipes.StateClosed:
			return recipes.ErrClosed
		}
	}
}
