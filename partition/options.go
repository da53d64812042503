package partition

import (
	"time"

	"github.com/zkrecipes/zkrecipes/recipes"
)

// Option configures New.
type Option func(*config)

type config struct {
	id       string
	hasID    bool
	kazoo    bool
	boundary time.Duration
	fn       Func
	hasFn    bool
	policy   *recipes.LossPolicy
}

// DefaultBoundary is the time the members must hold still before the set
// is split (WithBoundary): kazoo's default time_boundary.
const DefaultBoundary = 30 * time.Second

func newConfig(opts []Option) config {
	c := config{id: recipes.ProcessID(), boundary: DefaultBoundary, fn: Stride}
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	return c
}

// WithID sets this member's id in the group: the name the partition
// function sorts members by. Default recipes.ProcessID() ("host:pid"; kazoo's
// default is "<fqdn>-<pid>"). Ids must be unique among the members: two
// members with one id compute the same share and one of them waits for the
// other's locks. In both layouts the id is part of a node name, so it must
// be valid in one path segment (New fails with group.ErrInvalidID).
func WithID(id string) Option {
	return func(c *config) { c.id, c.hasID = id, true }
}

// WithDialect selects the wire format. recipes.Curator (the default):
// members are Curator GroupMember nodes "<path>/party/<id>" (package
// group's default layout) and each item's lock a Curator InterProcessMutex
// at "<path>/locks/<item>". recipes.Kazoo: kazoo's SetPartitioner layout,
// members kazoo ShallowParty nodes "<path>/party/<uuid hex32>-<id>"
// (group.WithShallowParty) and locks kazoo Locks ("<uuid
// hex32>__lock__<seq>") at "<path>/locks/<item>", so that Go members and
// kazoo's SetPartitioner split one set together.
func WithDialect(d recipes.Dialect) Option {
	return func(c *config) { c.kazoo = d.String() == recipes.Kazoo.String() }
}

// WithBoundary sets how long the members (their ids) must hold still
// before the set is split and the locks taken: kazoo's time_boundary.
// Every change of the members starts the wait again, so a group that is
// starting up (members joining one after the other) is split once, not
// once per join. Default DefaultBoundary (30 s, kazoo's); 0 splits as
// soon as the members are read. A negative boundary makes New fail with
// recipes.ErrBadArgument.
func WithBoundary(d time.Duration) Option {
	return func(c *config) { c.boundary = d }
}

// WithFunc sets the partition function (kazoo's partition_func). Default
// Stride, kazoo's own. Every member of a group must use the same function.
// A nil function makes New fail with recipes.ErrBadArgument.
func WithFunc(f Func) Option {
	return func(c *config) { c.fn, c.hasFn = f, true }
}

// WithLossPolicy overrides the session's loss policy (recipes.WithLossPolicy)
// for the item locks, and so for the Partitions' Context: under
// recipes.StepDownOnSuspend (the default) a Partition ends when the
// connection is suspended; under recipes.StepDownOnLost only when the
// session is lost or its lease runs out.
func WithLossPolicy(p recipes.LossPolicy) Option {
	return func(c *config) {
		if p == recipes.DefaultLossPolicy {
			c.policy = nil
			return
		}
		c.policy = &p
	}
}
