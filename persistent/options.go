package persistent

import "github.com/zkrecipes/zkrecipes/recipes"

// Option configures a Node (New).
type Option func(*config)

type config struct {
	data      []byte
	protected bool
}

func newConfig(opts []Option) config {
	c := config{data: []byte(recipes.ProcessID())}
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	return c
}

// WithData sets the node's initial data (SetData replaces it later).
// Default: recipes.ProcessID(), "host:pid", so that an operator listing the
// parent sees who is there. The bytes are copied; a nil or empty slice
// makes an empty node. More than the session's request limit allows makes
// New fail with recipes.ErrDataTooLarge.
func WithData(b []byte) Option {
	return func(c *config) { c.data = append([]byte{}, b...) }
}

// WithProtected makes the node protected-sequential, as Curator's
// PersistentNode in mode PROTECTED_EPHEMERAL_SEQUENTIAL names it: New's
// path is "<parent>/<name>" and each incarnation of the node is an
// ephemeral sequential node "<parent>/_c_<uuid36>-<name><seq10>" with a
// fresh GUID, made by the core's protected create (a create whose outcome
// is unknown is resolved by finding our GUID among the parent's children).
// Each re-creation gets a new path (Path). Without it the node is a plain
// ephemeral node at New's path.
func WithProtected() Option {
	return func(c *config) { c.protected = true }
}
