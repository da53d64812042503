// The registration's node: its create (replacing a node already at the path
// when asked), reading its czxid and stat, and the write that makes it ours.

package discovery

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/zkrecipes/internal/zkpath"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// readCzxid reads the czxid of the node at r's path, for a create whose
// reply the create tap missed (1 exists): the node read may already be
// another registrant's that replaced ours since, the one case in which
// Leave could delete (and Update write) a node that is not ours. 0
// when it cannot be read (Leave then deletes, and Update writes,
// whatever node is at the path).
func (r *Registration) readCzxid(ctx context.Context) int64 {
	st, err := r.stat(ctx)
	if err != nil || st == nil {
		return 0
	}
	return st.Czxid
}

// stat reads the stat of the node at r's path (1 exists, retried through
// recipes.Do), nil when there is none.
func (r *Registration) stat(ctx context.Context) (*zk.Stat, error) {
	return recipes.Do(ctx, r.d.s, func(conn *zk.Conn, _ int64) (*zk.Stat, error) {
		ok, st, err := conn.Exists(r.path)
		if err == nil && !ok {
			st = nil
		}
		return st, err
	})
}

// setOurs writes r.data to r's persistent node (Static, Permanent) only
// while it is the node this Registration created: its czxid is r.czxid
// (any node when that is unknown, 0). Each attempt reads the node's stat
// (1 exists) and writes at the version read (1 setData), reading again
// when the version changed meanwhile (or when a write's answer was lost:
// its repeat then fails on the version, and the next attempt writes the
// same data again). A node gone is created again, as ours (create without
// displacing); another registrant's node at the path is left alone and
// the error wraps zk.ErrNodeExists. ZooKeeper has no write conditional on
// a czxid: as for recipes.Session.DeleteOwned, the one round trip between the
// exists and the setData is the window in which a replacement, created
// with the very version read, would still be written. Errors: ctx's
// (Stopped), recipes.ErrClosed, or the server's answer. The caller holds
// r.op.
func (r *Registration) setOurs(ctx context.Context) error {
	for {
		st, err := r.stat(ctx)
		switch {
		case err != nil:
			return err
		case st == nil:
			taken, err := r.create(ctx, leaveIt)
			if err != nil || !taken {
				return err
			}
			continue // another registrant's node came first: look at it
		case r.czxid != 0 && st.Czxid != r.czxid:
			return fmt.Errorf("another registrant's node replaced ours: %w", zk.ErrNodeExists)
		}
		err = recipes.Exec(ctx, r.d.s, func(conn *zk.Conn, _ int64) error {
			_, err := conn.Set(r.path, r.data, st.Version)
			return err
		})
		if err == nil || !errors.Is(err, zk.ErrBadVersion) && !errors.Is(err, zk.ErrNoNode) {
			return err
		}
		// Changed or gone meanwhile: look again.
	}
}

// ifTaken says what create does with a node already at the path.
type ifTaken bool

const (
	leaveIt    ifTaken = false // leave it and report taken
	displaceIt ifTaken = true  // replace it with ours
)

// create writes r's persistent node (Static, Permanent) with r.data; the
// caller holds r.op. With displace, a node already at the path (another
// registrant's, or ours from a create whose answer was lost) is replaced
// by ours in one multi (a delete with its version, our create), at most
// maxDisplace times; without, it is left alone and create reports taken.
// Errors: ctx's (Stopped), recipes.ErrClosed, or the server's answer.
func (r *Registration) create(ctx context.Context, displace ifTaken) (taken bool, err error) {
	s := r.d.s
	parent, _ := zkpath.Split(r.path)
	for displaced := 0; ; {
		var czxid int64
		err := recipes.CreateUnder(ctx, s, parent, func(*zk.Conn, int64) error {
			var err error
			_, czxid, err = s.CreateTapped(r.path, r.data, r.mode, s.ACLFor(r.path))
			return err
		})
		switch {
		case err == nil:
			if czxid == 0 {
				czxid = r.readCzxid(ctx)
			}
			r.czxid = czxid
			return false, nil
		case !errors.Is(err, zk.ErrNodeExists):
			return false, err
		case displace == leaveIt:
			return true, nil
		case displaced >= maxDisplace:
			return false, fmt.Errorf("another client keeps a node at the path: %w", zk.ErrNodeExists)
		}
		displaced++
		st, err := r.stat(ctx)
		if err != nil {
			return false, err
		}
		if st == nil {
			continue // gone meanwhile
		}
		// The setData (same data, in the same transaction) answers with
		// the new node's stat, hence its czxid: the create tap does not
		// read multis. It leaves the node at data version 1.
		// Data too large to go twice in one request: no setData, and the
		// czxid is read afterwards (readCzxid).
		ops := []any{&zk.DeleteRequest{Path: r.path, Version: st.Version},
			&zk.CreateRequest{Path: r.path, Data: r.data, Acl: s.ACLFor(r.path), Flags: r.mode},
			&zk.SetDataRequest{Path: r.path, Data: r.data, Version: 0}}
		if recipes.CheckMulti(s.MaxData(), ops...) != nil {
			ops = ops[:2]
		}
		czxid = 0
		err = recipes.Exec(ctx, s, func(conn *zk.Conn, _ int64) error {
			res, err := conn.Multi(ops...)
			for _, op := range res {
				if op.Error != nil {
					return op.Error
				}
			}
			if err == nil && len(res) == 3 && res[2].Stat != nil {
				czxid = res[2].Stat.Czxid
			}
			return err
		})
		switch {
		case err == nil:
			if czxid == 0 {
				czxid = r.readCzxid(ctx)
			}
			r.czxid = czxid
			return false, nil
		case !errors.Is(err, zk.ErrNoNode) && !errors.Is(err, zk.ErrBadVersion):
			return false, err
		}
		// Changed or gone meanwhile (or our multi applied before a lost
		// answer): look again.
	}
}
