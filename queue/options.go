package queue

import "github.com/zkrecipes/zkrecipes/recipes"

// Priorities: lower values are taken first (kazoo's convention).
const (
	MinPriority     = 0
	MaxPriority     = 999
	DefaultPriority = 100
)

// Option configures a Queue.
type Option func(*config)

type config struct {
	dialect   recipes.Dialect
	priority  bool
	claimPath string
	data      []byte
	policy    *recipes.LossPolicy // nil: the session's
	maxItems  int                 // 0: unbounded
	spread    bool                // colliding consumers spread over the head (spread.go)
}

// WithDialect selects the item names (recipes.Dialect.QueueItem):
// recipes.Curator, the default, names items "qn-<seq>", ZooKeeper's queue
// recipe and Curator's SimpleDistributedQueue, which can share the path;
// with WithPriority they are "qn-<ppp>-<seq>" (three-digit priority), which
// only this package orders by priority (Curator sorts them by name).
// recipes.Kazoo names items "entry-<ppp>-<seq>", as kazoo's Queue and
// LockingQueue do (kazoo's LockingQueue keeps them under <path>/entries and
// its claims under <path>/taken: use New(s, path+"/entries",
// WithDialect(recipes.Kazoo), WithClaimPath(path+"/taken"))).
func WithDialect(d recipes.Dialect) Option {
	return func(c *config) { c.dialect = d }
}

// WithPriority makes a priority queue: PutPriority is allowed, and consumers
// list the queue again whenever their child watch fired, so that an item of
// a higher priority put after their last listing is taken before the cached
// ones (a FIFO consumer lists again only when its cached list runs out,
// since a newer item can never go ahead of an older one).
func WithPriority() Option {
	return func(c *config) { c.priority = true }
}

// WithSpread lets consumers of this Queue that collide with other
// consumers spread over the head of their listing instead of all trying
// the oldest item (spread.go): each loss then costs a listing instead of
// a request per other consumer (docs/bench.md has the measured counts).
// The price is order: an
// item may be taken ahead of up to 63 older ones of its priority, a
// consumer may receive one producer's items out of order, and takes are
// no longer linearizable as a FIFO queue (the chaos suite's
// queue-linearizable check holds only without it). Without WithSpread,
// every Take and Claim tries the oldest item it knows first, as Curator's
// and kazoo's consumers do.
func WithSpread() Option {
	return func(c *config) { c.spread = true }
}

// WithClaimPath sets the parent of claim nodes (default "<path>/taken",
// kazoo LockingQueue's name). Claim nodes are named after the item they
// claim, so the claim path cannot be the queue's path: New rejects that
// with recipes.ErrBadArgument.
func WithClaimPath(p string) Option {
	return func(c *config) { c.claimPath = p }
}

// WithData sets the consumer's identity: the bytes stored in our claim
// nodes (default recipes.ProcessID(), "host:pid"), to tell who holds an
// item. The bytes are copied; nil stores none. More than the session's
// request limit allows makes New fail with recipes.ErrDataTooLarge.
func WithData(b []byte) Option {
	return func(c *config) { c.data = append([]byte(nil), b...) }
}

// WithLossPolicy overrides the session's loss policy (see
// recipes.WithLossPolicy) for this queue's claims: under
// recipes.StepDownOnLost a claim's Context is not cancelled when the
// connection is suspended, only when the session is lost or, at the latest,
// at the session's lease deadline (recipes.ErrLeaseExpired), which still
// comes before any server can expire the session and hand the item to
// another consumer.
func WithLossPolicy(p recipes.LossPolicy) Option {
	return func(c *config) {
		if p == recipes.DefaultLossPolicy {
			c.policy = nil
			return
		}
		c.policy = &p
	}
}

// WithMaxItems bounds the queue for this producer: Put, PutPriority and
// PutAll first read the queue node's child count (1 exists, no listing)
// and fail with ErrFull, sending nothing more, when the items would exceed
// n. The bound is the producers' own discipline, not ZooKeeper's:
// producers that check at the same moment may together overshoot it by
// their number, and a claim path inside the queue's path (the default
// "<path>/taken") counts as one item once it exists. Its use: a queue
// shared with Curator consumers must stay below about 61,000 items, where
// a listing passes the ZooKeeper Java client's 1 MiB reply limit (see
// docs/bench.md, Scale). n must be positive: New fails with
// recipes.ErrBadArgument otherwise.
func WithMaxItems(n int) Option {
	return func(c *config) {
		c.maxItems = n
		if n <= 0 {
			c.maxItems = -1 // rejected by New
		}
	}
}
