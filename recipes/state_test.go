package recipes

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestSubscriptionQueue(t *testing.T) {
	sub := newSubscription(nil)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	// Pushing never blocks, however many changes are queued.
	for i := range 1000 {
		sub.push(StateChange{State: State(i % 5), SessionID: int64(i)})
	}
	for i := range 1000 {
		c, err := sub.Next(ctx)
		if err != nil || c.SessionID != int64(i) {
			t.Fatalf("Next %d = %+v, %v", i, c, err)
		}
	}
	// A waiting reader is woken by a push from another goroutine.
	got := make(chan StateChange, 1)
	go func() {
		c, _ := sub.Next(ctx)
		got <- c
	}()
	sub.push(StateChange{State: StateSuspended, SessionID: 7})
	if c := <-got; c.State != StateSuspended || c.SessionID != 7 {
		t.Fatalf("woken with %+v", c)
	}
	// Queued changes are still delivered after the end, then the error.
	sub.push(StateChange{State: StateClosed})
	sub.finish(ErrClosed)
	if c, err := sub.Next(ctx); err != nil || c.State != StateClosed {
		t.Fatalf("after finish: %+v %v", c, err)
	}
	if _, err := sub.Next(ctx); !errors.Is(err, ErrClosed) {
		t.Fatalf("Next after the end = %v", err)
	}
	// A done ctx ends Next with its error and its cause.
	sub2 := newSubscription(nil)
	cctx, ccancel := context.WithCancelCause(context.Background())
	ccancel(ErrSuspended)
	if _, err := sub2.Next(cctx); !errors.Is(err, ErrSuspended) || !errors.Is(err, context.Canceled) {
		t.Fatalf("Next(cancelled) = %v", err)
	}
	sub2.Close()
	sub2.Close()
	var nilSub *Subscription
	nilSub.Close()
	if _, err := nilSub.Next(ctx); !errors.Is(err, ErrNilSession) {
		t.Fatalf("nil Next = %v", err)
	}
}

func TestStateStrings(t *testing.T) {
	for s, want := range map[State]string{
		StateConnecting: "connecting", StateConnected: "connected", StateSuspended: "suspended",
		StateReconnected: "reconnected", StateLost: "lost", StateClosed: "closed", State(42): "state(42)",
	} {
		if s.String() != want {
			t.Errorf("%d: %q", int(s), s.String())
		}
	}
	if StepDownOnSuspend.String() != "step-down-on-suspend" || StepDownOnLost.String() != "step-down-on-lost" {
		t.Error("LossPolicy strings")
	}
	if RoleLease.String() != "lease" || Role(9).String() != "role(9)" {
		t.Error("Role strings")
	}
}

func TestValidateOp(t *testing.T) {
	if err := validateOp(nil, 0); !errors.Is(err, ErrBadArgument) {
		t.Errorf("nil op: %v", err)
	}
	if err := validateOp(42, 0); !errors.Is(err, ErrBadArgument) {
		t.Errorf("int op: %v", err)
	}
}
