package twophase

import "time"

// Defaults of the options.
const (
	// DefaultVoteTimeout is how long a coordinator waits for votes.
	DefaultVoteTimeout = 30 * time.Second
	// DefaultDeadline is how long a participant waits for a decision
	// before it decides abort itself. It is longer than DefaultVoteTimeout
	// so that a live coordinator normally decides first.
	DefaultDeadline = 2 * time.Minute
	// DefaultRetention is how long a decided transaction is kept before
	// Collect deletes it (and how long an undecided one may stay open
	// before Collect aborts it).
	DefaultRetention = 24 * time.Hour
)

// Option configures a Coordinator or a Participant. Options that do not
// apply to the one they are given to are ignored.
type Option func(*config)

type config struct {
	voteTimeout time.Duration
	deadline    time.Duration
	retention   time.Duration
}

func newConfig(opts []Option) config {
	c := config{voteTimeout: DefaultVoteTimeout, deadline: DefaultDeadline, retention: DefaultRetention}
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	return c
}

// WithVoteTimeout (coordinator) sets how long Tx.Decide waits for votes,
// counted from Begin (or Resume), before it decides abort. Values <= 0 keep
// the default.
func WithVoteTimeout(d time.Duration) Option {
	return func(c *config) {
		if d > 0 {
			c.voteTimeout = d
		}
	}
}

// WithDeadline (participant) sets how long Proposal.Await waits for a
// decision, counted from the moment the proposal was read, before it
// decides abort itself (safe: nobody commits before the decision node says
// commit, and the decision is written once). d <= 0 disables it: Await then
// waits for the coordinator as long as ctx allows (classic, blocking 2PC).
func WithDeadline(d time.Duration) Option {
	return func(c *config) { c.deadline = max(d, 0) }
}

// WithRetention (coordinator) sets how long Collect keeps a decided
// transaction, counted on the servers' clock from the decision's creation.
// Participants that come back later than that find the transaction gone
// (ErrUnknownTx). Values <= 0 keep the default.
func WithRetention(d time.Duration) Option {
	return func(c *config) {
		if d > 0 {
			c.retention = d
		}
	}
}
