package inspect

import (
	"context"
	"fmt"
	"io"

	"github.com/zkrecipes/zkrecipes/internal/zkpath"
	"github.com/zkrecipes/zkrecipes/lock"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// Revocable returns the contenders to revoke at a lock or rwlock in
// Curator's dialect (the only one with a revocation protocol): the one
// named node, which must be a contender, or else every holder (the mutex's
// head, or an rwlock's writer or readers). It fails with ErrNotHeld when
// there is nothing to revoke. Pure.
func Revocable(rep *Report, node string) ([]Node, error) {
	if (rep.Kind != KindLock && rep.Kind != KindRWLock) || rep.Dialect != recipes.Curator.String() {
		return nil, fmt.Errorf("%w: %s is a %s (%s), and only Curator-dialect locks and rwlocks have a revocation protocol",
			ErrNotHeld, rep.Path, rep.Kind, rep.Dialect)
	}
	var out []Node
	for _, n := range rep.Contenders {
		if (node == "" && n.Holds) || (node != "" && n.Name == node) {
			out = append(out, n)
		}
	}
	if len(out) == 0 {
		if node != "" {
			return nil, fmt.Errorf("%w: %s is not a contender of %s", ErrNotHeld, node, rep.Path)
		}
		return nil, fmt.Errorf("%w: %s has no holder", ErrNotHeld, rep.Path)
	}
	return out, nil
}

// revoke asks the holders of the path (or the named contender) to release
// with lock.Revoke, the protocol lock.Mutex and rwlock.RWMutex follow under
// WithRevocation (and Curator's Revocable locks). Cost: Inspect's reads,
// then 1 setData per node revoked. It prints each revoked node; a holder
// without revocation enabled keeps holding (its fenced writes fail, since
// the node's version changed).
func (c *cli) revoke(ctx context.Context, s *recipes.Session, out io.Writer) error {
	rep, err := c.inspect(ctx, s)
	if err != nil {
		return err
	}
	ns, err := Revocable(rep, c.node)
	if err != nil {
		return err
	}
	for _, n := range ns {
		if err := lock.Revoke(ctx, s, zkpath.Join(rep.Path, n.Name)); err != nil {
			return err
		}
		if c.json {
			if err := WriteJSON(out, &revoked{Revoked: n.Path, Session: n.Session, Data: n.Data}); err != nil {
				return err
			}
			continue
		}
		if _, err := fmt.Fprintf(out, "revoked %s (session %s, data %s)\n", n.Path, n.Session, short(n.Data)); err != nil {
			return err
		}
	}
	return nil
}

// revoked is revoke's JSON output, one document per node.
type revoked struct {
	Revoked string `json:"revoked"`
	Session string `json:"session,omitempty"`
	Data    string `json:"data,omitempty"`
}
