package recipes

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/internal/zkpath"
)

// CreateUnder sends create, a write that makes nodes directly under
// parent (a create, or a multi of creates), through Exec, after the
// Session's squatting check of parent (CheckParent). When create fails
// with zk.ErrNoNode, CreateUnder creates parent and its missing ancestors
// as container nodes (EnsureParents), then checks parent and sends create
// again. It is the one create-under-a-parent loop of the recipes: every
// first create under a parent runs the check.
//
// Cost: what create sends, per attempt (connection errors are retried as
// in Do, so create must follow Do's rule on writes of unknown outcome);
// after zk.ErrNoNode, 1 createContainer per missing level, then create
// again; an authenticated Session's first create under parent adds 1
// getACL (2 when parent was missing). Errors: create's own answers other
// than zk.ErrNoNode (zk.ErrNodeExists and the like, with ErrNoAuth added
// to a refusal); an error wrapping ErrOpenParent from the check; a
// parent creation's refusal (ErrNoAuth, ErrInvalidPath, ErrDataTooLarge);
// or, without an answer (Stopped): ctx's error, ErrNilSession, ErrClosed.
func CreateUnder(ctx context.Context, s *Session, parent string, create func(conn *zk.Conn, sid int64) error) error {
	for {
		if err := s.CheckParent(ctx, parent); err != nil {
			return giveUp(ctx, err)
		}
		err := Exec(ctx, s, create)
		if !errors.Is(err, zk.ErrNoNode) || Stopped(err) {
			return err
		}
		if err := ContextError(ctx); err != nil {
			return stop{err}
		}
		if err := s.EnsureParents(parent); err != nil && !isConnErr(err) {
			return giveUp(ctx, fmt.Errorf("recipes: create parents of %s: %w", abridge(parent), err))
		}
	}
}

// giveUp marks err as Stopped when it is the end of ctx or of the Session
// rather than an answer.
func giveUp(ctx context.Context, err error) error {
	if ctx == nil || ctx.Err() != nil || errors.Is(err, ErrClosed) || errors.Is(err, ErrNilSession) {
		return stop{err}
	}
	return err
}

// CheckParent is the Session's squatting check before a create under
// parent (see WithAllowOpenParents): for an authenticated Session, the
// first time for each parent, 1 getACL (sent again after a connection
// error); a parent that lets anyone create or delete children is refused
// with an error wrapping ErrOpenParent, or logged as a warning under
// WithAllowOpenParents. A parent that does not exist yet is checked again
// on the next create. Cost: nothing for a Session without credentials or
// a parent checked already. Errors: ErrOpenParent, the server's answer,
// ctx's error, ErrNilSession, ErrClosed. CreateUnder runs it; a recipe
// with its own create loop calls it before each create.
func (s *Session) CheckParent(ctx context.Context, parent string) error {
	if err := s.check(); err != nil {
		return err
	}
	if err := ContextError(ctx); err != nil {
		return err
	}
	return s.checkParent(ctx, parent)
}

// EnsureParents creates the missing levels of p, p included, as container
// nodes (deepest first on zk.ErrNoNode). It is not retried: a connection
// error is returned, and the caller's loop tries its create again.
// Cost: 1 createContainer per level tried; nothing is sent for "/".
// Errors: the server's answer (ErrNoAuth added to a refusal); a
// connection error; ErrInvalidPath for an invalid p (see
// ValidateParentPath, the /zookeeper tree included) and ErrDataTooLarge
// for one whose create would exceed MaxData, nothing sent; ErrNilSession,
// ErrClosed.
func (s *Session) EnsureParents(p string) error {
	if err := s.check(); err != nil {
		return err
	}
	if err := ValidateParentPath(p); err != nil {
		return err
	}
	if err := CheckRequest(s.opts.maxData, &zk.CreateRequest{Path: p, Acl: s.ACLFor(p), Flags: zk.FlagContainer}); err != nil {
		return fmt.Errorf("recipes: create %s: %w", abridge(p), err)
	}
	return serverErr(ensureParents(s, p))
}

// CreateTapped creates path once and returns the path created and the
// czxid of the new node, which the Session's create tap reads from the
// reply at no cost; czxid is 0 when the tap missed it (then read the
// node's stat, knowing that another process may have replaced it since).
// For a node at a path that another process can reuse, whose later delete
// must go through DeleteOwned. Cost: 1 create. Errors: the create's own,
// or ErrNilSession / ErrClosed (nothing sent).
func (s *Session) CreateTapped(path string, data []byte, flags int32, acl []zk.ACL) (string, int64, error) {
	if err := s.check(); err != nil {
		return "", 0, err
	}
	return s.createTapped(path, data, flags, acl)
}

// Protected is a node made by CreateProtected.
type Protected struct {
	Path      string // full path, sequence included
	GUID      string // the GUID its name carries
	SessionID int64  // its ephemeral owner: the session current at its creation
	Czxid     int64  // its czxid, 0 when the create's reply did not say
	// Ambiguous: a create's outcome was unknown on the way, so a late copy
	// carrying GUID may still appear under the parent; CleanupGUID removes
	// such copies.
	Ambiguous bool
}

// CreateProtected creates parent/<label in d's protected form for a fresh
// GUID><seq10> ("_c_<uuid36>-<label><seq10>" for Curator, "<uuid
// hex32><label><seq10>" for kazoo) as an ephemeral sequential node: the
// protected create. A create whose outcome is unknown is resolved by
// listing the parent for our GUID, a node found under an older session is
// deleted and the create tried again, missing parents are created as
// containers. It returns once the node's owner is known to be the current
// session; a node we could no longer look for when ctx ended is deleted
// in the background.
//
// Cost: 1 create (+1 createContainer per missing parent level; an
// ambiguous create: 1 sync + 1 getChildren + 1 exists; an authenticated
// Session's first create under parent: +1 getACL, see CheckParent).
// Errors: ErrOpenParent from the check; ErrInvalidPath for an invalid
// parent or a label that is not part of one path segment,
// ErrDataTooLarge for a create larger than the Session's MaxData, ctx's
// error for a done ctx, all with nothing sent; the server's answer;
// ErrNilSession, ErrClosed.
func (s *Session) CreateProtected(ctx context.Context, d Dialect, parent, label string, data []byte) (Protected, error) {
	if err := s.checkCtx(ctx); err != nil {
		return Protected{}, err
	}
	d = d.orDefault()
	guid := d.NewGUID()
	prefix := d.protect(guid, label)
	full := zkpath.Join(parent, prefix) + "0000000000"
	if err := ValidateParentPath(parent); err != nil {
		return Protected{}, err
	}
	if strings.Contains(label, "/") {
		return Protected{}, fmt.Errorf("%w %q: label %q is not one path segment", ErrInvalidPath, abridge(full), label)
	}
	if err := ValidateWritePath(full); err != nil {
		return Protected{}, err
	}
	if err := CheckRequest(s.opts.maxData, &zk.CreateRequest{Path: full, Data: data, Acl: s.ACLFor(zkpath.Join(parent, prefix)), Flags: zk.FlagEphemeralSequential}); err != nil {
		return Protected{}, fmt.Errorf("recipes: create %s: %w", abridge(full), err)
	}
	if err := ContextError(ctx); err != nil {
		return Protected{}, err
	}
	n, err := createPrefixed(ctx, s, d, 0, parent, guid, prefix, data)
	if err != nil {
		return Protected{}, err
	}
	p := Protected{Path: n.path, GUID: guid, SessionID: n.sid, Ambiguous: n.ambiguous}
	if n.statted {
		p.Czxid = n.czxid
	}
	return p, nil
}

// WatchExistsNow is WatchExists with the answer read now, even when the
// Session's exists watch on path is already armed (then it subscribes to
// that watch and sends a plain exists): for an owner check that must not
// trust an answer from before a reconnection. A single attempt. Cost: 1
// exists. Errors: connection errors as they come, the server's answer,
// ctx's error, ErrNilSession, ErrClosed.
func (s *Session) WatchExistsNow(ctx context.Context, path string) (bool, *zk.Stat, *Watch, error) {
	if err := s.checkCtx(ctx); err != nil {
		return false, nil, nil, err
	}
	return s.watchExistsNow(ctx, path)
}
