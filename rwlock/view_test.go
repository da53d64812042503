package rwlock_test

import (
	"context"
	"errors"
	"testing"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/zkrecipes/lock"
	"github.com/zkrecipes/zkrecipes/recipes"
	"github.com/zkrecipes/zkrecipes/rwlock"
)

// mutexShape is lock.Mutex's method set but Participants (whose element
// type is each package's own).
type mutexShape interface {
	Path() string
	Lock(ctx context.Context) error
	TryLock(ctx context.Context) error
	Unlock(ctx context.Context) error
	Context() context.Context
	Revoked() <-chan struct{}
	Fence() recipes.Fence
	Node() string
	FencedMulti(ctx context.Context, ops ...any) ([]zk.MultiResponse, error)
}

var (
	_ mutexShape = (*lock.Mutex)(nil)
	_ mutexShape = rwlock.View{}
)

// TestViewsNotHeld: each side of an RWMutex that holds nothing answers as
// a lock.Mutex that holds nothing, sending nothing (the Session is
// unconnected); on a nil RWMutex the calls that return an error return
// ErrNilReceiver.
func TestViewsNotHeld(t *testing.T) {
	ctx := context.Background()
	m, err := rwlock.New(new(recipes.Session), "/a")
	if err != nil {
		t.Fatal(err)
	}
	for name, v := range map[string]rwlock.View{"reader": m.Reader(), "writer": m.Writer()} {
		if v.Path() != "/a" {
			t.Errorf("%s: Path %q", name, v.Path())
		}
		if err := v.Unlock(ctx); !errors.Is(err, rwlock.ErrNotHeld) || !errors.Is(err, recipes.ErrReleased) {
			t.Errorf("%s: Unlock = %v", name, err)
		}
		if c := v.Context(); !errors.Is(context.Cause(c), rwlock.ErrNotHeld) {
			t.Errorf("%s: Context cause %v", name, context.Cause(c))
		}
		if v.Fence().Valid() || v.Node() != "" || v.Revoked() != nil {
			t.Errorf("%s: a token, a node or a revocation channel without a holding", name)
		}
		if _, err := v.FencedMulti(ctx); !errors.Is(err, rwlock.ErrNotHeld) {
			t.Errorf("%s: FencedMulti = %v", name, err)
		}
	}
	var nilM *rwlock.RWMutex
	for name, v := range map[string]rwlock.View{"reader": nilM.Reader(), "writer": nilM.Writer()} {
		for op, err := range map[string]error{"Lock": v.Lock(ctx), "TryLock": v.TryLock(ctx), "Unlock": v.Unlock(ctx)} {
			if !errors.Is(err, rwlock.ErrNilReceiver) {
				t.Errorf("nil %s: %s = %v", name, op, err)
			}
		}
		if _, err := v.Participants(ctx); !errors.Is(err, rwlock.ErrNilReceiver) {
			t.Errorf("nil %s: Participants = %v", name, err)
		}
		if v.Context().Err() == nil || v.Fence().Valid() || v.Node() != "" {
			t.Errorf("nil %s: holds", name)
		}
	}
}
