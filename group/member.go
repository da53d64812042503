package group

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/zkrecipes/zkrecipes/internal/zkpath"
	"github.com/zkrecipes/zkrecipes/persistent"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// partyLabel ends the names of kazoo Party members.
const partyLabel = "__party__"

// Member is this process's membership in a group: a persistent.Node that
// keeps its member node in ZooKeeper (created again after a session loss
// or a deletion by someone else) until Leave.
//
// Invariant: while Present() is not done, the member node existed with our
// session as its owner when last seen, so every listing of the group that
// started after it was seen includes this member.
//
// A Member is safe for concurrent use; it runs the one goroutine of its
// persistent.Node until Leave or the Session's close.
type Member struct {
	node  *persistent.Node
	id    string
	group string
	kazoo bool
}

// Join makes this process a member of the group at path with id, and
// returns once its member node exists (so that any listing from then on
// includes it), or fails when ctx ends first, leaving nothing behind.
//
// In Curator's layout (the default) the node is "<path>/<id>" with the
// payload (WithData) as data, and id must be one valid path segment; an id
// still held by another session's node (the previous incarnation of a
// restarted process, whose session has not expired yet, or another member
// with the same id) is waited for, and an error for ctx then also wraps
// persistent.ErrTaken. So a restarted member is listed again within one
// session timeout of its previous process's death. With
// WithDialect(recipes.Kazoo) the node is "<path>/<uuid hex32>__party__",
// unique to this Join, with id as data (kazoo's Party); with
// WithShallowParty it is "<path>/<uuid hex32>-<id>", with id as data
// (kazoo's ShallowParty), and id must be valid in one path segment.
//
// Cost: 1 create + 1 exists (+1 createContainer per missing level of path:
// the group node and its parents are container nodes, as Curator creates
// them, so ZooKeeper removes an empty group some time after its last
// member left). A done ctx sends nothing. Bad input fails at once, with
// nothing sent: a nil session (recipes.ErrNilSession), an invalid path or
// one in /zookeeper (recipes.ErrInvalidPath), an invalid id (ErrInvalidID),
// WithData with the kazoo dialect (recipes.ErrBadArgument), a node too
// large for the session's requests (recipes.ErrDataTooLarge).
func Join(ctx context.Context, s *recipes.Session, path, id string, opts ...Option) (*Member, error) {
	c := newConfig(opts)
	if s == nil {
		return nil, fmt.Errorf("group: %w", recipes.ErrNilSession)
	}
	if err := recipes.ValidateParentPath(path); err != nil {
		return nil, fmt.Errorf("group: %w", err)
	}
	if err := validateID(path, id, c); err != nil {
		return nil, err
	}
	data := []byte(recipes.ProcessID())
	node := zkpath.Join(path, id)
	switch {
	case c.kazoo && c.hasData:
		return nil, fmt.Errorf("group: %w: WithData with the kazoo dialect, whose member data is the id", recipes.ErrBadArgument)
	case c.shallow:
		data, node = []byte(id), zkpath.Join(path, shallowName(id))
	case c.kazoo:
		data, node = []byte(id), zkpath.Join(path, recipes.Kazoo.NewGUID()+partyLabel)
	case c.hasData:
		data = c.data
	}
	n, err := persistent.New(s, node, persistent.WithData(data))
	if err != nil {
		return nil, fmt.Errorf("group: join %s as %q: %w", path, id, err)
	}
	if err := n.Start(ctx); err != nil {
		_ = n.Leave(ctx)
		return nil, fmt.Errorf("group: join %s as %q: %w", path, id, err)
	}
	return &Member{node: n, id: id, group: path, kazoo: c.kazoo}, nil
}

// ValidateID checks a member id for Join on path with opts, as Join does,
// and sends nothing: an error wrapping ErrInvalidID (and
// recipes.ErrBadArgument or recipes.ErrInvalidPath) for an id that is
// empty or not valid UTF-8, or, in a layout where it names the member's
// node (Curator's, WithShallowParty), one that does not make a valid path
// segment under path. It does not check path itself (Join does). For
// recipes built on a group, which must refuse a bad id before they send
// anything. Pure.
func ValidateID(path, id string, opts ...Option) error {
	return validateID(path, id, newConfig(opts))
}

// validateID checks a member id: non-empty and valid UTF-8; in the layouts
// where it is part of the node's name, also one valid path segment under
// path.
func validateID(path, id string, c config) error {
	bad := func(why string, sentinel error) error {
		return fmt.Errorf("%w %q: %s: %w", ErrInvalidID, id, why, sentinel)
	}
	name := id
	switch {
	case id == "":
		return bad("empty", recipes.ErrBadArgument)
	case !utf8.ValidString(id):
		return bad("not valid UTF-8", recipes.ErrBadArgument)
	case c.shallow:
		name = shallowName(id)
	case c.kazoo:
		return nil
	}
	switch {
	case strings.Contains(id, "/"):
		return bad("not one path segment", recipes.ErrInvalidPath)
	case name == "." || name == "..":
		return bad("relative segment", recipes.ErrInvalidPath)
	}
	if err := recipes.ValidateWritePath(zkpath.Join(path, name)); err != nil {
		return fmt.Errorf("%w %q: %w", ErrInvalidID, id, err)
	}
	return nil
}

// shallowName is a ShallowParty member's node name: a fresh kazoo GUID
// (32 hex digits, no "-"), "-", the id.
func shallowName(id string) string { return recipes.Kazoo.NewGUID() + "-" + id }

// shallowID is the id kazoo reads from a ShallowParty child's name: the
// text after the first "-", or the whole name.
func shallowID(name string) string {
	if i := strings.IndexByte(name, '-'); i >= 0 {
		return name[i+1:]
	}
	return name
}

// ID returns the member id given to Join. No ZooKeeper calls.
func (m *Member) ID() string {
	if m == nil {
		return ""
	}
	return m.id
}

// Path returns the full path of the member node (its present incarnation,
// or the last one while it is absent). No ZooKeeper calls.
func (m *Member) Path() string {
	if m == nil {
		return ""
	}
	return m.node.Path()
}

// Data returns a copy of the member node's data: the payload in Curator's
// layout, the id in kazoo's. No ZooKeeper calls.
func (m *Member) Data() []byte {
	if m == nil {
		return nil
	}
	return m.node.Data()
}

// Present returns a context that is done while the member node may be
// absent (see persistent.Node.Present for the causes: recipes.ErrNodeDeleted,
// recipes.ErrSessionLost, recipes.ErrClosed, recipes.ErrReleased after
// Leave). A new one once the node is back. No ZooKeeper calls.
func (m *Member) Present() context.Context {
	if m == nil {
		ctx, cancel := context.WithCancelCause(context.Background())
		cancel(ErrNilMember)
		return ctx
	}
	return m.node.Present()
}

// Update replaces the member's payload (Curator's GroupMember.setThisData):
// on the present node now, and on every re-creation. It returns once the
// node carries it (waiting, while the node is absent, for its re-creation).
// Cost: 1 setData + 1 exists (see persistent.Node.SetData). In the kazoo
// layouts (Party, ShallowParty) the data is the id, which cannot change: recipes.ErrBadArgument.
// After Leave: ErrLeft.
func (m *Member) Update(ctx context.Context, data []byte) error {
	if m == nil {
		return ErrNilMember
	}
	if ctx == nil {
		return recipes.ErrNilContext
	}
	if m.kazoo {
		return fmt.Errorf("group: update %q: %w: a kazoo member's data is its id", m.id, recipes.ErrBadArgument)
	}
	err := m.node.SetData(ctx, data)
	if errors.Is(err, persistent.ErrClosed) {
		return fmt.Errorf("%w: %q in %s: %w", ErrLeft, m.id, m.group, err)
	}
	if err != nil {
		return fmt.Errorf("group: update %q in %s: %w", m.id, m.group, err)
	}
	return nil
}

// Leave deletes the member node (owner-checked) and stops keeping it;
// Present is done (recipes.ErrReleased) first. When ctx is done or the
// connection is suspended, the delete goes on in the background while the
// session lives, and Leave returns nil. Leaving again returns nil. Cost: 1
// exists + 1 delete. Every watcher of the group sees the change (1
// notification each).
func (m *Member) Leave(ctx context.Context) error {
	if m == nil {
		return ErrNilMember
	}
	if ctx == nil {
		return recipes.ErrNilContext
	}
	if err := m.node.Leave(ctx); err != nil {
		return fmt.Errorf("group: leave %s as %q: %w", m.group, m.id, err)
	}
	return nil
}
