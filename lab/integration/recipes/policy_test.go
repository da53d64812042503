package recipes_test

import (
	"errors"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// TestSpecPolicyDefaultIsSessions: a Spec whose Policy is left zero
// (DefaultLossPolicy) takes the Session's WithLossPolicy. Under
// StepDownOnLost the holding lives through a short cut of the connection
// (the same session comes back); under the Session's default,
// StepDownOnSuspend, the cut ends it with ErrSuspended. Before
// DefaultLossPolicy, the zero Policy was StepDownOnSuspend whatever the
// Session said, and the first case failed.
func TestSpecPolicyDefaultIsSessions(t *testing.T) {
	e := ensemble(t)
	for _, tc := range []struct {
		name      string
		opts      []recipes.Option
		wantAlive bool
	}{
		{"session step-down-on-lost", []recipes.Option{recipes.WithLossPolicy(recipes.StepDownOnLost)}, true},
		{"session default", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			link, err := e.NewLink("policy")
			if err != nil {
				t.Fatal(err)
			}
			defer link.Close()
			s := connect(t, link.Addrs(), append([]recipes.Option{recipes.WithSessionTimeout(6 * time.Second)}, tc.opts...)...)
			ctx := testutil.Ctx(t, time.Minute)
			h, err := recipes.Acquire(ctx, s, recipes.Spec{Path: testPath(t)})
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = h.Release(ctx) }()
			sid := s.ID()
			sub := s.Subscribe()
			defer sub.Close()
			if err := link.Cut(); err != nil {
				t.Fatal(err)
			}
			for { // the Session sees the connection go
				c, err := sub.Next(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if c.State == recipes.StateSuspended {
					break
				}
			}
			if err := link.Restore(); err != nil {
				t.Fatal(err)
			}
			for { // and come back under the same session
				c, err := sub.Next(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if c.State == recipes.StateLost {
					t.Fatalf("session lost during a short cut")
				}
				if c.State == recipes.StateReconnected || c.State == recipes.StateConnected {
					break
				}
			}
			if s.ID() != sid {
				t.Fatalf("session 0x%x after the cut, want 0x%x", s.ID(), sid)
			}
			cause := h.Err()
			switch {
			case tc.wantAlive && cause != nil:
				t.Fatalf("holding ended across a short cut under the Session's StepDownOnLost: %v", cause)
			case !tc.wantAlive && !errors.Is(cause, recipes.ErrSuspended):
				t.Fatalf("holding's cause after the cut: %v, want ErrSuspended (the Session's StepDownOnSuspend)", cause)
			}
		})
	}
}
