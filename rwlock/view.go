package rwlock

import (
	"context"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// View is one side of an RWMutex, its read lock or its write lock, with
// the method set of a lock.Mutex (Path, Lock, TryLock, Unlock, Context,
// Revoked, Fence, Node, FencedMulti, Participants), so that code written
// for a Mutex's shape takes either side. A View holds no state of its own:
// Reader and Writer return views of the same RWMutex, and its methods act
// on the RWMutex's read or write holding. A View is a small value: copy it
// freely; it is safe for concurrent use as its RWMutex is.
//
// Writer().Lock is Lock, Writer().Unlock is Unlock, and so on: the
// RWMutex's own methods are its write side, as with sync.RWMutex.
type View struct {
	m     *RWMutex
	write side
}

// Reader returns the read side of m. On a nil m, the View's methods that
// return an error return ErrNilReceiver.
func (m *RWMutex) Reader() View { return View{m: m} }

// Writer returns the write side of m: its methods are m's own.
func (m *RWMutex) Writer() View { return View{m: m, write: writeSide} }

// Path returns the lock's path.
func (v View) Path() string { return v.m.Path() }

// Lock waits until this side holds or ctx is done. On the write side it is
// RWMutex.Lock. On the read side it waits until no writer is ahead of our
// node. If ctx ends first, our node is deleted before Lock returns and the
// error is ctx's error; with an already-done ctx nothing is sent. Lock
// while holding the read lock returns ErrAlreadyHeld.
//
// Downgrade: the read side's Lock while this RWMutex holds the write lock
// succeeds at once (Curator's semantics): it creates our read node without
// waiting (cost: 1 create + 1 getData, and 1 getData in the background to
// watch the write node, whose loss now ends the read holding too). If the
// write holding is already lost (Context() done), it fails with its cause
// and sends nothing; if it is lost while the read node is created, the
// read node is deleted and Lock fails with that cause: it never returns
// nil with the read side's Context() already done. A later RWMutex.Unlock
// keeps the read holding; see Unlock.
//
// Cost on the read side: uncontended 1 create + 1 getChildren + 1 getData
// on our own node (its czxid; see the package doc for when it is skipped).
// Contended: 1 getData per writer ahead of us in the listing (we watch the
// nearest one; when it goes, the writers ahead of it are checked once
// each, most already gone), or 1 getChildren instead when a watched writer
// goes with more than two nodes of our listing still ahead. A reader holds
// without listing again when no writer of its listing is left ahead: nodes
// created since sort after it, and the only unsequenced nodes (a Curator
// 5.5+ downgrade's) are readers. If the session is lost while waiting,
// Lock starts over under the new session.
func (v View) Lock(ctx context.Context) error {
	if v.write {
		return v.m.lockWrite(ctx, waitTurn)
	}
	return v.m.lockRead(ctx, waitTurn)
}

// TryLock takes this side only if it would not wait. On the write side it
// is RWMutex.TryLock. The read side is taken only if no writer holds or
// waits for the path (a queued writer goes first: the queue is fair). It
// returns ErrLocked when one does, and then writes nothing (cost: 1
// getChildren). Uncontended cost: 1 getChildren + 1 create + 1
// getChildren + 1 getData (as for Lock). While this RWMutex holds the
// write lock the read side downgrades as Lock does.
func (v View) TryLock(ctx context.Context) error {
	if v.write {
		return v.m.lockWrite(ctx, tryOnce)
	}
	return v.m.lockRead(ctx, tryOnce)
}

// Unlock releases this side. On the write side it is RWMutex.Unlock. On
// the read side, the read holding's Context() is cancelled (cause
// recipes.ErrReleased), then our read node is deleted (and the write node
// kept by a downgrade, if any). Cost: 1 delete (2 with a kept write node).
// It wakes at most one process: the writer queued right behind our node.
// It answers as RWMutex.Unlock does: nil for a live read holding;
// ErrNotHeld without the read holding (nothing is sent); after the read
// holding was lost (Context() done, also by the loss of the write node it
// relied on after a downgrade), an error that errors.Is
// recipes.ErrReleased and the loss's cause.
func (v View) Unlock(ctx context.Context) error {
	if v.write {
		return v.m.Unlock(ctx)
	}
	return v.m.unlockRead(ctx)
}

// Context returns this side's holding's lifetime context (see
// RWMutex.Context): a context already cancelled with ErrNotHeld when the
// side holds nothing. A downgraded read holding also ends if our write
// node is lost (other than by our Unlock) while it still guards the read.
func (v View) Context() context.Context { return v.m.holdingCtx(v.write) }

// Revoked returns a channel closed when another process asked this side's
// holder to release (see Revoke). Only watched with WithRevocation; nil
// (never ready) when the side holds nothing.
func (v View) Revoked() <-chan struct{} {
	if h := v.m.recipesHolding(v.write); h != nil {
		return h.Revoked()
	}
	return nil
}

// Fence returns this side's fencing token (the zero Fence when it holds
// nothing). Write tokens strictly grow across successive writers; a
// reader's token is larger than every earlier writer's; concurrent
// readers' tokens are unordered among themselves.
func (v View) Fence() recipes.Fence {
	if h := v.m.recipesHolding(v.write); h != nil {
		return h.Fence()
	}
	return recipes.Fence{}
}

// Node returns the full path of this side's node while it holds, else "".
func (v View) Node() string {
	if h := v.m.recipesHolding(v.write); h != nil {
		return h.Path()
	}
	return ""
}

// FencedMulti runs ops in one multi together with a version check of this
// side's node, so ZooKeeper rejects them (error wrapping recipes.ErrFenced)
// once the holding is gone. Cost: 1 multi. When the side holds nothing it
// returns ErrNotHeld.
func (v View) FencedMulti(ctx context.Context, ops ...any) ([]zk.MultiResponse, error) {
	return v.m.fencedMulti(ctx, v.write, ops)
}

// Participants is RWMutex.Participants: both sides queue in one path.
func (v View) Participants(ctx context.Context) ([]Participant, error) {
	return v.m.Participants(ctx)
}
