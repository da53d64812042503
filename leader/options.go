package leader

import (
	"fmt"

	"github.com/zkrecipes/zkrecipes/recipes"
)

// Dialect is the wire format of an election's nodes, so that Go and other
// clients can take part in the same election.
type Dialect int

const (
	// LeaderLatch is Apache Curator's LeaderLatch (the default):
	// "_c_<uuid36>-latch-<seq>", data = participant id, ordered by the
	// digits after the last "latch-".
	LeaderLatch Dialect = iota
	// LeaderSelector is Apache Curator's LeaderSelector, which contends
	// through an InterProcessMutex: "_c_<uuid36>-lock-<seq>", data =
	// participant id. It shares a path with lock.Mutex holders.
	LeaderSelector
	// KazooElection is kazoo's Election (a kazoo Lock underneath):
	// "<uuid hex32>__lock__<seq>", data = identifier.
	KazooElection
)

func (d Dialect) String() string {
	switch d {
	case LeaderLatch:
		return "curator-leader-latch"
	case LeaderSelector:
		return "curator-leader-selector"
	case KazooElection:
		return "kazoo-election"
	}
	return fmt.Sprintf("dialect(%d)", int(d))
}

// wire maps d onto the core's dialect and role.
func (d Dialect) wire() (recipes.Dialect, recipes.Role, error) {
	switch d {
	case LeaderLatch:
		return recipes.Curator, recipes.RoleLatch, nil
	case LeaderSelector:
		return recipes.Curator, recipes.RoleLock, nil
	case KazooElection:
		return recipes.Kazoo, recipes.RoleLatch, nil
	}
	return recipes.Dialect{}, 0, fmt.Errorf("leader: %w: unknown dialect %d", recipes.ErrBadArgument, int(d))
}

// Option configures an Election (New, Do).
type Option func(*config)

type config struct {
	id        string
	dialect   Dialect
	textOrder bool
	policy    *recipes.LossPolicy
	events    func(Event)
}

func newConfig(opts []Option) config {
	c := config{id: defaultID()}
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	return c
}

// defaultID identifies this process: "host:pid".
func defaultID() string { return recipes.ProcessID() }

// WithID sets the participant id, stored as our node's data (UTF-8) as
// Curator and kazoo do, and shown by Leader, Participants and Observe.
// Default: "host:pid".
func WithID(id string) Option {
	return func(c *config) { c.id = id }
}

// WithDialect selects the wire format (default LeaderLatch).
func WithDialect(d Dialect) Option {
	return func(c *config) { c.dialect = d }
}

// WithTextOrder orders the line as Curator and kazoo do, by the text of the
// sequence suffix, instead of by serial arithmetic (the default). Turn it on
// when Curator's or kazoo's participants share the election, so that Go and
// foreign participants agree on the leader; it changes nothing until the
// path's sequence counter wraps after 2^31 creates and deletes, where the
// foreign order itself puts newcomers ahead of the leader (two leaders at
// once, and fencing tokens no longer grow from one leader to the next; see
// recipes.Dialect.TextOrder). Leave it off on Go-only paths:
// there serial order stays correct across the wrap.
func WithTextOrder() Option {
	return func(c *config) { c.textOrder = true }
}

// WithLossPolicy overrides the session's loss policy for this election's
// terms. The session's default, recipes.StepDownOnSuspend, ends a term at
// disconnect, before the server can expire the session and elect someone
// else; recipes.StepDownOnLost keeps the term through short disconnects and
// is unsafe under partitions (two participants may both believe they lead).
func WithLossPolicy(p recipes.LossPolicy) Option {
	return func(c *config) { c.policy = &p }
}

// WithEvents installs a lifecycle hook. It is called with the Events in the
// documented order (see EventType), one at a time, from a goroutine of the
// package: the election never waits for it. A slow hook delays later events,
// never the election: up to EventQueueLimit events wait for it, and beyond
// that the oldest waiting event is dropped, so a hook that stops reading
// costs bounded memory; the next event delivered counts the gap in
// Event.Dropped. The goroutine calling the hook exists only while events
// wait; a hook that never returns keeps it (closing the session does not
// end it). nil removes the hook.
func WithEvents(fn func(Event)) Option {
	return func(c *config) { c.events = fn }
}
