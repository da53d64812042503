package rwlock

import (
	"github.com/zkrecipes/zkrecipes/recipes"
)

// Option configures an RWMutex.
type Option func(*config)

type config struct {
	dialect   recipes.Dialect
	data      []byte
	policy    *recipes.LossPolicy
	revocable bool
}

func newConfig(opts []Option) config {
	c := config{dialect: recipes.Curator, data: defaultData()}
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	return c
}

func (c config) lossPolicy(s *recipes.Session) recipes.LossPolicy {
	if c.policy != nil {
		return *c.policy
	}
	return s.LossPolicy()
}

// defaultData identifies this process: "host:pid".
func defaultData() []byte { return []byte(recipes.ProcessID()) }

// WithDialect selects the wire format: recipes.Curator (the default,
// Curator's InterProcessReadWriteLock: "_c_<uuid36>-__READ__<seq>" and
// "_c_<uuid36>-__WRIT__<seq>") or recipes.Kazoo (kazoo's ReadLock and
// WriteLock: "<uuid hex32>__rlock__<seq>" and "<uuid hex32>__lock__<seq>").
func WithDialect(d recipes.Dialect) Option {
	return func(c *config) { c.dialect = d }
}

// WithData sets the data stored in our nodes (default "host:pid"), shown by
// Participants.
func WithData(b []byte) Option {
	return func(c *config) { c.data = append([]byte(nil), b...) }
}

// WithLossPolicy overrides the session's loss policy for this lock's
// holdings.
func WithLossPolicy(p recipes.LossPolicy) Option {
	return func(c *config) { c.policy = &p }
}

// WithRevocation makes holdings watch their node for Curator's revocation
// message (cost: 1 getData per acquisition): Revoked() (write) or
// RRevoked() (read) is then closed, and the holding's context cancelled
// with recipes.ErrRevoked, when someone calls Revoke on the holder's node.
// This is the "recoverable shared lock" of ZooKeeper's recipes.
func WithRevocation() Option {
	return func(c *config) { c.revocable = true }
}
