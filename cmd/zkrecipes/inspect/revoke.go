package inspect

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/zkrecipes/zkrecipes/internal/zkpath"
	"github.com/zkrecipes/zkrecipes/lock"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// Revocable returns the contenders to revoke at a lock or rwlock in
// Curator's dialect (the only one with a revocation protocol): with node
// "" every holder (the mutex's head, or an rwlock's writer or readers);
// else the one contender node names (its child name, its path, or its
// ShortName when no other contender has the same). A named contender that
// does not hold is refused with ErrNotHolder unless force: the revoke
// marker replaces its data, which is all that says whose it is, and a
// client with revocation gives the lock up as soon as it gets it. It
// fails with ErrNotHeld when there is nothing to revoke. Pure.
func Revocable(rep *Report, node string, force bool) ([]Node, error) {
	if (rep.Kind != KindLock && rep.Kind != KindRWLock) || rep.Dialect != recipes.Curator.String() {
		return nil, fmt.Errorf("%w: %s is a %s (%s), and only Curator-dialect locks and rwlocks have a revocation protocol",
			ErrNotHeld, rep.Path, rep.Kind, rep.Dialect)
	}
	if node == "" {
		var out []Node
		for _, n := range rep.Contenders {
			if n.Holds {
				out = append(out, n)
			}
		}
		if len(out) == 0 {
			return nil, fmt.Errorf("%w: %s has no holder", ErrNotHeld, rep.Path)
		}
		return out, nil
	}
	var match []int
	for i, n := range rep.Contenders {
		if n.Name == node || n.Path == node {
			match = []int{i}
			break
		}
		if ShortName(n.Name) == node {
			match = append(match, i)
		}
	}
	switch {
	case len(match) == 0:
		return nil, fmt.Errorf("%w: %s is not a contender of %s", ErrNotHeld, node, rep.Path)
	case len(match) > 1:
		return nil, fmt.Errorf("%w: %s names %d contenders of %s: give the full name (show -o wide)", ErrUsage, node, len(match), rep.Path)
	}
	n := rep.Contenders[match[0]]
	if !n.Holds && !force {
		who := "no data"
		if n.Data != "" {
			who = "its data " + strings.TrimSpace(short(n.Data, TextOptions{}))
		}
		return nil, fmt.Errorf("%w: %s waits (place %d in line) and holds nothing; revoking writes %q over %s, so show no longer tells whose it is, "+
			"and a client with revocation gives the lock up as soon as it gets it (Curator's revocable locks: while still waiting). "+
			"Give -force to revoke it anyway", ErrNotHolder, n.Path, match[0]+1, recipes.RevokeMessage, who)
	}
	return []Node{n}, nil
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
	ns, err := Revocable(rep, c.node, c.force)
	if err != nil {
		return err
	}
	for _, n := range ns {
		if err := lock.Revoke(ctx, s, zkpath.Join(rep.Path, n.Name)); err != nil {
			return err
		}
		if c.json() {
			if err := WriteJSON(out, &revoked{Revoked: n.Path, Holds: n.Holds, Session: n.Session, Data: n.Data}); err != nil {
				return err
			}
			continue
		}
		state := "holder"
		if !n.Holds {
			state = "waiter (-force)"
		}
		if _, err := fmt.Fprintf(out, "revoked %s (%s, session %s, data %s)\n", n.Path, state, n.Session, short(n.Data, TextOptions{})); err != nil {
			return err
		}
	}
	return nil
}

// revoked is revoke's JSON output, one document per node.
type revoked struct {
	Revoked string `json:"revoked"`
	Holds   bool   `json:"holds"`
	Session string `json:"session,omitempty"`
	Data    string `json:"data,omitempty"`
}
