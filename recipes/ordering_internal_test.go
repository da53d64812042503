package recipes

import (
	"context"
	"errors"
	"testing"
)

// TestHoldingOrderings backs Holding's orderings (its doc): a receive from
// Revoked that returns finds Context done with ErrRevoked, and an OnLoss
// callback finds Context done. The revocation runs on another goroutine,
// as the Session's event callback does, so that the race detector and the
// check see the order the goroutines observe.
func TestHoldingOrderings(t *testing.T) {
	for range 200 {
		h := &Holding{node: &node{path: "/p/n"}, revoked: make(chan struct{})}
		h.ctx, h.cancel = h.lifetime()
		hookSaw := make(chan error, 1)
		h.OnLoss(func(error) { hookSaw <- h.ctx.Err() })
		go h.dataChanged(RevokeMessage, 1)
		<-h.Revoked()
		if err := context.Cause(h.ctx); !errors.Is(err, ErrRevoked) {
			t.Fatalf("Revoked closed while Context's cause is %v", err)
		}
		if err := <-hookSaw; err == nil {
			t.Fatal("an OnLoss callback ran before Context was done")
		}
	}
}
