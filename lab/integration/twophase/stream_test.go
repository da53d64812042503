package twophase_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"github.com/zkrecipes/zkrecipes/recipes"
	"github.com/zkrecipes/zkrecipes/twophase"
)

// streamGoroutine matches the goroutine a Run stream runs.
func streamGoroutine(stack string) bool {
	return strings.Contains(stack, "zkrecipes/twophase.(*Site).stream") ||
		strings.Contains(stack, "zkrecipes/recipes.StartStream")
}

// errSiteDown is a participant's own cancellation cause.
var errSiteDown = errors.New("test: site shutting down")

// TestTransactionsStopWhileBlocked: a reader that takes one proposal and
// stops reading while the next is ready to be delivered (the stream's
// goroutine blocked on its send) calls Stop: the goroutine ends, nothing
// more is delivered, C is closed and Err is nil.
func TestTransactionsStopWhileBlocked(t *testing.T) {
	e := ensemble(t)
	cs := connect(t, e.Addrs())
	ctx := testCtx(t, time.Minute)
	root := testRoot(t)
	coord := newCoordinator(t, cs, root)
	for _, tx := range []string{"t1", "t2"} {
		if _, err := coord.Begin(ctx, tx, []string{"a"}, nil); err != nil {
			t.Fatal(err)
		}
	}
	p := newParticipant(t, connect(t, e.Addrs()), root, "a")
	stream := p.Run(ctx)
	if prop := <-stream.C; prop == nil || prop.TxID() != "t1" {
		t.Fatalf("first proposal %v", prop)
	}
	// t2 is examined (its liveness node created) and then waits on C: the
	// goroutine cannot go back to watching the root before sending it.
	waitFor(t, 10*time.Second, "t2 examined", func() bool { return exists(t, cs, root+"/t2/a/alive") })
	waitFor(t, 10*time.Second, "the stream blocked on its send", func() bool {
		gs := testutil.Goroutines(streamGoroutine)
		return len(gs) == 1 && strings.Contains(gs[0], " [select")
	})
	stream.Stop()
	if left := testutil.Settle(10*time.Second, streamGoroutine); len(left) > 0 {
		t.Fatalf("%d stream goroutines left after Stop:\n%s", len(left), strings.Join(left, "\n\n"))
	}
	if prop, ok := <-stream.C; ok {
		t.Fatalf("delivered %s after Stop", prop.TxID())
	}
	if err := stream.Err(); err != nil {
		t.Fatalf("Err after Stop = %v, want nil", err)
	}
}

// TestTransactionsReason: the stream says why it closed: ctx's error (both
// context.Canceled and the caller's cause) when the reader's ctx is
// cancelled with a cause, an error wrapping recipes.ErrClosed when the
// session is closed under it.
func TestTransactionsReason(t *testing.T) {
	e := ensemble(t)
	ctx := testCtx(t, time.Minute)
	root := testRoot(t)
	wait := func(s *recipes.Stream[*twophase.Proposal], what string) {
		t.Helper()
		waitFor(t, 10*time.Second, what, func() bool {
			select {
			case _, ok := <-s.C:
				return !ok
			default:
				return false
			}
		})
	}

	admin := connect(t, e.Addrs())
	cctx, cancel := context.WithCancelCause(ctx)
	byCtx := newParticipant(t, connect(t, e.Addrs()), root, "a").Run(cctx)
	waitFor(t, 10*time.Second, "the root created", func() bool { return exists(t, admin, root) })
	if err := byCtx.Err(); err != nil {
		t.Fatalf("Err while streaming = %v", err)
	}
	cancel(errSiteDown)
	wait(byCtx, "the stream to close after cancel")
	if err := byCtx.Err(); !errors.Is(err, context.Canceled) || !errors.Is(err, errSiteDown) {
		t.Fatalf("Err after cancel = %v, want context.Canceled and the cause", err)
	}

	bs := connect(t, e.Addrs())
	byClose := newParticipant(t, bs, root, "b").Run(ctx)
	waitFor(t, 10*time.Second, "the stream waiting on the root", func() bool {
		gs := testutil.Goroutines(streamGoroutine)
		return len(gs) == 1 && strings.Contains(gs[0], " [select")
	})
	if err := bs.Close(); err != nil {
		t.Fatal(err)
	}
	wait(byClose, "the stream to close with the session")
	if err := byClose.Err(); !errors.Is(err, recipes.ErrClosed) {
		t.Fatalf("Err after the session closed = %v, want ErrClosed", err)
	}
}
