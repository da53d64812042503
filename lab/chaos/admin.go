package chaos

import (
	"context"
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/lab/testenv"
)

// admin is the runner's own session, straight to the servers (no proxy):
// it makes and removes a scenario's root and looks for leftover nodes.
type admin struct {
	conn *zk.Conn
	st   time.Duration
}

func newAdmin(ctx context.Context, e *testenv.Ensemble, sessionTimeout time.Duration) (*admin, error) {
	conn, _, err := zk.Connect(e.DirectAddrs(), sessionTimeout, zk.WithLogger(nopLogger{}))
	if err != nil {
		return nil, fmt.Errorf("chaos: admin session: %w", err)
	}
	a := &admin{conn: conn, st: sessionTimeout}
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

// ensure makes p and its parents as persistent nodes.
func (a *admin) ensure(p string) error {
	cur := ""
	for _, part := range strings.Split(strings.Trim(p, "/"), "/") {
		cur += "/" + part
		_, err := a.conn.Create(cur, nil, 0, zk.WorldACL(zk.PermAll))
		if err != nil && !errors.Is(err, zk.ErrNodeExists) {
			return err
		}
	}
	return nil
}

// walk lists p and every node below it.
func (a *admin) walk(p string, visit func(p string, st *zk.Stat)) error {
	_, st, err := a.conn.Get(p)
	if err != nil {
		return err
	}
	visit(p, st)
	kids, _, err := a.conn.Children(p)
	if err != nil {
		return err
	}
	sort.Strings(kids)
	for _, k := range kids {
		if err := a.walk(path.Join(p, k), visit); err != nil && !errors.Is(err, zk.ErrNoNode) {
			return err
		}
	}
	return nil
}

// ephemerals returns the ephemeral nodes under root.
func (a *admin) ephemerals(root string) ([]string, error) {
	var out []string
	err := a.walk(root, func(p string, st *zk.Stat) {
		if st.EphemeralOwner != 0 {
			out = append(out, fmt.Sprintf("%s (session 0x%x)", p, st.EphemeralOwner))
		}
	})
	return out, err
}

// recordLeftovers records, as a nodes-left event, the ephemeral nodes
// under env.Root right after the workload closed every session: it syncs
// and lists at once, retrying only while its own connection is unusable or
// nodes remain, for at most a third of the session timeout. That is too
// short for any session the workload failed to close to expire, so its
// nodes are found, not waited away. A listing that fails is recorded as
// such (Value -1), never as zero nodes.
func (a *admin) recordLeftovers(ctx context.Context, env *Env) {
	deadline := time.Now().Add(a.st / 3)
	var left []string
	var err error
	for {
		if _, err = a.conn.Sync(env.Root); err == nil {
			left, err = a.ephemerals(env.Root)
		}
		if (err == nil && len(left) == 0) || time.Now().After(deadline) || ctx.Err() != nil {
			break
		}
		select {
		case <-ctx.Done():
		case <-time.After(50 * time.Millisecond):
		}
	}
	e := Event{Client: RunnerClient, Kind: KindNodesLeft, Value: int64(len(left)), Detail: strings.Join(left, ", ")}
	if err != nil {
		e.Value, e.Detail = -1, "cannot list: "+err.Error()
	}
	env.Rec.Add(e)
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
