package security_test

// Squatting: an outsider creates a recipe's path before the application
// does. What the library does about it (README, "Squatting"):
//
//   - The outsider keeps CREATE to itself (its digest all, anyone read, or
//     not even read): our recipes fail at once with an error wrapping
//     recipes.ErrNoAuth; nothing is retried.
//   - The outsider leaves the path world-open: our nodes still carry our
//     ACL (the outsider cannot delete them), but anyone can create under
//     the path and queue ahead. An authenticated Session reads the path's
//     ACL before its first create under it (1 getACL per path and
//     Session) and logs a warning; with recipes.WithStrictParents it
//     refuses instead, with an error wrapping recipes.ErrOpenParent, before
//     creating anything.

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/leader"
	"github.com/zkrecipes/zkrecipes/lock"
	"github.com/zkrecipes/zkrecipes/queue"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// squatBound is how long a recipe's first call may take to fail on a
// squatted path: one or two answered requests, no reconnection.
const squatBound = 5 * time.Second

// recipeCalls are the first calls of lock, leader and queue on paths
// under base, made by s: each returns the error the recipe returned.
func recipeCalls(s *recipes.Session, base string) []attempt {
	ctx := context.Background()
	return []attempt{
		{"lock.Lock", func() error {
			m, err := lock.New(s, base+"/lock")
			if err != nil {
				return err
			}
			cctx, cancel := context.WithTimeout(ctx, time.Minute)
			defer cancel()
			if err := m.Lock(cctx); err != nil {
				return err
			}
			return m.Unlock(cctx)
		}},
		{"leader.Campaign", func() error {
			el, err := leader.New(s, base+"/election")
			if err != nil {
				return err
			}
			cctx, cancel := context.WithTimeout(ctx, time.Minute)
			defer cancel()
			term, err := el.Campaign(cctx)
			if err != nil {
				return err
			}
			return term.Release(cctx)
		}},
		{"queue.Put", func() error {
			q, err := queue.New(s, base+"/queue")
			if err != nil {
				return err
			}
			cctx, cancel := context.WithTimeout(ctx, time.Minute)
			defer cancel()
			_, err = q.Put(cctx, []byte("item"))
			return err
		}},
	}
}

// squat creates, as o, the recipe paths recipeCalls uses under base, with acl.
func squat(t *testing.T, o *recipes.Session, base string, acl []zk.ACL) {
	t.Helper()
	for _, p := range []string{base + "/lock", base + "/election", base + "/queue"} {
		if _, err := o.Conn().Create(p, nil, 0, acl); err != nil {
			t.Fatalf("squat %s: %v", p, err)
		}
	}
}

// TestSquatClosedParent: an outsider (digest b) created the recipes' paths
// with CREATE for itself alone; A's lock, leader and queue fail at once
// with an error wrapping recipes.ErrNoAuth, whether the outsider left
// read to anyone or not, and created nothing there.
func TestSquatClosedParent(t *testing.T) {
	e := ensemble(t)
	addrs := e.Addrs()
	b := connect(t, addrs, recipes.WithDigestAuth(userB, passB))
	a := connect(t, addrs, recipes.WithDigestAuth(userA, passA))
	for name, acl := range map[string][]zk.ACL{
		"b all, anyone read": append(zk.DigestACL(zk.PermAll, userB, passB), zk.WorldACL(zk.PermRead)...),
		"b all":              zk.DigestACL(zk.PermAll, userB, passB),
	} {
		t.Run(name, func(t *testing.T) {
			p := base(t, addrs)
			squat(t, b, p, acl)
			for _, at := range recipeCalls(a, p) {
				start := time.Now()
				err := at.do()
				d := time.Since(start)
				if !errors.Is(err, recipes.ErrNoAuth) {
					t.Errorf("%s on a squatted path: %v, want an error wrapping recipes.ErrNoAuth", at.what, err)
				}
				if d > squatBound {
					t.Errorf("%s took %v to fail, want at most %v", at.what, d, squatBound)
				}
				t.Logf("%s: %v after %v", at.what, err, d.Round(time.Millisecond))
			}
			for _, q := range []string{"/lock", "/election", "/queue"} {
				if _, st, err := b.Conn().Exists(p + q); err != nil || st.NumChildren != 0 {
					t.Errorf("%s: %v children, %v; want none", q, st, err)
				}
			}
		})
	}
}
