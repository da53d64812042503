package recipes

import (
	"errors"

	"github.com/go-zookeeper/zk"
)

// "Delete if still ours": the delete for a node at a path that another
// process can reuse (a fixed path such as a discovery registration's,
// rather than a sequential node carrying our GUID). A delete by path, or
// with a version read just before, would remove a node that another
// process created at the path after ours went away; the node's czxid (the
// zxid of the transaction that created it) tells the two apart, and the
// create tap (internal/tap) learns it for free.

// owner says which node at a path is ours: the one created in transaction
// czxid (any, when 0) and, with sid set, ephemeral of session sid.
type owner struct {
	czxid int64
	sid   int64
}

// owns reports whether st is the stat of our node.
func (o owner) owns(st *zk.Stat) bool {
	return st != nil && (o.czxid == 0 || st.Czxid == o.czxid) && (o.sid == 0 || st.EphemeralOwner == o.sid)
}

// createTapped is one create of path, with the czxid of the node created
// read from the reply by the create tap (0 when the tap missed: unusual
// framing, or a reply lost with its connection). Cost: 1 create.
func (s *Session) createTapped(path string, data []byte, flags int32, acl []zk.ACL) (string, int64, error) {
	s.tap.Expect(path)
	created, err := s.conn.Create(path, data, flags, acl)
	czxid, tapped := s.tap.Take(path)
	if err != nil || !tapped {
		czxid = 0
	}
	return created, czxid, err
}

// deleteIfOurs deletes path only while the node there is ours (see owner):
// it reads the node's stat (1 exists) and, when the node is ours, deletes
// it with the version read (1 delete); a delete refused for its version
// (the node changed since the read) reads again. It returns nil once no
// node of ours is left at path: deleted now, gone already, or the node
// there is not ours, which is left alone. A connection error is returned as
// it came (the caller retries: a repeat is safe, as it checks again), any
// other error is the server's answer.
//
// The window that remains: ZooKeeper has no delete (nor check op) that is
// conditional on a czxid, only on the data version. Between our exists and
// our delete (one round trip) another process could delete our node and
// create its own at the same path, with the very data version we read (a
// fresh node has version 0, so for a node of ours never written since its
// create, a delete and create by the other process within that round trip
// suffice); our delete would then remove its node. Outside that round trip
// the czxid check holds: a node created at the path before our read is
// never deleted.
func (s *Session) deleteIfOurs(path string, own owner) error {
	for {
		ok, st, err := s.conn.Exists(path)
		switch {
		case err != nil:
			return err
		case !ok || !own.owns(st):
			return nil // gone, or not ours
		}
		err = s.conn.Delete(path, st.Version)
		switch {
		case err == nil, errors.Is(err, zk.ErrNoNode):
			return nil
		case errors.Is(err, zk.ErrBadVersion):
			continue // changed since the read: read again
		}
		return err
	}
}
