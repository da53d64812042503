package security_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/barrier"
	"github.com/zkrecipes/zkrecipes/queue"
	"github.com/zkrecipes/zkrecipes/recipes"
	sharedrecipe "github.com/zkrecipes/zkrecipes/shared"
	"github.com/zkrecipes/zkrecipes/ttl"
	"github.com/zkrecipes/zkrecipes/twophase"
)

// createUnder is a recipe's first create under parent, made by s: each
// returns the error the recipe returned. parent is the one path the
// recipe creates its node (or nodes) directly under.
type createUnder struct {
	what   string
	parent string
	do     func(ctx context.Context, s *recipes.Session, parent string) error
}

// plainCreates are the recipes whose creates go through
// recipes.CreateUnder (or, for twophase, its own persistent root and
// Session.CheckParent), beside the contender core and queue puts that
// TestSquatOpenParent covers.
var plainCreates = []createUnder{
	{"barrier.Set", "/bar", func(ctx context.Context, s *recipes.Session, parent string) error {
		b, err := barrier.New(s, parent+"/b")
		if err != nil {
			return err
		}
		return b.Set(ctx)
	}},
	{"barrier.DoubleBarrier.Enter", "/double", func(ctx context.Context, s *recipes.Session, parent string) error {
		d, err := barrier.NewDouble(s, parent, 1)
		if err != nil {
			return err
		}
		if err := d.Enter(ctx); err != nil {
			return err
		}
		return d.Leave(ctx)
	}},
	{"queue.Claim", "/claims", func(ctx context.Context, s *recipes.Session, parent string) error {
		// The queue path is the Session's own (Put creates it); the
		// claims path is the one under test.
		q, err := queue.New(s, parent+"-items", queue.WithClaimPath(parent))
		if err != nil {
			return err
		}
		if _, err := q.Put(ctx, []byte("item")); err != nil {
			return err
		}
		c, err := q.Claim(ctx)
		if err != nil {
			return err
		}
		return c.Ack(ctx)
	}},
	{"shared.Value.Get", "/value", func(ctx context.Context, s *recipes.Session, parent string) error {
		v, err := sharedrecipe.NewValue(s, parent+"/v", []byte("seed"))
		if err != nil {
			return err
		}
		_, err = v.Get(ctx)
		return err
	}},
	{"shared.Long.Add", "/long", func(ctx context.Context, s *recipes.Session, parent string) error {
		l, err := sharedrecipe.NewLong(s, parent+"/l")
		if err != nil {
			return err
		}
		_, err = l.Add(ctx, 1)
		return err
	}},
	{"ttl.Once", "/ttl", func(ctx context.Context, s *recipes.Session, parent string) error {
		_, _, err := ttl.Once(ctx, s, parent+"/period", time.Minute, nil)
		if errors.Is(err, ttl.ErrUnsupported) {
			return nil // a server without TTL nodes: the check came first, and passed
		}
		return err
	}},
	{"twophase.Coordinator.Begin", "/2pc", func(ctx context.Context, s *recipes.Session, parent string) error {
		c, err := twophase.NewCoordinator(s, parent)
		if err != nil {
			return err
		}
		_, err = c.Begin(ctx, "tx1", []string{"site"}, nil)
		return err
	}},
}

// TestSquatOpenParentCreates: an outsider (anonymous) created, world-open,
// the parent under which barrier, double barrier, queue claims, shared
// value and long, ttl and twophase make their first node. An
// authenticated Session's first create there fails with an error wrapping
// recipes.ErrOpenParent and creates nothing (the check runs in
// recipes.CreateUnder, before the create); the same calls on parents the
// Session creates itself succeed.
func TestSquatOpenParentCreates(t *testing.T) {
	e := ensemble(t)
	addrs := e.Addrs()
	o := connect(t, addrs)
	a := connect(t, addrs, recipes.WithDigestAuth(userA, passA))

	t.Run("refused", func(t *testing.T) {
		p := base(t, addrs)
		for _, c := range plainCreates {
			if _, err := o.Conn().Create(p+c.parent, nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
				t.Fatalf("squat %s: %v", p+c.parent, err)
			}
		}
		for _, c := range plainCreates {
			ctx := ctxFor(t, time.Minute)
			start := time.Now()
			err := c.do(ctx, a, p+c.parent)
			if !errors.Is(err, recipes.ErrOpenParent) {
				t.Errorf("%s under a world-open parent: %v, want an error wrapping recipes.ErrOpenParent", c.what, err)
			}
			if d := time.Since(start); d > squatBound {
				t.Errorf("%s took %v to fail, want at most %v", c.what, d, squatBound)
			}
			if _, st, err := o.Conn().Exists(p + c.parent); err != nil || st.NumChildren != 0 {
				t.Errorf("%s: %s has %v children, %v; want none", c.what, p+c.parent, st, err)
			}
			t.Logf("%s: %v", c.what, err)
		}
	})

	t.Run("own parents pass", func(t *testing.T) {
		p := base(t, addrs)
		for _, c := range plainCreates {
			ctx := ctxFor(t, time.Minute)
			if err := c.do(ctx, a, p+c.parent); err != nil {
				t.Errorf("%s under the Session's own parent: %v", c.what, err)
			}
		}
	})
}
