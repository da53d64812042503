package workloads

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"
	"github.com/google/uuid"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// brokenLock is a deliberately wrong lock for the suite's self-test: it
// creates its ephemeral sequential node and holds at once, ignoring every
// predecessor. Its fenced writes check its own node, which exists, so they
// pass: only mutual exclusion can catch it.
type brokenLock struct {
	s     *recipes.Session
	path  string
	node  string
	fence recipes.Fence
	held  context.Context
	stop  context.CancelCauseFunc
}

func (b *brokenLock) Lock(ctx context.Context) error {
	conn := b.s.Conn()
	p, err := conn.Create(b.path+"/_c_"+uuid.NewString()+"-lock-", nil, zk.FlagEphemeral|zk.FlagSequence, b.s.ACLFor(b.path))
	if err != nil {
		return err
	}
	_, st, err := conn.Get(p)
	if err != nil {
		_ = conn.Delete(p, -1)
		return err
	}
	b.node = p
	b.fence = recipes.Fence{Token: st.Czxid, Path: p, SessionID: st.EphemeralOwner, Version: st.Version}
	b.held, b.stop = context.WithCancelCause(context.Background())
	return nil
}

func (b *brokenLock) Unlock(context.Context) error {
	if b.node == "" {
		return errors.New("chaos: broken lock not held")
	}
	b.stop(recipes.ErrReleased)
	err := b.s.Conn().Delete(b.node, -1)
	b.node = ""
	return err
}

func (b *brokenLock) Context() context.Context { return b.held }

func (b *brokenLock) Fence() recipes.Fence { return b.fence }

func (b *brokenLock) FencedMulti(ctx context.Context, ops ...any) ([]zk.MultiResponse, error) {
	res, err := recipes.FencedMulti(ctx, b.s, b.fence, ops...)
	if err != nil {
		return res, fmt.Errorf("chaos: broken lock: %w", err)
	}
	return res, nil
}
