package group

import (
	"github.com/zkrecipes/zkrecipes/recipes"
)

// Option configures Join, Members and Watch.
type Option func(*config)

type config struct {
	data    []byte
	hasData bool
	kazoo   bool // kazoo's family: Party, or ShallowParty with shallow
	shallow bool
}

func newConfig(opts []Option) config {
	var c config
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	c.kazoo = c.kazoo || c.shallow // the shallow layout is kazoo's too
	return c
}

// WithData sets a member's payload: its node's data in Curator's layout
// (GroupMember's payload), returned as Info.Data. Default:
// recipes.ProcessID(), "host:pid" (Curator's own default is the host's
// address). The bytes are copied. Join fails with recipes.ErrBadArgument
// when it is combined with the kazoo dialect, whose node data is the
// member id; Members and Watch ignore it.
func WithData(b []byte) Option {
	return func(c *config) { c.data, c.hasData = append([]byte{}, b...), true }
}

// WithDialect selects the layout. recipes.Curator (the default, as every
// dialect of Curator's family) is Curator's GroupMember: a member is the
// ephemeral node "<path>/<id>" whose data is its payload, and every child
// of the path is a member. recipes.Kazoo is kazoo's Party: a member is the
// ephemeral node "<path>/<uuid hex32>__party__" whose data is its id
// (UTF-8), and only children whose name contains "__party__" are members.
//
// WithShallowParty, given anywhere among the options, overrides it.
func WithDialect(d recipes.Dialect) Option {
	return func(c *config) { c.kazoo = d.String() == recipes.Kazoo.String() }
}

// WithShallowParty selects kazoo's ShallowParty layout (the one kazoo's
// SetPartitioner keeps its members in): a member is the ephemeral node
// "<path>/<uuid hex32>-<id>" whose data is also its id (UTF-8), every child
// of the path is a member, and its id is the text of the child's name
// after the first "-" (the whole name when there is none), as kazoo reads
// it. The id becomes part of a node name, so it must be valid in one path
// segment (ErrInvalidID otherwise); WithData is refused
// (recipes.ErrBadArgument) and Update fails, as with kazoo's Party. It
// overrides WithDialect.
func WithShallowParty() Option {
	return func(c *config) { c.shallow = true }
}
