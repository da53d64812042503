// The double barrier: its type, its constructor and how members are named.
// Entering is in double_enter.go, leaving in double_leave.go.

package barrier

import (
	"fmt"
	"slices"
	"sync"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/zkrecipes/internal/zkpath"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// ReadyNode is the name of the node that the n-th member to enter creates
// under the barrier path (Curator's and kazoo's "ready").
const ReadyNode = "ready"

// DoubleBarrier is ZooKeeper's double barrier: n members enter, and nobody
// gets past Enter before n have entered; they compute; then nobody gets
// past Leave before all have left. The wire format is Curator's
// DistributedDoubleBarrier: each member is an ephemeral node
// "<path>/<uuid36>" (kazoo's DoubleBarrier: "<uuid hex32>", WithDialect),
// and the member that sees n members creates the persistent node
// "<path>/ready", which releases everyone waiting in Enter.
//
// Invariants: Enter returns nil only after "ready" existed, which it does
// only after n member nodes existed at once (members are the children
// named by a GUID in the dialect's form; other children are ignored); Leave returns nil only after
// every member node is gone. Members are ephemeral: a member whose session
// dies drops out (it no longer counts toward n, and Leave does not wait for
// it), and its own Enter or Leave fails with ErrMemberLost.
//
// A DoubleBarrier is one member: use one per participant. Its methods are
// safe for concurrent use, but Enter and Leave are meant to be called in
// turn.
type DoubleBarrier struct {
	s     *recipes.Session
	path  string
	n     int
	cfg   config
	ready string

	mu      sync.Mutex
	busy    bool
	entered bool
	name    string // our member node, "" when none
	sid     int64  // the session that owns it
}

// Option configures a DoubleBarrier.
type Option func(*config)

type config struct {
	dialect recipes.Dialect
}

// WithDialect selects the member names: recipes.Curator (the default,
// "<uuid36>") or recipes.Kazoo ("<uuid hex32>"). Both use "ready".
func WithDialect(d recipes.Dialect) Option {
	return func(c *config) { c.dialect = d }
}

// NewDouble returns a member of the double barrier on path for n members.
// Nothing is sent to ZooKeeper. It fails, wrapping a sentinel, on a nil
// session (recipes.ErrNilSession), n < 1 (ErrMembers, also
// recipes.ErrBadArgument), an invalid path or one in the reserved
// /zookeeper tree (recipes.ErrInvalidPath), or a path so long that
// creating a member node would exceed the session's request limit
// (recipes.ErrDataTooLarge). A closed session is reported by every method
// as recipes.ErrClosed.
func NewDouble(s *recipes.Session, path string, n int, opts ...Option) (*DoubleBarrier, error) {
	cfg := config{dialect: recipes.Curator}
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	if s == nil {
		return nil, fmt.Errorf("barrier: %w", recipes.ErrNilSession)
	}
	if n < 1 {
		return nil, fmt.Errorf("%w (%w): %d", ErrMembers, recipes.ErrBadArgument, n)
	}
	if err := recipes.ValidateWritePath(path); err != nil {
		return nil, fmt.Errorf("barrier: %w", err)
	}
	if err := recipes.CheckRequest(s.MaxData(), &zk.CreateRequest{
		// The largest request a member sends: its member node's create
		// (a GUID of at most 36 characters).
		Path: zkpath.Join(path, "00000000-0000-0000-0000-000000000000"), Acl: s.ACLFor(zkpath.Join(path, "00000000-0000-0000-0000-000000000000")), Flags: zk.FlagEphemeral,
	}); err != nil {
		return nil, fmt.Errorf("barrier: enter: %w", err)
	}
	return &DoubleBarrier{s: s, path: path, n: n, cfg: cfg, ready: zkpath.Join(path, ReadyNode)}, nil
}

// Path returns the barrier's path.
func (d *DoubleBarrier) Path() string { return d.path }

// Name returns our member node's name, "" when we are not a member.
func (d *DoubleBarrier) Name() string {
	if d == nil {
		return ""
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.name
}

// phase says which call begin marks.
type phase bool

const (
	leaving  phase = false // Leave
	entering phase = true  // Enter
)

// begin marks an Enter or Leave in progress.
func (d *DoubleBarrier) begin(enter phase) error {
	if d == nil {
		return ErrNilReceiver
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	switch {
	case d.busy || (enter == entering && d.entered):
		if enter {
			return fmt.Errorf("%w: %s", ErrAlreadyEntered, d.path)
		}
		return fmt.Errorf("%w: %s: Enter or Leave in progress", ErrNotEntered, d.path)
	case enter == leaving && !d.entered:
		return fmt.Errorf("%w: %s", ErrNotEntered, d.path)
	}
	d.busy = true
	return nil
}

func (d *DoubleBarrier) end(entered bool) {
	d.mu.Lock()
	d.busy, d.entered = false, entered
	if !entered {
		d.name, d.sid = "", 0
	}
	d.mu.Unlock()
}

// memberNames returns the children that are members in dialect d (named
// by a GUID in d's form: 36 characters with dashes for Curator, 32 hex
// digits for kazoo), sorted by name: the order of ZooKeeper's and
// Curator's leave protocol. "ready" and foreign nodes are ignored, so a
// stray node under the path cannot hold the barrier. Pure.
func memberNames(d recipes.Dialect, children []string) []string {
	out := make([]string, 0, len(children))
	for _, c := range children {
		if isMember(d, c) {
			out = append(out, c)
		}
	}
	slices.Sort(out)
	return out
}

// isMember reports whether name is a GUID in dialect d's form. Pure.
func isMember(d recipes.Dialect, name string) bool {
	dashes := d.String() != recipes.Kazoo.String()
	if (dashes && len(name) != 36) || (!dashes && len(name) != 32) {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= '0' && c <= '9', c >= 'a' && c <= 'f', c >= 'A' && c <= 'F':
			if dashes && (i == 8 || i == 13 || i == 18 || i == 23) {
				return false
			}
		case c == '-' && dashes && (i == 8 || i == 13 || i == 18 || i == 23):
		default:
			return false
		}
	}
	return true
}

// Members returns the children that are double-barrier members in dialect
// d (a GUID in d's form), sorted by name: the order of the leave protocol.
// It is the parsing DoubleBarrier itself uses, exported for tools that
// inspect a barrier. Pure.
func Members(d recipes.Dialect, children []string) []string { return memberNames(d, children) }
