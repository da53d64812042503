package chaos

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/chaos/cluster"
	"github.com/zkrecipes/zkrecipes/chaos/history"
	"github.com/zkrecipes/zkrecipes/testenv"
)

// admin is the runner's own session, straight to the servers (no proxy),
// with the run's security (the workloads' identity, so it may delete what
// they made): it makes and removes a scenario's root and looks for
// leftover nodes.
type admin struct {
	conn *zk.Conn
	st   time.Duration
	acl  []zk.ACL
}

func newAdmin(ctx context.Context, e *testenv.Ensemble, sessionTimeout time.Duration, sec cluster.Security) (*admin, error) {
	conn, err := sec.Connect(e.DirectAddrs(), sessionTimeout, nil)
	if err != nil {
		return nil, fmt.Errorf("chaos: admin session: %w", err)
	}
	a := &admin{conn: conn, st: sessionTimeout, acl: sec.ACL()}
	for conn.State() != zk.StateHasSession {
		select {
		case <-ctx.Done():
			conn.Close()
			return nil, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	return a, nil
}

func (a *admin) close() { a.conn.Close() }

// ensure makes p and its parents as persistent nodes, with the run's ACL.
func (a *admin) ensure(p string) error {
	cur := ""
	for _, part := range strings.Split(strings.Trim(p, "/"), "/") {
		cur += "/" + part
		_, err := a.conn.Create(cur, nil, 0, a.acl)
		if err != nil && !errors.Is(err, zk.ErrNodeExists) {
			return err
		}
	}
	return nil
}

// recordLeftovers records, as a nodes-left event, the ephemeral nodes
// under env.Root right after the workload closed every session: it syncs
// and lists at once, retrying only while its own connection is unusable or
// nodes remain, for at most a third of the session timeout. That is too
// short for any session the workload failed to close to expire, so its
// nodes are found, not waited away. A listing that fails is recorded as
// such (Value -1), never as zero nodes.
//
// One exception: a node whose owner the history shows already expired (a
// client's session event "new" replaced it) is ZooKeeper's to delete, and
// the delete of an expiry can lag the client's new session while the
// ensemble recovers from a fault. While every node left is such a node, the
// check waits up to one more session timeout; one still there after that
// is left behind all the same.
func (a *admin) recordLeftovers(ctx context.Context, env *cluster.Env) {
	start := time.Now()
	deadline, expiredBound := start.Add(a.st/3), start.Add(a.st/3+a.st)
	expired := expiredSessions(env.Rec.History())
	var left []cluster.Ephemeral
	var err error
	for {
		if _, err = a.conn.Sync(env.Root); err == nil {
			left, err = cluster.EphemeralNodes(a.conn, env.Root)
		}
		if (err == nil && len(left) == 0) || ctx.Err() != nil {
			break
		}
		now := time.Now()
		if now.After(expiredBound) || (now.After(deadline) && (err != nil || !allOwnedBy(left, expired))) {
			break
		}
		select {
		case <-ctx.Done():
		case <-time.After(50 * time.Millisecond):
		}
	}
	names := make([]string, len(left))
	for i, n := range left {
		names[i] = n.String()
		if expired[n.Owner] {
			names[i] += " expired, not deleted " + time.Since(start).Round(time.Millisecond).String() + " after the workload closed"
		}
	}
	e := history.Event{Client: history.RunnerClient, Kind: history.KindNodesLeft, Value: int64(len(left)), Detail: strings.Join(names, ", ")}
	if err != nil {
		e.Value, e.Detail = -1, "cannot list: "+err.Error()
	}
	env.Rec.Add(e)
}

// expiredSessions returns the session ids that h shows replaced by a new
// session of the same client (Arg of a session event "new"): sessions the
// ensemble expired.
func expiredSessions(h history.History) map[int64]bool {
	out := map[int64]bool{}
	for _, e := range h.Events {
		if e.Kind == history.KindSession && e.Detail == "new" && e.Arg != 0 {
			out[e.Arg] = true
		}
	}
	return out
}

// allOwnedBy reports whether every node's owner is in sessions.
func allOwnedBy(nodes []cluster.Ephemeral, sessions map[int64]bool) bool {
	for _, n := range nodes {
		if !sessions[n.Owner] {
			return false
		}
	}
	return true
}

// removeAll deletes p and everything below it, best effort.
func (a *admin) removeAll(p string) {
	kids, _, err := a.conn.Children(p)
	if err != nil {
		return
	}
	for _, k := range kids {
		a.removeAll(path.Join(p, k))
	}
	_ = a.conn.Delete(p, -1)
}
