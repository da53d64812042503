package recipes

import (
	"context"

	"github.com/go-zookeeper/zk"
)

// DeleteGuaranteed deletes path in the background, retrying deletes whose
// outcome is unknown while session sid lives (any session when sid is 0)
// and the Session is open: the guaranteed delete. With sid set, path is
// deleted only while it is an ephemeral node of sid, with the version
// read, so a node another client has since created at the same path is
// left alone; with sid 0 it is deleted by path. Cost per attempt: 1
// exists + 1 delete with sid set, 1 delete without. Nothing happens on a
// nil or closed Session; no error is returned (failures are logged).
func (s *Session) DeleteGuaranteed(path string, sid int64) {
	if s.check() == nil {
		s.deleteInBackground(path, sid)
	}
}

// DeleteOwned deletes path only while the node there is still ours: the
// one created in transaction czxid (its Stat.Czxid; any when 0) and, with
// sid set, ephemeral of session sid. It is the delete for every node at a
// path that another process can reuse: a delete by path would remove a
// node another process created there after ours went away. Connection
// errors are retried as in Do (a repeat is safe: it checks again).
// ZooKeeper has no delete conditional on a czxid: the window that remains
// is the one round trip between the exists and the delete, in which
// another process would have to delete our node and create its own with
// the very data version read.
//
// Cost per attempt: 1 exists + 1 delete with the version read (read again
// when the version changed meanwhile). Errors: nil once no node of ours
// is left at path (deleted, gone, or the node there is not ours, left
// alone); the server's answer; or, when ctx ends or the Session closes
// first, an error that Stopped reports: the delete then goes on in the
// background (DeleteOwnedGuaranteed), except on a closed Session.
func (s *Session) DeleteOwned(ctx context.Context, path string, czxid, sid int64) error {
	err := Exec(ctx, s, func(_ *zk.Conn, _ int64) error { return s.deleteIfOurs(path, owner{czxid: czxid, sid: sid}) })
	if Stopped(err) {
		s.DeleteOwnedGuaranteed(path, czxid, sid)
	}
	return err
}

// DeleteOwnedGuaranteed is DeleteOwned in the background: retried while
// the Session is open and, with sid set, while session sid lives (with
// only czxid set, under any session: a persistent node outlives ours).
// Cost per attempt: 1 exists + 1 delete. Nothing happens on a nil or
// closed Session; no error is returned (failures are logged).
func (s *Session) DeleteOwnedGuaranteed(path string, czxid, sid int64) {
	if s.check() == nil {
		s.deleteOwnedInBackground(path, owner{czxid: czxid, sid: sid})
	}
}

// CleanupGUID deletes, in the background while the Session is open, every
// child of parent whose name carries guid in d's protected form: the late
// copies of an ambiguous CreateProtected. Cost: 1 getChildren + 1 delete
// per node found, per attempt. Nothing happens on a nil or closed
// Session; no error is returned.
func (s *Session) CleanupGUID(d Dialect, parent, guid string) {
	if s.check() == nil {
		s.cleanupGUID(d.orDefault(), parent, guid)
	}
}
