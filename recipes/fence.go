package recipes

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"
)

// Fence identifies one holding for fencing.
//
// Token is the czxid of the holding's node: ZooKeeper's zxids are unique and
// grow over the whole ensemble, and a holder's node is always created after
// the previous holder's node, so tokens strictly grow across successive
// holders of one lock. Storage that remembers the largest token it has seen
// can reject a stale holder; FencedMulti does better inside ZooKeeper.
//
// A Fence is an immutable value, safe to copy and share between goroutines.
type Fence struct {
	Token     int64  // czxid of our node
	Path      string // our node
	SessionID int64  // the session that owns it
	Version   int32  // our node's data version when acquired
}

// Valid reports whether f belongs to a holding (the zero Fence does not).
func (f Fence) Valid() bool { return f.Path != "" }

// Check returns the version check that guards a fenced transaction.
func (f Fence) Check() *zk.CheckVersionRequest {
	return &zk.CheckVersionRequest{Path: f.Path, Version: f.Version}
}

// FencedMulti runs ops (*zk.CreateRequest, *zk.SetDataRequest,
// *zk.DeleteRequest, *zk.CheckVersionRequest) in one multi after a version
// check of the fence's node, so ZooKeeper rejects the whole transaction once
// the holding is gone (node deleted with its session or released) or its
// node was written (revoked). A rejection wraps ErrFenced and the check's
// error (zk.ErrNoNode or zk.ErrBadVersion). Paths, data sizes and the size
// of the whole multi (MultiSize, against Session.MaxData) are validated
// before anything is sent (ErrInvalidPath, ErrDataTooLarge, ErrBadArgument:
// a nil op, typed nils such as (*zk.SetDataRequest)(nil) included, or one
// of another type). The returned responses are those of
// ops (the check's own is dropped). Cost: 1 multi; nothing is sent when the
// fence's session is already known to be lost.
func FencedMulti(ctx context.Context, s *Session, f Fence, ops ...any) ([]zk.MultiResponse, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	if !f.Valid() {
		return nil, fmt.Errorf("%w: zero fence", ErrFenced)
	}
	if err := ValidatePath(f.Path); err != nil {
		return nil, fmt.Errorf("%w: fence: %w", ErrBadArgument, err)
	}
	for _, op := range ops {
		if err := validateOp(op, s.opts.maxData); err != nil {
			return nil, err
		}
	}
	all := append([]any{f.Check()}, ops...)
	if err := CheckMulti(s.opts.maxData, all...); err != nil {
		return nil, fmt.Errorf("recipes: fenced multi: %w", err)
	}
	if err := ContextError(ctx); err != nil {
		return nil, err
	}
	if id := s.ID(); id != f.SessionID {
		return nil, fmt.Errorf("%w: %w: session 0x%x, now 0x%x", ErrFenced, ErrSessionLost, f.SessionID, id)
	}
	res, err := s.conn.Multi(all...)
	if len(res) > 0 && res[0].Error != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrFenced, f.Path, serverErr(res[0].Error))
	}
	if err != nil {
		if len(res) == 0 && (errors.Is(err, zk.ErrNoNode) || errors.Is(err, zk.ErrBadVersion)) {
			return nil, fmt.Errorf("%w: %s: %w", ErrFenced, f.Path, err)
		}
		if len(res) > 1 {
			res = res[1:]
		}
		return res, fmt.Errorf("recipes: fenced multi: %w", serverErr(err))
	}
	return res[1:], nil
}

func validateOp(op any, maxData int) error {
	if nilOp(op) {
		return fmt.Errorf("%w: nil op (%T)", ErrBadArgument, op)
	}
	switch o := op.(type) {
	case *zk.CreateRequest:
		if o.Flags&zk.FlagSequence != 0 {
			// A sequential create may end with "/" (the server appends).
			p := o.Path
			if len(p) > 1 && p[len(p)-1] == '/' {
				p += "0"
			}
			if err := ValidateWritePath(p); err != nil {
				return err
			}
		} else if err := ValidateWritePath(o.Path); err != nil {
			return err
		}
		return checkData(o.Data, maxData)
	case *zk.SetDataRequest:
		if err := ValidateWritePath(o.Path); err != nil {
			return err
		}
		return checkData(o.Data, maxData)
	case *zk.DeleteRequest:
		return ValidateWritePath(o.Path)
	case *zk.CheckVersionRequest:
		return ValidatePath(o.Path)
	}
	return fmt.Errorf("%w: unsupported multi op %T", ErrBadArgument, op)
}
