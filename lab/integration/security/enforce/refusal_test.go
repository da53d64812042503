package enforce_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"github.com/zkrecipes/zkrecipes/leader"
	"github.com/zkrecipes/zkrecipes/lock"
	"github.com/zkrecipes/zkrecipes/queue"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// refusalBound is the longest a recipe call without credentials may take
// to fail on a server enforcing authentication. The refusal needs one
// request and at most one reconnection (go-zookeeper waits up to 1 s
// before dialing again after a whole round of servers failed); before
// issue 21's fix a call took 11 to 50 s, sent again on connection after
// connection. A bound on a protocol outcome (how many reconnections a
// refusal takes), not a speed benchmark.
const refusalBound = 3 * time.Second

// TestFastRefusal: a Session without credentials on a server enforcing
// authentication gets an error wrapping recipes.ErrNoAuth from each
// recipe's first call within refusalBound, and so does every later call,
// and nothing it tried was created.
func TestFastRefusal(t *testing.T) {
	e := shared.Start(t)
	testutil.NoLeakedGoroutines(t, testutil.Running("recipes", "lock", "leader", "queue"))
	base := fmt.Sprintf("/zkrecipes-enforce/%d", time.Now().UnixNano())
	ctx := testutil.Ctx(t, 3*time.Minute)

	anon := connectAnonymous(t, ctx, e)
	calls := []struct {
		what string
		do   func(ctx context.Context) error
	}{
		{"lock.Lock", func(ctx context.Context) error {
			m, err := lock.New(anon, base+"/lock")
			if err != nil {
				return err
			}
			return m.Lock(ctx)
		}},
		{"leader.Campaign", func(ctx context.Context) error {
			el, err := leader.New(anon, base+"/election")
			if err != nil {
				return err
			}
			_, err = el.Campaign(ctx)
			return err
		}},
		{"queue.Put", func(ctx context.Context) error {
			q, err := queue.New(anon, base+"/queue")
			if err != nil {
				return err
			}
			_, err = q.Put(ctx, []byte("x"))
			return err
		}},
		{"lock.Lock again", func(ctx context.Context) error {
			m, err := lock.New(anon, base+"/lock")
			if err != nil {
				return err
			}
			return m.Lock(ctx)
		}},
	}
	for _, c := range calls {
		cctx, cancel := context.WithTimeout(ctx, time.Minute)
		start := time.Now()
		err := c.do(cctx)
		d := time.Since(start)
		cancel()
		if !errors.Is(err, recipes.ErrNoAuth) {
			t.Errorf("%s without credentials: %v (after %v), want an error wrapping recipes.ErrNoAuth", c.what, err, d)
			continue
		}
		if d > refusalBound {
			t.Errorf("%s without credentials took %v to be refused, want at most %v", c.what, d, refusalBound)
		}
		t.Logf("%s refused after %v: %v", c.what, d.Round(time.Millisecond), err)
	}

	// Nothing was created: the superuser sees no node under base.
	super := connect(t, e, superuser(t, e))
	if ok, _, err := super.Conn().Exists(base); err != nil || ok {
		t.Fatalf("exists %s as the superuser: %v, %v; want no node", base, ok, err)
	}
}
