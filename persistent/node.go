package persistent

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/zkrecipes/internal/zkpath"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// Node is an ephemeral node that stays in ZooKeeper while the Node is
// started: it is created by Start and created again whenever it goes
// away, after its session was lost or after someone else deleted it, with
// the data last given (WithData, SetData).
//
// Invariants: the Node writes and deletes only a node it knows to be its
// own (ephemeral owner = its session, czxid = the one it created); it never
// keeps more than one node of its own at a time; while Present() is not
// done, the node existed with our session as its owner when last seen (the
// context is done from the moment the Node learns otherwise: see Present).
//
// A Node is safe for concurrent use. A started Node runs one goroutine of
// its own (plus the Session's one per armed watch), which ends with Leave,
// a failed Start or the Session's close.
type Node struct {
	s         *recipes.Session
	path      string // as given to New
	parent    string
	name      string
	protected bool

	mu        sync.Mutex
	data      []byte // the data the node must carry
	gen       uint64 // generation of data: 1 at New, +1 per SetData
	written   uint64 // newest generation a create or setData put on our node
	failedGen uint64 // newest generation whose write failed for good, with writeErr
	writeErr  error
	state     nodeState
	changed   chan struct{} // closed and replaced at every change SetData and Start wait for

	// The present incarnation, as last published by the loop.
	inc       incarnation // zero before the first creation
	present   context.Context
	cancel    context.CancelCauseFunc
	isPresent bool
	lostSid   int64 // the session StateLost was last reported for: its node must be checked again
	taken     int64 // owner of the node holding our path while we wait (-1: a persistent node)

	// The loop of the current start.
	kick        chan struct{} // capacity 1: "look again"
	stop        context.CancelFunc
	done        chan struct{} // closed when the loop has returned
	established bool          // the node was present at least once since Start
	loopErr     error         // why the loop returned, when not stopped
	last        *incarnation  // the loop's node when it returned (nil: none)
	orphan      bool          // Close gave up waiting: the loop removes its node itself
}

type nodeState int

const (
	idle nodeState = iota
	running
	closed
)

// incarnation is one node of ours.
type incarnation struct {
	path      string
	guid      string // protected mode
	ambiguous bool   // protected mode: a late copy carrying guid may appear
	sid       int64
	czxid     int64 // 0 until known
	version   int32
	written   uint64 // the generation of data it carries
}

// New returns a Node for path. Nothing is sent to ZooKeeper: Start creates
// the node. It fails, wrapping a sentinel, on a nil session
// (recipes.ErrNilSession), an invalid path, the root or one in the
// reserved /zookeeper tree (recipes.ErrInvalidPath), or a node whose
// create would exceed the session's request limit (recipes.ErrDataTooLarge;
// for WithProtected, with the longest name an incarnation can have).
func New(s *recipes.Session, path string, opts ...Option) (*Node, error) {
	if s == nil {
		return nil, fmt.Errorf("persistent: %w", recipes.ErrNilSession)
	}
	c := newConfig(opts)
	if err := recipes.ValidateWritePath(path); err != nil {
		return nil, fmt.Errorf("persistent: %w", err)
	}
	parent, name := zkpath.Split(path)
	n := &Node{s: s, path: path, parent: parent, name: name, protected: c.protected,
		data: c.data, gen: 1, changed: make(chan struct{})}
	if err := n.checkSize(c.data); err != nil {
		return nil, err
	}
	n.present, n.cancel = context.WithCancelCause(context.Background())
	n.cancel(ErrNotStarted)
	return n, nil
}

// longestPath is the longest path an incarnation can have.
func (n *Node) longestPath() string {
	if !n.protected {
		return n.path
	}
	return zkpath.Join(n.parent, "_c_"+strings.Repeat("0", 36)+"-"+n.name+"0000000000")
}

// checkSize refuses data whose create or setData would exceed the
// session's request limit.
func (n *Node) checkSize(data []byte) error {
	p := n.longestPath()
	if err := recipes.ValidateWritePath(p); err != nil {
		return fmt.Errorf("persistent: %w", err)
	}
	if err := recipes.CheckRequest(n.s.MaxData(), &zk.CreateRequest{Path: p, Data: data, Acl: n.s.ACLFor(p), Flags: zk.FlagEphemeralSequential}); err != nil {
		return fmt.Errorf("persistent: create %s: %w", n.path, err)
	}
	if err := recipes.CheckRequest(n.s.MaxData(), &zk.SetDataRequest{Path: p, Data: data}); err != nil {
		return fmt.Errorf("persistent: set data of %s: %w", n.path, err)
	}
	return nil
}

// Path returns the path of the node's present incarnation, or of the last
// one while it is absent. A plain node's path is New's path; a protected
// node's is "" until it is first created, and changes with each
// re-creation. No ZooKeeper calls.
func (n *Node) Path() string {
	if n == nil {
		return ""
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.inc.path == "" && !n.protected {
		return n.path
	}
	return n.inc.path
}

// Data returns a copy of the data the node carries, or will carry once
// created again: the last given to WithData or SetData. No ZooKeeper calls.
func (n *Node) Data() []byte {
	if n == nil {
		return nil
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]byte{}, n.data...)
}

// Present returns a context that is not done while the node is present,
// and done from the moment the Node learns that it may be absent, with a
// cause (context.Cause) that errors.Is one of: recipes.ErrNodeDeleted
// (someone else deleted it), recipes.ErrSessionLost (its session expired
// or was lost: the Session reported StateLost, which its lease does at the
// latest one negotiated timeout after the last answer, before the server
// can have expired it), recipes.ErrClosed (the Session was closed; also
// matches ErrSessionLost), recipes.ErrReleased (Leave), ErrNotStarted
// (before Start). Each incarnation has its own context: once the node is
// back (created again, or found still ours after the same session came
// back), Present returns a new one. While the node is absent it returns the
// last one, done. A suspended connection alone does not end it: the node
// stays on the server until the session expires. No ZooKeeper calls.
func (n *Node) Present() context.Context {
	if n == nil {
		ctx, cancel := context.WithCancelCause(context.Background())
		cancel(ErrNilNode)
		return ctx
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.present
}

// Start creates the node and returns once it exists (its owner checked
// with an exists, which also sets the watch that keeps it), or fails when
// ctx ends first: then nothing is left behind (a node already created is
// deleted, in the background if need be) and Start may be called again.
// From its return on, the Node keeps the node in the background until
// Leave or the Session's close. A plain node's path held by another
// session's node (an earlier incarnation of this process whose session
// has not expired yet, or another member with the same name) is waited for:
// the node is created once that one is gone, and an error for ctx then
// also wraps ErrTaken.
//
// Cost: 1 create + 1 exists (+1 createContainer per missing parent level:
// parents are container nodes, as Curator makes them); a plain path held by
// another session: +1 getData, then 1 exists per change of that node. A
// done ctx sends nothing. It fails with ErrStarted when started, ErrClosed
// after Leave, an error wrapping recipes.ErrClosed on a closed Session, or
// the server's answer to a create it cannot retry (zk.ErrNoAuth, ...).
func (n *Node) Start(ctx context.Context) error {
	if n == nil {
		return ErrNilNode
	}
	if err := recipes.ContextError(ctx); err != nil {
		return fmt.Errorf("persistent: start %s: %w", n.path, err)
	}
	n.mu.Lock()
	switch n.state {
	case closed:
		n.mu.Unlock()
		return fmt.Errorf("%w: %s", ErrClosed, n.path)
	case running:
		n.mu.Unlock()
		return fmt.Errorf("%w: %s", ErrStarted, n.path)
	}
	n.state = running
	loopCtx, stop := context.WithCancel(context.Background())
	n.kick, n.stop, n.done = make(chan struct{}, 1), stop, make(chan struct{})
	n.established, n.loopErr, n.last, n.orphan, n.taken = false, nil, nil, false, 0
	kick, done := n.kick, n.done
	n.mu.Unlock()

	go n.run(loopCtx, kick)
	for {
		n.mu.Lock()
		switch {
		case n.established:
			n.mu.Unlock()
			return nil
		case isClosed(done):
			err, last := n.loopErr, n.last
			if n.state == closed {
				last = nil // Close deletes it
			}
			n.resetLocked()
			n.mu.Unlock()
			if last != nil {
				_ = n.remove(ctx, last)
			}
			if err == nil {
				err = ErrClosed // Close came first
			}
			return fmt.Errorf("persistent: start %s: %w", n.path, err)
		}
		ch, taken := n.changed, n.taken
		n.mu.Unlock()
		select {
		case <-ch:
			continue
		case <-ctx.Done():
		}
		stop()
		<-done // after the request in flight, if any
		n.mu.Lock()
		if n.established {
			// Made it meanwhile: stopping was wrong, but the node is
			// deleted below and Start reports ctx's end, as it must.
			taken = 0
		}
		last := n.last
		if n.state == closed {
			last = nil // Close deletes it
		}
		n.resetLocked()
		n.mu.Unlock()
		if last != nil {
			_ = n.remove(ctx, last) // ctx is done: in the background
		}
		err := recipes.ContextError(ctx)
		if taken != 0 {
			err = fmt.Errorf("%w (%s): %w", ErrTaken, owner(taken), err)
		}
		return fmt.Errorf("persistent: start %s: %w", n.path, err)
	}
}

// resetLocked returns a Node whose loop has returned to idle (unless Leave
// came), its Present done.
func (n *Node) resetLocked() {
	if n.state == running {
		n.state = idle
	}
	if n.isPresent || n.present.Err() == nil {
		n.cancel(ErrNotStarted)
	}
	n.isPresent = false
	n.broadcastLocked()
}

func owner(sid int64) string {
	if sid < 0 {
		return "a persistent node"
	}
	return fmt.Sprintf("session 0x%x", sid)
}

// SetData makes data the node's data: it is written to the present node
// (with the version last seen, so that only our incarnation is written),
// and every later re-creation carries it. It returns once a node of ours
// carries data (or newer data): while the node is absent, it waits for the
// re-creation. The data is recorded first: when SetData returns ctx's
// error, the node still gets it once it can, unless a later SetData
// replaced it. Before Start, it only records data (nothing is sent).
// Concurrent calls are written in turn; each returns once its own data or
// a later one is on the node.
//
// A write by someone else to our node is left alone, as Curator leaves it:
// the node keeps that data until the next SetData or re-creation.
//
// Cost: 1 setData + 1 exists (its own write fires the Node's watch, which
// is set again); +1 exists and +1 setData when the version changed under
// us. A done ctx sends nothing and records nothing. It fails with
// recipes.ErrDataTooLarge (nothing recorded), ErrClosed after Leave, an
// error wrapping recipes.ErrClosed once the Session is closed, or the
// server's answer to a setData it cannot retry.
func (n *Node) SetData(ctx context.Context, data []byte) error {
	if n == nil {
		return ErrNilNode
	}
	if err := n.checkSize(data); err != nil {
		return err
	}
	if err := recipes.ContextError(ctx); err != nil {
		return fmt.Errorf("persistent: set data of %s: %w", n.path, err)
	}
	n.mu.Lock()
	if n.state == closed {
		n.mu.Unlock()
		return fmt.Errorf("%w: %s", ErrClosed, n.path)
	}
	n.data = append([]byte{}, data...)
	n.gen++
	g := n.gen
	if n.state != running {
		n.mu.Unlock()
		return nil
	}
	kick, done := n.kick, n.done
	n.mu.Unlock()
	nudge(kick)
	for {
		n.mu.Lock()
		switch {
		case n.written >= g:
			n.mu.Unlock()
			return nil
		case n.failedGen >= g:
			err := n.writeErr
			n.mu.Unlock()
			return fmt.Errorf("persistent: set data of %s: %w", n.path, err)
		case isClosed(done):
			err := n.loopErr
			n.mu.Unlock()
			if err == nil {
				err = ErrClosed
			}
			return fmt.Errorf("persistent: set data of %s: %w", n.path, err)
		}
		ch := n.changed
		n.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("persistent: set data of %s: %w", n.path, recipes.ContextError(ctx))
		}
	}
}

// owns reports whether st is the stat of inc's node.
func (inc *incarnation) owns(st *zk.Stat) bool {
	return st.EphemeralOwner == inc.sid && (inc.czxid == 0 || st.Czxid == inc.czxid)
}

func (n *Node) broadcastLocked() {
	close(n.changed)
	n.changed = make(chan struct{})
}

func nudge(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
