package partition_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/internal/hooks"
	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
)

// TestRebalanceAfterShareTaken: a member has taken every lock of its share
// when the members change, before its allocation loop has read that the
// locks are taken. Run's guarantee is the same as in
// TestRebalanceWhileTakingShare ("when the members change meanwhile,
// release what was taken and go back to 1"), at its last instant: a share
// taken under the old members is stale even when nothing failed, and must
// be given back. A member that handed it over anyway would hold an item of
// another member's new share, the change already consumed, so nothing
// would end its Partition while the group holds still: the other member
// waits for that lock for good.
//
// The hook (internal/hooks.SetAfterShareTaken) holds a's lock-taking
// goroutine, both locks taken, until a's allocation loop has seen b join
// and cancelled the allocation's context: the change and the taken share
// reach the loop in that order on every run.
func TestRebalanceAfterShareTaken(t *testing.T) {
	testutil.RequireHooks(t)
	e := ensemble(t)
	ctx := ctxT(t, 2*time.Minute)
	path := testPath(t)
	admin := connect(t, e.Addrs())
	items := itemsN(2) // a alone takes both; a and b: a item-0, b item-1 (Stride)
	taken := make(chan struct{})
	var fired atomic.Bool
	seen := make(chan error, 1) // how a's hold ended: nil once a saw the change
	t.Cleanup(hooks.SetAfterShareTaken(func(actx context.Context, p string) {
		if p != path || !fired.CompareAndSwap(false, true) {
			return // every allocation after a's first
		}
		close(taken)
		select {
		case <-actx.Done():
			seen <- nil
		case <-time.After(30 * time.Second):
			seen <- context.DeadlineExceeded
		}
	}))
	l := newLedger()
	a := start(t, ctx, connect(t, e.Addrs()), l, path, "a", items)
	select {
	case <-taken:
	case <-ctx.Done():
		t.Fatal("a never took its share")
	}
	b := start(t, ctx, connect(t, e.Addrs()), l, path, "b", items)
	if err := <-seen; err != nil {
		t.Fatalf("a's allocation did not see b join within 30s (%v)", err)
	}
	waitConverged(t, admin, path, []*member{a, b}, items)
	noOverlap(t, l)
}
