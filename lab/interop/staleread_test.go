package interop

import (
	"errors"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/recipes"
	"github.com/zkrecipes/zkrecipes/rwlock"
)

// TestTryLockAfterReleaseOnAnotherServer pins why the interop tests sync
// before a TryLock that must see another session's release: TryLock's
// first read (getChildren) is served by its own server, which may not have
// applied a delete that another session's server already acknowledged
// (ZooKeeper orders reads per session, not across sessions). Two sessions
// on different servers: one takes and releases the write lock, the other
// then tries it. Without a sync the try may see the released node (counted
// and logged, not asserted: it is a race); after a sync on the trying
// session it must succeed every time.
func TestTryLockAfterReleaseOnAnotherServer(t *testing.T) {
	e := ensemble(t)
	addrs := e.Addrs()
	if len(addrs) < 2 {
		t.Skip("needs two servers")
	}
	ctx := ctxFor(t, 3*time.Minute)
	path := uniquePath(t, "stale-trylock")
	a, b := session(t, addrs[:1]), session(t, addrs[1:2])
	ma, err := rwlock.New(a, path, rwlock.WithDialect(recipes.Kazoo))
	if err != nil {
		t.Fatal(err)
	}
	mb, err := rwlock.New(b, path, rwlock.WithDialect(recipes.Kazoo))
	if err != nil {
		t.Fatal(err)
	}
	const rounds = 100
	round := func(sync bool) (stale int) {
		for i := 0; i < rounds; i++ {
			if err := ma.Lock(ctx); err != nil {
				t.Fatal(err)
			}
			if err := ma.Unlock(ctx); err != nil {
				t.Fatal(err)
			}
			if sync {
				if _, err := b.Conn().Sync(path); err != nil {
					t.Fatal(err)
				}
			}
			err := mb.TryLock(ctx)
			switch {
			case errors.Is(err, rwlock.ErrLocked):
				stale++
				continue
			case err != nil:
				t.Fatal(err)
			}
			if err := mb.Unlock(ctx); err != nil {
				t.Fatal(err)
			}
			// a's next Lock must not see b's node either.
			if _, err := a.Conn().Sync(path); err != nil {
				t.Fatal(err)
			}
		}
		return stale
	}
	t.Logf("without sync: %d of %d tries saw the released node", round(false), rounds)
	if n := round(true); n != 0 {
		t.Fatalf("after sync: %d of %d tries saw the released node", n, rounds)
	}
}
