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

// CoordinatorOption configures a Coordinator (NewCoordinator):
// WithVoteTimeout, WithRetention.
type CoordinatorOption func(*coordinatorConfig)

// SiteOption configures a Site (NewSite):
// WithDeadline.
type SiteOption func(*participantConfig)

// The two option types are distinct, so an option given to the wrong
// constructor does not compile.

type coordinatorConfig struct {
	voteTimeout time.Duration
	retention   time.Duration
}

type participantConfig struct {
	deadline time.Duration
}

func newCoordinatorConfig(opts []CoordinatorOption) coordinatorConfig {
	c := coordinatorConfig{voteTimeout: DefaultVoteTimeout, retention: DefaultRetention}
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	return c
}

func newParticipantConfig(opts []SiteOption) participantConfig {
	c := participantConfig{deadline: DefaultDeadline}
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	return c
}

// WithVoteTimeout sets how long Tx.Decide waits for votes, counted from
// Begin (or Resume), before it decides abort. Values <= 0 keep the default.
func WithVoteTimeout(d time.Duration) CoordinatorOption {
	return func(c *coordinatorConfig) {
		if d > 0 {
			c.voteTimeout = d
		}
	}
}

// WithDeadline sets how long Proposal.Await waits for a decision, counted
// from the moment the proposal was read, before it decides abort itself
// (safe: nobody commits before the decision node says commit, and the
// decision is written once). d <= 0 disables it: Await then waits for the
// coordinator as long as ctx allows (classic, blocking 2PC).
func WithDeadline(d time.Duration) SiteOption {
	return func(c *participantConfig) { c.deadline = max(d, 0) }
}

// WithRetention sets how long Collect keeps a decided transaction, counted
// on the servers' clock from the decision's creation. Participants that
// come back later than that find the transaction gone (ErrUnknownTx).
// Values <= 0 keep the default.
func WithRetention(d time.Duration) CoordinatorOption {
	return func(c *coordinatorConfig) {
		if d > 0 {
			c.retention = d
		}
	}
}
