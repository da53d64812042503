package rwlock

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/internal/zkpath"
	"github.com/zkrecipes/zkrecipes/lock"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// Participant is one contender of a read/write lock, in queue order.
type Participant struct {
	Node      string       // full path of the contender's node
	Role      recipes.Role // recipes.RoleRead or recipes.RoleWrite
	Data      []byte       // its data (Curator and this package: an identity)
	SessionID int64        // its ephemeral owner
}

// Participants lists the lock's contenders in queue order with their data.
// The holders are the first writer if it is first, or else every reader
// ahead of the first writer. In the kazoo dialect, kazoo Lock nodes (which
// block readers as writers do) are reported as RoleWrite. Cost: 1
// getChildren + 1 getData per contender; contenders that leave meanwhile are
// skipped.
func (m *RWMutex) Participants(ctx context.Context) ([]Participant, error) {
	if err := m.check(ctx); err != nil {
		return nil, err
	}
	d := m.cfg.Dialect
	cs, err := recipes.Contenders(ctx, m.s, d, m.path, recipes.RoleRead, recipes.RoleWrite)
	if err != nil {
		return nil, fmt.Errorf("rwlock: participants %s: %w", m.path, err)
	}
	out := make([]Participant, 0, len(cs))
	for _, c := range cs {
		if err := recipes.ContextError(ctx); err != nil {
			return nil, err
		}
		p := zkpath.Join(m.path, c.Name)
		data, st, err := m.s.Conn().Get(p)
		if errors.Is(err, zk.ErrNoNode) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("rwlock: participants %s: %w", m.path, recipes.Answer(err))
		}
		out = append(out, Participant{Node: p, Role: c.Role, Data: data, SessionID: st.EphemeralOwner})
	}
	return out, nil
}

// Revoke asks the holder of the node at nodePath (a full path, as listed by
// Participants or returned by a side's Node) to release, with Curator's
// protocol: it writes "__REVOKE__" into the node's data. It is
// lock.Revoke, shared by every recipe: a holder with WithRevocation sees
// its side's Revoked() closed and its context cancelled with
// recipes.ErrRevoked; any holder's fenced writes fail from then on. The
// lock is free only once the holder unlocks (or its session ends). Cost: 1
// setData.
func Revoke(ctx context.Context, s *recipes.Session, nodePath string) error {
	return lock.Revoke(ctx, s, nodePath)
}
