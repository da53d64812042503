package recipes

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/internal/zkpath"
)

// node is our own contender node as the core knows it.
type node struct {
	parent string
	guid   string
	name   string
	path   string
	seq    int32
	sid    int64 // the session that owns the node
	// verified: the owner is known to be sid (the create succeeded with the
	// session id unchanged, or a stat said so).
	verified bool
	czxid    int64
	version  int32
	statted  bool // czxid and version are known
	// ambiguous: a create's outcome was unknown at some point, so another
	// node with our GUID might still appear; it is cleaned up on release.
	ambiguous bool
	dialect   Dialect
}

// createProtected creates parent/prefix<seq> as an ephemeral sequential
// node whose name carries guid, and returns it once its owner is known to be
// the current session.
//
// Cost: 1 create (its reply's zxid, read by the Session's create tap, is
// the czxid, so no stat is needed); an authenticated Session's first create
// under parent adds 1 getACL (2 when parent is missing; see checkParent in
// squat.go), and fails with ErrOpenParent under a parent open to anyone. ErrNoNode: createContainer for each missing parent level,
// then the create again. An ambiguous result (connection lost with the
// create in flight): 1 sync + 1 getChildren to find our GUID, plus 1 exists
// for a node found (to learn its owner; a node of an older session is
// deleted and the create retried). A node we can no longer look for (ctx
// done) is cleaned up in the background while the session lives.
func createProtected(ctx context.Context, s *Session, d Dialect, role Role, parent, guid string, data []byte) (*node, error) {
	prefix, err := d.NodePrefix(guid, role)
	if err != nil {
		return nil, err
	}
	return createPrefixed(ctx, s, d, role, parent, guid, prefix, data)
}

// createPrefixed is createProtected for a name prefix already made
// (NodePrefix, or the dialect's protected form of a free label); role only
// serves to parse the sequence of the node created (0 for none).
func createPrefixed(ctx context.Context, s *Session, d Dialect, role Role, parent, guid, prefix string, data []byte) (*node, error) {
	n, _, err := createListed(ctx, s, d, role, parent, guid, prefix, data, createOnly)
	return n, err
}

// listAfter says whether createListed pipelines the parent's first
// listing behind the create.
type listAfter bool

const (
	createOnly    listAfter = false // the create alone
	createAndList listAfter = true  // the create, then the parent's listing
)

// createListed is createPrefixed that, with createAndList and under a parent
// known to exist, also sends the first listing of parent right behind the
// create (pipeline.go); the listing returned may be nil.
func createListed(ctx context.Context, s *Session, d Dialect, role Role, parent, guid, prefix string, data []byte, list listAfter) (*node, *listing, error) {
	full := zkpath.Join(parent, prefix)
	ambiguous := false
	for attempt := 0; ; attempt++ {
		if err := s.checkParent(ctx, parent); err != nil {
			return nil, nil, err
		}
		sid, err := s.waitUsable(ctx)
		if err != nil {
			return nil, nil, err
		}
		s.tap.Expect(full)
		var l *listing
		var createDone chan struct{}
		if list == createAndList && attempt == 0 && s.liveParents.done(parent) {
			createDone = make(chan struct{})
			l = startListing(s, parent, s.tap.WhenSent(full), createDone)
		}
		created, err := s.conn.Create(full, data, zk.FlagEphemeralSequential, s.ACLFor(full))
		if createDone != nil {
			close(createDone)
		}
		czxid, tapped := s.tap.Take(full)
		switch {
		case err == nil:
			s.liveParents.add(parent)
			n := newNode(d, role, parent, guid, created, sid)
			n.ambiguous = ambiguous
			if tapped {
				// The create's reply zxid is the node's czxid; a fresh
				// node's data version is 0.
				n.czxid, n.statted = czxid, true
			}
			n.verified = s.ID() == sid
			if n.verified {
				if l != nil {
					l.used = true
				}
				return n, l, nil
			}
			if err := adopt(ctx, s, n); err != nil {
				if errors.Is(err, errRetry) {
					continue
				}
				return nil, nil, err
			}
			return n, nil, nil
		case errors.Is(err, zk.ErrNoNode):
			s.liveParents.forget(parent)
			if err := ensureParents(s, parent); err != nil && !isConnErr(err) {
				return nil, nil, fmt.Errorf("recipes: create parents of %s: %w", full, serverErr(err))
			}
		case errors.Is(err, zk.ErrSessionExpired):
			// Answered for an expired session: the node cannot exist.
			if err := s.retryPause(ctx); err != nil {
				return nil, nil, err
			}
		case isConnErr(err):
			ambiguous = true
			n, err := findOwn(ctx, s, d, role, parent, guid)
			if err != nil {
				s.cleanupGUID(d, parent, guid)
				return nil, nil, err
			}
			if n != nil {
				n.ambiguous = true
				return n, nil, nil
			}
		default:
			return nil, nil, fmt.Errorf("recipes: create %s: %w", full, serverErr(err))
		}
		if err := ContextError(ctx); err != nil {
			s.cleanupGUID(d, parent, guid)
			return nil, nil, err
		}
	}
}

// errRetry tells createProtected's loop to create again.
var errRetry = errors.New("recipes: retry")

func newNode(d Dialect, role Role, parent, guid, created string, sid int64) *node {
	_, name := zkpath.Split(created)
	n := &node{parent: parent, guid: guid, name: name, path: created, sid: sid, dialect: d}
	if c, ok := d.Parse(name, role); ok {
		n.seq = c.Seq
	}
	return n
}

// adopt stats n and keeps it only if the current session owns it; a node of
// another (older) session is deleted and errRetry returned. Cost: 1 exists
// (+1 delete).
func adopt(ctx context.Context, s *Session, n *node) error {
	for {
		sid, err := s.waitUsable(ctx)
		if err != nil {
			s.deleteInBackground(n.path, 0)
			return err
		}
		ok, st, err := s.conn.Exists(n.path)
		switch {
		case isConnErr(err):
			if err := s.retryPause(ctx); err != nil {
				s.deleteInBackground(n.path, 0)
				return err
			}
			continue
		case err != nil:
			return fmt.Errorf("recipes: exists %s: %w", n.path, serverErr(err))
		case !ok:
			return errRetry
		case st.EphemeralOwner != sid:
			s.deleteNow(n.path)
			return errRetry
		}
		n.sid, n.verified = sid, true
		n.czxid, n.version, n.statted = st.Czxid, st.Version, true
		return nil
	}
}

// findOwn resolves an ambiguous create: it lists parent (after a sync, so
// the server has seen every committed create) and returns our node if the
// create was applied, or nil if it was not. Extra nodes with our GUID are
// deleted.
func findOwn(ctx context.Context, s *Session, d Dialect, role Role, parent, guid string) (*node, error) {
	for {
		sid, err := s.waitUsable(ctx)
		if err != nil {
			return nil, err
		}
		if _, err := s.conn.Sync(parent); isConnErr(err) {
			if err := s.retryPause(ctx); err != nil {
				return nil, err
			}
			continue
		}
		children, _, err := s.conn.Children(parent)
		switch {
		case isConnErr(err):
			if err := s.retryPause(ctx); err != nil {
				return nil, err
			}
			continue
		case errors.Is(err, zk.ErrNoNode):
			return nil, nil
		case err != nil:
			return nil, fmt.Errorf("recipes: list %s: %w", parent, serverErr(err))
		}
		var mine []string
		for _, c := range children {
			if d.HasGUID(c, guid) {
				mine = append(mine, c)
			}
		}
		slices.Sort(mine)
		var found *node
		for _, name := range mine {
			n := newNode(d, role, parent, guid, zkpath.Join(parent, name), sid)
			if found == nil {
				err := adopt(ctx, s, n)
				if err == nil {
					found = n
					continue
				}
				if !errors.Is(err, errRetry) {
					return nil, err
				}
				continue
			}
			s.deleteNow(n.path)
		}
		return found, nil
	}
}

// ensureParents creates the missing levels of p as container nodes, deepest
// first. Cost: 1 createContainer per level tried.
func ensureParents(s *Session, p string) error {
	if p == "/" {
		return nil
	}
	_, err := s.conn.CreateContainer(p, nil, zk.FlagContainer, s.ACLFor(p))
	switch {
	case err == nil, errors.Is(err, zk.ErrNodeExists):
		return nil
	case errors.Is(err, zk.ErrNoNode):
		parent, _ := zkpath.Split(p)
		if err := ensureParents(s, parent); err != nil {
			return err
		}
		return ensureParents(s, p)
	}
	return err
}
