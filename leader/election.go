package leader

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/internal/zkpath"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// Election is one participant of a leader election at a ZooKeeper path.
//
// Invariant: at most one participant (in any process, in any compatible
// client) holds a live Term for a path at a time, as long as leaders stop
// when their Term's context is done; fenced writes (Term.FencedMulti) are
// rejected by ZooKeeper itself once the term's node is gone. A term begins
// only after the core found our node first in line and an explicit check
// found the node present with our current session as its ephemeral owner
// (the check that fixed Curator's double-leader bug).
//
// An Election is safe for concurrent use. It is one participant: a second
// Campaign while one is running or a term is live returns ErrCampaigning.
// Leader, Participants and Watch may be called at any time, also on
// Elections that never campaign.
type Election struct {
	s      *recipes.Session
	path   string
	cfg    config
	role   recipes.Role // the dialect's election role
	events *dispatcher

	mu          sync.Mutex
	campaigning bool
	term        *Term
}

// New returns an Election on path for session s. It sends nothing. It
// fails, wrapping a sentinel, on a nil session (recipes.ErrNilSession), an
// invalid path or one in the reserved /zookeeper tree
// (recipes.ErrInvalidPath), or a participant id (WithData) larger than the
// session's request limit (recipes.ErrDataTooLarge). It never panics.
func New(s *recipes.Session, path string, opts ...Option) (*Election, error) {
	cfg := newConfig(opts)
	if s == nil {
		return nil, fmt.Errorf("leader: %w", recipes.ErrNilSession)
	}
	if err := recipes.ValidateParentPath(path); err != nil {
		return nil, fmt.Errorf("leader: %w", err)
	}
	if err := recipes.CheckData(cfg.data, s.MaxData()); err != nil {
		return nil, fmt.Errorf("leader: participant id: %w", err)
	}
	return &Election{s: s, path: path, cfg: cfg, role: cfg.dialect.ElectionRole(), events: newDispatcher(cfg.events)}, nil
}

// Path returns the election's path.
func (e *Election) Path() string {
	if e == nil {
		return ""
	}
	return e.path
}

// ID returns the participant id (our node's data, WithData) as a string.
func (e *Election) ID() string {
	if e == nil {
		return ""
	}
	return string(e.cfg.data)
}

func (e *Election) usable(ctx context.Context) error {
	if e == nil {
		return ErrNilReceiver
	}
	if ctx == nil {
		return recipes.ErrNilContext
	}
	return nil
}

func (e *Election) policy() recipes.LossPolicy {
	if e.cfg.policy != nil {
		return *e.cfg.policy
	}
	return e.s.LossPolicy()
}

func (e *Election) emit(ev Event) { e.events.emit(ev) }

// begin marks a campaign in progress.
func (e *Election) begin() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.campaigning || (e.term != nil && e.term.ctx.Err() == nil) {
		return ErrCampaigning
	}
	e.campaigning = true
	return nil
}

func (e *Election) end(t *Term) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.campaigning = false
	if t != nil {
		e.term = t
	}
}

// Campaign joins the election and blocks until we lead or ctx is done. It
// returns the Term, whose Context is cancelled the moment leadership may be
// lost. If ctx ends first, the error is ctx's error and our node is deleted
// before Campaign returns, or handed to the session's background deletes
// (guaranteed while the session lives) when the connection is down, the
// delete's outcome is ambiguous, or ctx ended during the owner check; with
// an already-done ctx nothing is sent. If the
// session is lost while waiting, Campaign joins again under the new session
// (at the back of the line).
//
// Protocol and cost: the core's protected create of our ephemeral
// sequential node (1 create) and 1 getChildren; while not first, a data
// watch on the one node right ahead of us, never the parent (1 getData, or
// none when the session already watches that node), and when it goes, we
// lead without listing again if it was the only one ahead; otherwise we
// watch the next node ahead (1 getData) when two or fewer were ahead at the
// last listing, or list again (1 getChildren) when more were, since most
// of those have usually gone in turn. A Campaign given up (ctx done) leaves
// no watch of its own behind: the session keeps one watch per node for all
// its waiters. Once first: 1 getData, which is both the owner check and
// the watch on our own node for the term's life, so that its deletion ends
// the term (the core may add 1 getData reading our czxid). Uncontended: 1
// create + 1 getChildren (one round trip: recipes.Acquire pipelines them)
// + 1 getData. A release wakes exactly
// the participant behind the leaver (and, once per session, the Observes
// watching the head).
//
// Campaign on a closed session returns an error wrapping recipes.ErrClosed;
// while another Campaign runs or a term of this Election is live,
// ErrCampaigning.
func (e *Election) Campaign(ctx context.Context) (*Term, error) {
	if err := e.usable(ctx); err != nil {
		return nil, err
	}
	if err := e.begin(); err != nil {
		return nil, err
	}
	var t *Term
	defer func() { e.end(t) }()
	e.emit(Event{Type: EventStart})
	t, err := e.campaign(ctx)
	if err != nil {
		e.emit(Event{Type: EventFailed, Err: err})
		return nil, err
	}
	return t, nil
}

func (e *Election) campaign(ctx context.Context) (*Term, error) {
	for {
		if err := recipes.ContextError(ctx); err != nil {
			return nil, fmt.Errorf("leader: campaign %s: %w", e.path, err)
		}
		tr := &tracker{e: e}
		e.emit(Event{Type: EventOfferStart})
		h, err := recipes.Acquire(ctx, e.s, recipes.Spec{
			Path:      e.path,
			Dialect:   e.cfg.dialect,
			Role:      e.role,
			Predicate: tr.predicate,
			Data:      e.cfg.data,
			Policy:    e.policy(),
		})
		if err != nil {
			return nil, fmt.Errorf("leader: campaign %s: %w", e.path, err)
		}
		ok, err := e.verify(ctx, h)
		if err != nil || !ok {
			_ = h.Release(ctx) // wakes the one behind us; background if ctx is done
			if err != nil {
				return nil, fmt.Errorf("leader: campaign %s: %w", e.path, err)
			}
			continue // a new node, at the back of the line
		}
		return newTerm(e, h), nil
	}
}

// verify is the owner check that starts a term: our node exists, its
// ephemeral owner is the session the holding was acquired under, that is
// still the session's current id, and the holding has not been cancelled
// meanwhile (suspension, loss). It reads the node with the request that
// sets the term's watch on it (recipes.Holding.Check). Cost: 1 getData. ok
// is false when we must join again; err is set only for answers that
// retrying cannot fix.
func (e *Election) verify(ctx context.Context, h *recipes.Holding) (bool, error) {
	ok, err := h.Check(ctx)
	if err != nil && recipes.ContextError(ctx) == nil {
		return false, fmt.Errorf("owner check of %s: %w", h.Path(), err)
	}
	if err != nil {
		return false, err
	}
	return ok, nil
}

// isConnErr reports whether err means the request's outcome is unknown or
// the connection is unusable right now, as opposed to an answer.
func isConnErr(err error) bool {
	var ne net.Error
	return errors.Is(err, zk.ErrConnectionClosed) || errors.Is(err, zk.ErrNoServer) ||
		errors.Is(err, zk.ErrSessionMoved) || errors.Is(err, zk.ErrClosing) ||
		errors.Is(err, zk.ErrSessionExpired) || errors.As(err, &ne) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed)
}

// tracker is the exclusive predicate of one Campaign, reporting the core's
// steps as lifecycle events. The core calls it on the campaigning goroutine
// each time it orders the contenders: after listing, and after the node we
// watched went.
type tracker struct {
	e    *Election
	node string // our node's name as last seen
}

func (tr *tracker) predicate(cs []recipes.Contender, self int) (bool, int) {
	e := tr.e
	node := zkpath.Join(e.path, cs[self].Name)
	if cs[self].Name != tr.node {
		if tr.node != "" { // the core created a new node (session lost)
			e.emit(Event{Type: EventOfferStart})
		}
		tr.node = cs[self].Name
		e.emit(Event{Type: EventOfferComplete, Node: node})
	}
	e.emit(Event{Type: EventDetermineStart, Node: node})
	e.emit(Event{Type: EventDetermineComplete, Node: node, Position: self})
	if self == 0 {
		e.emit(Event{Type: EventElectedStart, Node: node})
		return true, -1
	}
	watch := zkpath.Join(e.path, cs[self-1].Name)
	e.emit(Event{Type: EventReadyStart, Node: node, Watch: watch})
	e.emit(Event{Type: EventReadyComplete, Node: node, Watch: watch})
	return false, self - 1
}
