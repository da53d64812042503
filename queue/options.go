package queue

// Dialect is the wire format of item names.
type Dialect int

const (
	// Curator (the default) names items "qn-<seq>": ZooKeeper's queue recipe
	// and Curator's SimpleDistributedQueue, which can share the path. With
	// WithPriority items are "qn-<ppp>-<seq>" (three-digit priority); only
	// this package orders those by priority, Curator sorts them by name.
	Curator Dialect = iota
	// Kazoo names items "entry-<ppp>-<seq>", as kazoo's Queue and
	// LockingQueue do (kazoo's LockingQueue keeps them under <path>/entries
	// and its claims under <path>/taken: use New(s, path+"/entries",
	// WithDialect(Kazoo), WithClaimPath(path+"/taken"))).
	Kazoo
)

// String returns the dialect's name.
func (d Dialect) String() string {
	if d == Kazoo {
		return "kazoo"
	}
	return "curator"
}

// Priorities: lower values are taken first (kazoo's convention).
const (
	MinPriority     = 0
	MaxPriority     = 999
	DefaultPriority = 100
)

// Option configures a Queue.
type Option func(*config)

type config struct {
	dialect   Dialect
	priority  bool
	claimPath string
	claimData []byte
}

// WithDialect selects the item name format (default Curator).
func WithDialect(d Dialect) Option {
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

// WithClaimPath sets the parent of claim nodes (default "<path>/taken",
// kazoo LockingQueue's name). Claim nodes are named after the item they
// claim.
func WithClaimPath(p string) Option {
	return func(c *config) { c.claimPath = p }
}

// WithClaimData sets the data written into our claim nodes (default
// "host:pid"), to tell who holds an item.
func WithClaimData(b []byte) Option {
	return func(c *config) { c.claimData = append([]byte(nil), b...) }
}
