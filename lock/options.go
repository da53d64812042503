package lock

import (
	"github.com/zkrecipes/zkrecipes/recipes"
)

// Option configures a Mutex or a Semaphore.
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

// WithDialect selects the wire format (default recipes.Curator).
func WithDialect(d recipes.Dialect) Option {
	return func(c *config) { c.dialect = d }
}

// WithData sets the data stored in our node (default "host:pid"), shown by
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
// message (cost: 1 getData per acquisition): Revoked() is then closed, and
// Context() cancelled with recipes.ErrRevoked, when someone calls Revoke on the
// holder's node.
func WithRevocation() Option {
	return func(c *config) { c.revocable = true }
}
