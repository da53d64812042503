package leader

import (
	"github.com/zkrecipes/zkrecipes/recipes"
)

// Option configures an Election (New, Do).
type Option func(*config)

type config struct {
	data    []byte
	dialect recipes.Dialect
	policy  *recipes.LossPolicy
	events  func(Event)
}

func newConfig(opts []Option) config {
	c := config{data: []byte(recipes.ProcessID()), dialect: recipes.Curator}
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	return c
}

// WithData sets the participant id: the bytes stored in our node, as
// Curator (LeaderLatch's and LeaderSelector's id, UTF-8) and kazoo (the
// identifier) store theirs, and shown as Participant.ID by Leader,
// Participants, Watch and Term.Participant. Default:
// recipes.ProcessID(), "host:pid". The bytes are copied; more than the
// session's request limit allows makes New fail with
// recipes.ErrDataTooLarge.
func WithData(b []byte) Option {
	return func(c *config) { c.data = append([]byte(nil), b...) }
}

// WithDialect selects the wire format (recipes.Dialect.ElectionRole names
// the nodes): recipes.Curator, the default, is Curator's LeaderLatch
// ("_c_<uuid36>-latch-<seq>"); recipes.CuratorSelector is Curator's
// LeaderSelector, which contends through an InterProcessMutex
// ("_c_<uuid36>-lock-<seq>", sharing a path with lock.Mutex holders);
// recipes.Kazoo is kazoo's Election, a kazoo Lock underneath
// ("<uuid hex32>__lock__<seq>").
//
// Participants are ordered by serial arithmetic on the sequence suffix by
// default. When Curator's or kazoo's participants share the election, pass
// the dialect's TextOrder variant (recipes.Curator.TextOrder(), ...), so
// that Go and foreign participants agree on the leader: it orders by the
// suffix's text as they do, which changes nothing until the path's
// sequence counter wraps after 2^31 creates and deletes, where the foreign
// order itself puts newcomers ahead of the leader (two leaders at once,
// and fencing tokens no longer grow from one leader to the next; see
// recipes.Dialect.TextOrder). Keep serial order on Go-only paths: it stays
// correct across the wrap.
func WithDialect(d recipes.Dialect) Option {
	return func(c *config) { c.dialect = d }
}

// WithLossPolicy overrides the session's loss policy for this election's
// terms. The session's default, recipes.StepDownOnSuspend, ends a term at
// disconnect, before the server can expire the session and elect someone
// else; recipes.StepDownOnLost keeps the term through short disconnects and
// is unsafe under partitions (two participants may both believe they lead).
func WithLossPolicy(p recipes.LossPolicy) Option {
	return func(c *config) {
		if p == recipes.DefaultLossPolicy {
			c.policy = nil
			return
		}
		c.policy = &p
	}
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
