package cluster

import (
	"errors"
	"fmt"
	"path"
	"sort"

	"github.com/go-zookeeper/zk"
)

// Walk reads p and every node below it, depth first in name order, and
// calls visit with each node's path, stat and data; a node deleted
// meanwhile is skipped.
func Walk(conn *zk.Conn, p string, visit func(p string, st *zk.Stat, data []byte)) error {
	data, st, err := conn.Get(p)
	if err != nil {
		return err
	}
	visit(p, st, data)
	kids, _, err := conn.Children(p)
	if err != nil {
		return err
	}
	sort.Strings(kids)
	for _, k := range kids {
		if err := Walk(conn, path.Join(p, k), visit); err != nil && !errors.Is(err, zk.ErrNoNode) {
			return err
		}
	}
	return nil
}

// Ephemeral is an ephemeral node and the session that owns it.
type Ephemeral struct {
	Path  string
	Owner int64
}

// String is "<path> (session 0x<owner>)".
func (e Ephemeral) String() string { return fmt.Sprintf("%s (session 0x%x)", e.Path, e.Owner) }

// EphemeralNodes returns the ephemeral nodes under root, read through conn.
func EphemeralNodes(conn *zk.Conn, root string) ([]Ephemeral, error) {
	var out []Ephemeral
	err := Walk(conn, root, func(p string, st *zk.Stat, _ []byte) {
		if st.EphemeralOwner != 0 {
			out = append(out, Ephemeral{Path: p, Owner: st.EphemeralOwner})
		}
	})
	return out, err
}

// Ephemerals returns the ephemeral nodes under root, read through conn,
// each as Ephemeral.String.
func Ephemerals(conn *zk.Conn, root string) ([]string, error) {
	nodes, err := EphemeralNodes(conn, root)
	out := make([]string, len(nodes))
	for i, n := range nodes {
		out[i] = n.String()
	}
	return out, err
}
