// Package lockopt is the configuration built by package lock's options.
// Package rwlock takes the very same options (rwlock.Option is
// lock.Option), so the two packages share one set of options, documented
// once, in package lock.
package lockopt

import "github.com/zkrecipes/zkrecipes/recipes"

// Config is what lock's options set.
type Config struct {
	Dialect   recipes.Dialect
	Data      []byte              // stored in our nodes
	Policy    *recipes.LossPolicy // nil: the session's
	Revocable bool
}

// New applies opts, skipping nil ones, over the defaults: recipes.Curator,
// recipes.ProcessID() as data, the session's loss policy, no revocation.
func New[O ~func(*Config)](opts []O) Config {
	c := Config{Dialect: recipes.Curator, Data: []byte(recipes.ProcessID())}
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	return c
}

// LossPolicy returns the policy set by the options, else s's default.
func (c Config) LossPolicy(s *recipes.Session) recipes.LossPolicy {
	if c.Policy != nil {
		return *c.Policy
	}
	return s.LossPolicy()
}
