package group

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/zkrecipes/internal/zkpath"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// Info is one member of a group as listed.
type Info struct {
	// ID is the member id: the node's name in Curator's layout, its data
	// (UTF-8) in kazoo's Party, the name after its first "-" in kazoo's
	// ShallowParty.
	ID string
	// Data is the node's data: the payload in Curator's layout, the id's
	// bytes again in kazoo's.
	Data []byte
	// Node is the member node's full path.
	Node string
	// SessionID is the node's ephemeral owner: the member's session (0 for
	// a persistent node someone put there).
	SessionID int64
	// Czxid is the zxid of the node's creation: a member whose node was
	// created again (after a session loss) has a new, larger one.
	Czxid int64
	// Version is the data version: it grows with each Update.
	Version int32
}

func (i Info) equal(o Info) bool {
	return i.ID == o.ID && i.Node == o.Node && i.SessionID == o.SessionID && i.Czxid == o.Czxid &&
		i.Version == o.Version && bytes.Equal(i.Data, o.Data)
}

// Snapshot is a group's membership: its members sorted by ID (then by
// node, for kazoo members sharing an id).
type Snapshot []Info

// IDs returns the members' ids, in order.
func (s Snapshot) IDs() []string {
	ids := make([]string, len(s))
	for i, m := range s {
		ids[i] = m.ID
	}
	return ids
}

// Get returns the (first) member with id.
func (s Snapshot) Get(id string) (Info, bool) {
	for _, m := range s {
		if m.ID == id {
			return m, true
		}
	}
	return Info{}, false
}

func (s Snapshot) equal(o Snapshot) bool {
	return slices.EqualFunc(s, o, Info.equal)
}

func sortInfos(s Snapshot) {
	slices.SortFunc(s, func(a, b Info) int {
		if c := strings.Compare(a.ID, b.ID); c != 0 {
			return c
		}
		return strings.Compare(a.Node, b.Node)
	})
}

// lister reads a group in one layout.
type lister struct {
	s       *recipes.Session
	path    string
	kazoo   bool
	shallow bool
}

// newLister validates Members' and Watch's arguments.
func newLister(s *recipes.Session, path string, opts []Option) (*lister, error) {
	c := newConfig(opts)
	if s == nil {
		return nil, fmt.Errorf("group: %w", recipes.ErrNilSession)
	}
	if err := recipes.ValidatePath(path); err != nil {
		return nil, fmt.Errorf("group: %w", err)
	}
	return &lister{s: s, path: path, kazoo: c.kazoo, shallow: c.shallow}, nil
}

// isMember reports whether a child's name is a member node in the layout.
func (l *lister) isMember(name string) bool {
	return !l.kazoo || l.shallow || strings.Contains(name, partyLabel) // kazoo's own tests
}

// info makes a member's Info from its node.
func (l *lister) info(name string, data []byte, st *zk.Stat) Info {
	id := name
	switch {
	case l.shallow:
		id = shallowID(name)
	case l.kazoo:
		id = string(data)
	}
	return Info{ID: id, Data: data, Node: zkpath.Join(l.path, name), SessionID: st.EphemeralOwner,
		Czxid: st.Czxid, Version: st.Version}
}

// Members lists the group at path: every member node there when it was
// listed and still there when read. A path that does not exist is an empty
// group. Cost: 1 getChildren + 1 getData per member (kazoo's Party: per
// child whose name contains "__party__"; ShallowParty: per child); it sets no watch. A done ctx sends nothing.
// Bad input fails at once: a nil session (recipes.ErrNilSession), an
// invalid path (recipes.ErrInvalidPath). WithData is ignored.
func Members(ctx context.Context, s *recipes.Session, path string, opts ...Option) (Snapshot, error) {
	l, err := newLister(s, path, opts)
	if err != nil {
		return nil, err
	}
	names, err := recipes.Do(ctx, s, func(conn *zk.Conn, _ int64) ([]string, error) {
		names, _, err := conn.Children(path)
		return names, err
	})
	switch {
	case errors.Is(err, zk.ErrNoNode):
		return Snapshot{}, nil
	case err != nil:
		return nil, fmt.Errorf("group: members of %s: %w", path, err)
	}
	out := Snapshot{}
	for _, name := range names {
		if !l.isMember(name) {
			continue
		}
		type read struct {
			data []byte
			st   *zk.Stat
		}
		r, err := recipes.Do(ctx, s, func(conn *zk.Conn, _ int64) (read, error) {
			data, st, err := conn.Get(zkpath.Join(path, name))
			return read{data, st}, err
		})
		switch {
		case errors.Is(err, zk.ErrNoNode):
			continue // left meanwhile
		case err != nil:
			return nil, fmt.Errorf("group: members of %s: %w", path, err)
		}
		out = append(out, l.info(name, r.data, r.st))
	}
	sortInfos(out)
	return out, nil
}
