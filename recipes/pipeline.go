package recipes

import (
	"context"
	"errors"
	"slices"
)

// Pipelined listing: an acquisition's first getChildren goes on the wire
// right behind its create, without waiting for the create's reply, so an
// uncontended acquisition takes one round trip instead of two.
//
// ZooKeeper answers one session's requests in the order it received them,
// and go-zookeeper writes them in the order they were queued. The Session's
// tap tells when the create's frame is being written (tap.Tap.WhenSent); the
// getChildren is queued only then, so it follows the create on the same
// connection, and the server lists the parent after our node was created.
// The listing is used only when that very create succeeded (no connection
// lost in between, no retry) and it shows our node; otherwise it is
// dropped and the parent is listed again, as without pipelining.
//
// Cost: the same requests as before (1 create + 1 getChildren when
// uncontended) in one round trip. It is used only under a parent a create
// of this Session succeeded under before (Session.liveParents): under a
// parent that may be missing, the listing would fail with the create and
// cost a request more.

// listing is a getChildren sent behind a create; done is closed when it
// was answered or will not be sent.
type listing struct {
	done     chan struct{}
	children []string
	err      error
	used     bool // the create it followed succeeded on that attempt
}

// errNotSent: the create ended before its frame was written.
var errNotSent = errors.New("recipes: pipelined listing not sent")

// startListing queues a getChildren of parent as soon as the tap sees the
// create of full written, unless created is closed first.
func startListing(s *Session, parent string, sent, created <-chan struct{}) *listing {
	l := &listing{done: make(chan struct{})}
	go func() {
		defer close(l.done)
		select {
		case <-sent:
			l.children, _, l.err = s.conn.Children(parent)
		case <-created:
			l.err = errNotSent
		}
	}()
	return l
}

// take returns the listing's children if it may stand for our first
// listing of n: the create it followed succeeded, it was answered, and it
// shows n. ok is false when the caller must list afresh; an error is
// ctx's.
func (l *listing) take(ctx context.Context, n *node) (children []string, ok bool, err error) {
	if l == nil || !l.used {
		return nil, false, nil
	}
	select {
	case <-l.done:
	case <-ctx.Done():
		return nil, false, ContextError(ctx)
	}
	if l.err != nil || !slices.Contains(l.children, n.name) {
		return nil, false, nil
	}
	return l.children, true, nil
}
