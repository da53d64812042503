package recipes

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"
)

// Check reads our node with the request that sets the holding's watch on
// it, and reports whether the holding stands: the node exists, is owned
// by the session the holding was acquired under, which is still the
// Session's, has not been written since it was acquired, and the holding
// has not ended. A node gone, owned by another session or written ends the
// holding (false). It is the owner check of a recipe that starts something
// on a holding (a leader's term), at no extra request: the watch that
// Context would set costs the same getData.
//
// Cost: 1 getData (none when the Session already watches the node). When
// the watch was already set by then (Context, Err or Revoked called
// before, or the Session watched the node at the acquisition), 1 exists
// instead. A connection error reports false (the watch is then set from
// the background, as Context does); an error is returned only for ctx's
// end, a closed Session, or an answer that retrying cannot fix.
func (h *Holding) Check(ctx context.Context) (bool, error) {
	if h == nil {
		return false, fmt.Errorf("%w: Check on a nil Holding", ErrBadArgument)
	}
	if ctx == nil {
		return false, ErrNilContext
	}
	if err := ContextError(ctx); err != nil {
		return false, err
	}
	if h.s.ID() != h.node.sid {
		return false, nil
	}
	first, res := false, armFailed
	var err error
	h.armOnce.Do(func() {
		first = true
		res, err = h.armStep(ctx)
		if res == armRetry || res == armFailed {
			h.s.background(h.arm) // as Context would: the watch is still wanted
		}
	})
	switch {
	case !first:
		return h.checkExists()
	case res == armSet:
		return h.s.ID() == h.node.sid && h.ctx.Err() == nil, nil
	case res == armFailed:
		if cerr := ContextError(ctx); cerr != nil {
			return false, cerr
		}
		if cerr := h.s.check(); cerr != nil {
			return false, cerr
		}
		return false, fmt.Errorf("recipes: owner check of %s: %w", h.node.path, serverErr(err))
	}
	return false, nil
}

// checkExists is Check once the watch was set otherwise: 1 exists.
func (h *Holding) checkExists() (bool, error) {
	sid := h.node.sid
	found, st, err := h.s.conn.Exists(h.node.path)
	switch {
	case err != nil && isConnErr(err):
		return false, nil
	case errors.Is(err, zk.ErrNoNode) || err == nil && !found:
		return false, nil
	case err != nil:
		return false, fmt.Errorf("recipes: owner check of %s: %w", h.node.path, serverErr(err))
	case st.EphemeralOwner != sid || h.s.ID() != sid:
		return false, nil
	}
	return h.ctx.Err() == nil, nil
}
