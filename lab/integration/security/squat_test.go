package security_test

// Squatting: an outsider creates a recipe's path before the application
// does. What the library does about it (docs/security.md, "Squatting"):
//
//   - The outsider keeps CREATE to itself (its digest all, anyone read, or
//     not even read): our recipes fail at once with an error wrapping
//     recipes.ErrNoAuth; nothing is retried.
//   - The outsider leaves the path world-open: our nodes still carry our
//     ACL, but ZooKeeper checks deletes against the parent's ACL, so
//     anyone can delete them, and anyone can create under the path and
//     queue ahead. An authenticated Session reads the path's ACL before
//     its first create under it (1 getACL per path and Session) and
//     refuses, with an error wrapping recipes.ErrOpenParent, before
//     creating anything; with recipes.WithAllowOpenParents it logs a
//     warning and goes on.

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/group"
	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
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

// logRecorder is a slog.Handler keeping the records at warning level and above.
type logRecorder struct {
	mu   sync.Mutex
	msgs []string
}

func (r *logRecorder) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }
func (r *logRecorder) Handle(_ context.Context, rec slog.Record) error {
	var b strings.Builder
	b.WriteString(rec.Message)
	rec.Attrs(func(a slog.Attr) bool {
		b.WriteString(" " + a.String())
		return true
	})
	r.mu.Lock()
	r.msgs = append(r.msgs, b.String())
	r.mu.Unlock()
	return nil
}
func (r *logRecorder) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *logRecorder) WithGroup(string) slog.Handler      { return r }

// matching returns the recorded messages containing s.
func (r *logRecorder) matching(s string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, m := range r.msgs {
		if strings.Contains(m, s) {
			out = append(out, m)
		}
	}
	return out
}

// TestSquatOpenParent: an outsider (anonymous) created the recipes' paths
// world-open. By default A's lock, leader and queue fail with an error
// wrapping recipes.ErrOpenParent and create nothing, while a path A
// created itself passes. With WithAllowOpenParents they work, A's Session
// logs one warning per path, naming it, and the danger is real: A's nodes
// carry A's ACL, yet the outsider deletes A's holder node (ZooKeeper
// checks a delete against the parent's ACL) and creates under the path.
func TestSquatOpenParent(t *testing.T) {
	e := ensemble(t)
	addrs := e.Addrs()
	o := connect(t, addrs)

	t.Run("default refuses", func(t *testing.T) {
		p := base(t, addrs)
		squat(t, o, p, zk.WorldACL(zk.PermAll))
		a := connect(t, addrs, recipes.WithDigestAuth(userA, passA))
		for _, at := range recipeCalls(a, p) {
			err := at.do()
			if !errors.Is(err, recipes.ErrOpenParent) {
				t.Errorf("%s on a world-open path: %v, want an error wrapping recipes.ErrOpenParent", at.what, err)
			}
			t.Logf("%s: %v", at.what, err)
		}
		for _, q := range []string{"/lock", "/election", "/queue"} {
			if _, st, err := o.Conn().Exists(p + q); err != nil || st.NumChildren != 0 {
				t.Errorf("%s: %v children, %v; want none", q, st, err)
			}
		}
		// Paths A created itself pass (their ACL is A's), twice.
		own := base(t, addrs)
		for round := range 2 {
			for _, at := range recipeCalls(a, own) {
				if err := at.do(); err != nil {
					t.Errorf("%s (round %d) on A's own paths: %v", at.what, round, err)
				}
			}
		}
	})

	t.Run("allowed warns", func(t *testing.T) {
		p := base(t, addrs)
		squat(t, o, p, zk.WorldACL(zk.PermAll))
		rec := &logRecorder{}
		a := connect(t, addrs, recipes.WithDigestAuth(userA, passA), recipes.WithAllowOpenParents(), recipes.WithLogger(slog.New(rec)))
		for round := range 2 {
			for _, at := range recipeCalls(a, p) {
				if err := at.do(); err != nil {
					t.Fatalf("%s (round %d) on a world-open path: %v", at.what, round, err)
				}
			}
		}
		for _, q := range []string{"/lock", "/election", "/queue"} {
			if got := rec.matching(p + q); len(got) != 1 || !strings.Contains(got[0], "world:anyone:cdrwa") {
				t.Errorf("warnings naming %s: %q, want one naming world:anyone:cdrwa", p+q, got)
			}
		}
		m, err := lock.New(a, p+"/lock")
		if err != nil {
			t.Fatal(err)
		}
		ctx := ctxFor(t, time.Minute)
		if err := m.Lock(ctx); err != nil {
			t.Fatal(err)
		}
		node := m.Node()
		wantSecureACL(t, a, node)
		if _, err := o.Conn().Create(p+"/lock/"+zeroProtected+"lock-", nil, zk.FlagEphemeralSequential, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatalf("outsider creating under a world-open path: %v", err)
		}
		if err := o.Conn().Delete(node, -1); err != nil {
			t.Fatalf("outsider deleting A's holder node under a world-open parent: %v (the default's reason is gone?)", err)
		}
		_ = m.Unlock(ctx) // the node is gone already
	})
}

// TestSquatOpenParentGroup: a group member (a plain persistent.Node) of an
// authenticated Session under an outsider's world-open group path: Join
// fails with an error wrapping recipes.ErrOpenParent and creates nothing;
// under a path the Session created itself, Join works.
func TestSquatOpenParentGroup(t *testing.T) {
	e := ensemble(t)
	addrs := e.Addrs()
	o := connect(t, addrs)
	a := connect(t, addrs, recipes.WithDigestAuth(userA, passA))
	ctx := ctxFor(t, time.Minute)

	squatted := base(t, addrs) + "/members"
	if _, err := o.Conn().Create(squatted, nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	m, err := group.Join(ctx, a, squatted, "a")
	if !errors.Is(err, recipes.ErrOpenParent) {
		t.Fatalf("Join under a world-open path: %v, %v; want an error wrapping recipes.ErrOpenParent", m, err)
	}
	if _, st, err := o.Conn().Exists(squatted); err != nil || st.NumChildren != 0 {
		t.Fatalf("%s: %v children, %v; want none", squatted, st, err)
	}

	own := base(t, addrs) + "/members"
	m, err = group.Join(ctx, a, own, "a")
	if err != nil {
		t.Fatalf("Join under A's own path: %v", err)
	}
	if err := m.Leave(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestWriteOnlyParent: an administrator gave producer A CREATE alone on a
// queue's path (anyone else nothing, not even read), the least privilege
// queue.Put needs. A's Put must work: the open-parent check cannot read
// such a parent's ACL (getACL needs READ or ADMIN), and a parent nobody
// but A may read cannot be squatted through. It failed with ErrNoAuth
// before (the check took its own refused getACL for the Put's refusal).
func TestWriteOnlyParent(t *testing.T) {
	e := ensemble(t)
	addrs := e.Addrs()
	admin := connect(t, addrs, recipes.WithDigestAuth(userB, passB))
	a := connect(t, addrs, recipes.WithDigestAuth(userA, passA))
	p := base(t, addrs) + "/queue"
	acl := append(zk.DigestACL(zk.PermAll, userB, passB), zk.DigestACL(zk.PermCreate, userA, passA)...)
	if _, err := admin.Conn().Create(p, nil, 0, acl); err != nil {
		t.Fatal(err)
	}
	q, err := queue.New(a, p)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := q.Put(ctx, []byte("item")); err != nil {
		t.Fatalf("Put by a producer with CREATE alone: %v", err)
	}
	if names := testutil.Children(t, admin, p); len(names) != 1 {
		t.Fatalf("the queue holds %v, want the one item", names)
	}
}
