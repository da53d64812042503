package recipes

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/go-zookeeper/zk"
)

// Squatting: another client may create a recipe's path before the
// application does, with an ACL of its choosing. Two cases:
//
//   - It keeps CREATE to itself: our creates under the path are refused
//     and the recipes fail at once with an error wrapping ErrNoAuth (a
//     refusal is final; nothing retries it).
//   - It leaves the path open (world:anyone with CREATE or DELETE). Our
//     nodes still carry our ACL, so nobody else can write them or change
//     their ACL, but ZooKeeper checks a delete against the parent's ACL,
//     not the node's: anyone can delete our contenders' and holders' nodes
//     (a lock's holder loses its node, the next waiter acquires), and
//     anyone can create under the path, so queue ahead of our contenders
//     or put items in our queue. For an authenticated Session
//     (WithDigestAuth), which means its nodes to be protected, the
//     protection would be void.
//
// So before its first create under a parent, an authenticated Session
// reads the parent's ACL (1 getACL) and, when it lets world:anyone create
// or delete children beyond what the Session's own ACL for that path
// (ACLFor) grants world:anyone, fails with an error wrapping ErrOpenParent
// before creating anything; with WithAllowOpenParents it logs a warning
// (once per parent and Session) and goes on. A parent that does not exist
// yet is not checked (the Session creates it with its own ACL) and is
// checked on the next create; nor is a parent whose ACL the Session may
// not read (getACL needs READ or ADMIN, and a least-privilege producer
// may hold CREATE alone). A Session without credentials checks
// nothing: its own nodes are world-open by default anyway.
//
// Invariant: a parent is in parentChecks.seen only after its ACL was read
// and found closed, or open and warned about, or refused to us (unread); the set holds at most
// maxCheckedParents paths, beyond which parents are read again on every
// create (and warned about again).

// maxCheckedParents bounds the parents a Session remembers as checked.
const maxCheckedParents = 4096

// parentChecks remembers the parents already checked. The zero value is
// empty and ready.
type parentChecks struct {
	mu   sync.Mutex
	seen map[string]struct{}
}

// done reports whether parent was checked already.
func (c *parentChecks) done(parent string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.seen[parent]
	return ok
}

// add remembers parent, within the bound; it reports whether parent was
// new (false when it was there already or the set is full).
func (c *parentChecks) add(parent string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.seen[parent]; ok {
		return false
	}
	if len(c.seen) >= maxCheckedParents {
		return true // not remembered: warned about again next time
	}
	if c.seen == nil {
		c.seen = make(map[string]struct{})
	}
	c.seen[parent] = struct{}{}
	return true
}

// forget drops parent from the set.
func (c *parentChecks) forget(parent string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.seen, parent)
}

// WithAllowOpenParents lets an authenticated Session (WithDigestAuth)
// create nodes under a parent whose ACL lets world:anyone create or
// delete children (beyond what the Session's own ACL for that path
// grants): it logs a warning, once per parent, instead of failing with
// ErrOpenParent. Anyone may then delete the Session's nodes under that
// parent and queue ahead of them (see the squatting notes in squat.go).
// No effect on a Session without credentials.
func WithAllowOpenParents() Option {
	return func(o *options) { o.allowOpenParents = true }
}

// childPerms are the permissions on a parent that let a client create or
// delete its children.
const childPerms = zk.PermCreate | zk.PermDelete

// worldChildPerms returns the child permissions acl gives world:anyone.
// Pure.
func worldChildPerms(acl []zk.ACL) int32 {
	var p int32
	for _, a := range acl {
		if a.Scheme == "world" && a.ID == "anyone" {
			p |= a.Perms & childPerms
		}
	}
	return p
}

// checkParent runs the squatting check for a create under parent (see
// above): nil at once for a Session without credentials or a parent
// already checked; else ctx's error, sending nothing, for a done ctx, or
// 1 getACL (sent again after a connection error).
// It fails with ErrOpenParent (unless WithAllowOpenParents), or with
// ctx's error. A parent whose ACL the Session may not read (getACL needs
// READ or ADMIN; a producer may hold CREATE alone) is not checked.
func (s *Session) checkParent(ctx context.Context, parent string) error {
	if len(s.opts.auth) == 0 || s.parents.done(parent) {
		return nil
	}
	for {
		// A done ctx sends nothing, even while the Session is usable
		// (waitUsable does not look at ctx then).
		if err := ContextError(ctx); err != nil {
			return err
		}
		if _, err := s.waitUsable(ctx); err != nil {
			return err
		}
		acl, _, err := s.conn.GetACL(parent)
		switch {
		case errors.Is(err, zk.ErrNoNode):
			return nil // we create it, with our ACL
		case isConnErr(err):
			if err := s.retryPause(ctx); err != nil {
				return err
			}
			continue
		case errors.Is(err, zk.ErrNoAuth):
			// getACL needs READ or ADMIN: a parent that grants the
			// Session CREATE alone (a producer's least privilege) cannot
			// be read. It is not checked; the create itself gets the
			// server's own answer.
			if s.parents.add(parent) {
				s.log.Debug("recipes: cannot read a parent's ACL; not checked for openness", "parent", parent)
			}
			return nil
		case err != nil:
			return fmt.Errorf("recipes: read the ACL of %s: %w", abridge(parent), serverErr(err))
		}
		// What the Session would open itself is the application's choice.
		extra := worldChildPerms(acl) &^ worldChildPerms(s.ACLFor(parent))
		switch {
		case extra == 0:
			s.parents.add(parent)
		case !s.opts.allowOpenParents:
			return fmt.Errorf("%w: %s lets anyone %s children (ACL %s); WithAllowOpenParents accepts that", ErrOpenParent, abridge(parent), childVerbs(extra), formatACL(acl))
		case s.parents.add(parent):
			s.log.Warn("recipes: an authenticated session creates under a parent that lets anyone create or delete children: anyone can delete its nodes there or queue ahead of them",
				"parent", parent, "acl", formatACL(acl))
		}
		return nil
	}
}

// childVerbs names the child permissions in p. Pure.
func childVerbs(p int32) string {
	switch p & childPerms {
	case zk.PermCreate:
		return "create"
	case zk.PermDelete:
		return "delete"
	}
	return "create and delete"
}
