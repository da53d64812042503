// Package lockopt is the configuration built by package lock's options
// and by package rwlock's, which are the same options under that
// package's name: both wrap the setters below in an opaque Option type of
// their own, and the options are documented once, in package lock.
package lockopt

import "github.com/zkrecipes/zkrecipes/recipes"

// Config is what lock's options set.
type Config struct {
	Dialect   recipes.Dialect
	Data      []byte              // stored in our nodes
	Policy    *recipes.LossPolicy // nil: the session's
	Revocable bool
}

// Set is one option: it sets a field of a Config.
type Set func(*Config)

// New applies the setters of opts (set returns an option's setter, nil
// for a zero option) over the defaults: recipes.Curator,
// recipes.ProcessID() as data, the session's loss policy, no revocation.
func New[O any](opts []O, set func(O) Set) Config {
	c := Config{Dialect: recipes.Curator, Data: []byte(recipes.ProcessID())}
	for _, o := range opts {
		if f := set(o); f != nil {
			f(&c)
		}
	}
	return c
}

// Dialect sets the wire format.
func Dialect(d recipes.Dialect) Set { return func(c *Config) { c.Dialect = d } }

// Data sets the bytes stored in our nodes (copied).
func Data(b []byte) Set {
	b = append([]byte(nil), b...)
	return func(c *Config) { c.Data = b }
}

// LossPolicy sets the holdings' loss policy; recipes.DefaultLossPolicy
// keeps the session's.
func LossPolicy(p recipes.LossPolicy) Set {
	return func(c *Config) {
		if p == recipes.DefaultLossPolicy {
			c.Policy = nil
			return
		}
		c.Policy = &p
	}
}

// Revocation makes holdings watch for Curator's revocation message.
func Revocation() Set { return func(c *Config) { c.Revocable = true } }

// LossPolicy returns the policy set by the options, else s's default.
func (c Config) LossPolicy(s *recipes.Session) recipes.LossPolicy {
	if c.Policy != nil {
		return *c.Policy
	}
	return s.LossPolicy()
}
