package recipes_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/recipes"
)

// errCaller is a cause of the caller's own, as a service would pass to
// context.WithCancelCause.
var errCaller = errors.New("caller: shutting down")

// wrapsCanceled is a cause that already says context.Canceled.
type wrapsCanceled struct{}

func (wrapsCanceled) Error() string { return "stop (canceled)" }
func (wrapsCanceled) Unwrap() error { return context.Canceled }

// TestContextError: the error for a done ctx matches both ctx.Err() and
// the caller's cause, whichever way the context ended.
func TestContextError(t *testing.T) {
	past := time.Now().Add(-time.Second)
	tests := []struct {
		name string
		ctx  func() (context.Context, context.CancelFunc)
		want []error // every one must match (errors.Is); nil: no error
		same error   // non-nil: the result must be exactly this value
	}{
		{
			name: "not done",
			ctx:  func() (context.Context, context.CancelFunc) { return context.WithCancel(context.Background()) },
		},
		{
			name: "cancelled without a cause",
			ctx: func() (context.Context, context.CancelFunc) {
				ctx, cancel := context.WithCancel(context.Background())
				cancel()
				return ctx, cancel
			},
			want: []error{context.Canceled},
			same: context.Canceled,
		},
		{
			name: "cancelled with a cause",
			ctx: func() (context.Context, context.CancelFunc) {
				ctx, cancel := context.WithCancelCause(context.Background())
				cancel(errCaller)
				return ctx, func() {}
			},
			want: []error{context.Canceled, errCaller},
		},
		{
			name: "cancelled with a nil cause",
			ctx: func() (context.Context, context.CancelFunc) {
				ctx, cancel := context.WithCancelCause(context.Background())
				cancel(nil)
				return ctx, func() {}
			},
			want: []error{context.Canceled},
			same: context.Canceled,
		},
		{
			name: "cause that wraps context.Canceled",
			ctx: func() (context.Context, context.CancelFunc) {
				ctx, cancel := context.WithCancelCause(context.Background())
				cancel(wrapsCanceled{})
				return ctx, func() {}
			},
			want: []error{context.Canceled},
			same: wrapsCanceled{},
		},
		{
			name: "deadline passed",
			ctx:  func() (context.Context, context.CancelFunc) { return context.WithDeadline(context.Background(), past) },
			want: []error{context.DeadlineExceeded},
			same: context.DeadlineExceeded,
		},
		{
			name: "deadline passed with a cause",
			ctx: func() (context.Context, context.CancelFunc) {
				return context.WithDeadlineCause(context.Background(), past, errCaller)
			},
			want: []error{context.DeadlineExceeded, errCaller},
		},
		{
			name: "parent cancelled with a cause",
			ctx: func() (context.Context, context.CancelFunc) {
				parent, cancelParent := context.WithCancelCause(context.Background())
				child, cancel := context.WithTimeout(parent, time.Hour)
				cancelParent(errCaller)
				return child, cancel
			},
			want: []error{context.Canceled, errCaller},
		},
		{
			name: "cancelled with a recipes sentinel",
			ctx: func() (context.Context, context.CancelFunc) {
				ctx, cancel := context.WithCancelCause(context.Background())
				cancel(recipes.ErrSuspended)
				return ctx, func() {}
			},
			want: []error{context.Canceled, recipes.ErrSuspended},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := tt.ctx()
			defer cancel()
			err := recipes.ContextError(ctx)
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("ContextError = %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatal("ContextError = nil for a done ctx")
			}
			for _, w := range tt.want {
				if !errors.Is(err, w) {
					t.Errorf("ContextError = %v, does not match %v", err, w)
				}
			}
			if tt.same != nil && err != tt.same {
				t.Errorf("ContextError = %#v, want exactly %#v", err, tt.same)
			}
		})
	}
}

// TestConnectCancelledWithCause: Connect with a ctx the caller cancelled
// with a cause fails before dialing with an error that matches both
// context.Canceled and the cause.
func TestConnectCancelledWithCause(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(errCaller)
	s, err := recipes.Connect(ctx, []string{"127.0.0.1:1"})
	if s != nil || !errors.Is(err, context.Canceled) || !errors.Is(err, errCaller) {
		t.Fatalf("Connect = %v, %v; want an error matching context.Canceled and the cause", s, err)
	}
}
