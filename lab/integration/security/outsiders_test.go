package security_test

// Permissions each recipe needs on its nodes, as these tests exercise them
// (with DefaultAuthACL, the parties that write must share the principal of
// whoever created the parents, or an ACLProvider must grant them more):
//
//   - lock.Mutex (and lock.Revoke): create and delete under the lock's path
//     (contenders create and remove their own nodes); read (getChildren,
//     getData, exists) for waiters, TryLock, Participants and observers;
//     write on a holder's node to revoke it. Outsiders with read only can
//     see the holder and get ErrLocked from TryLock.
//   - leader.Election: create and delete under the election's path for
//     campaigners; read for Leader, Participants and Watch (an observer
//     needs nothing else).
//   - rwlock.RWMutex: as lock.Mutex, readers and writers alike (one queue).
//   - lock.Semaphore (NewSemaphore): create and delete under <path>/locks
//     (its mutex) and <path>/leases (the leases), create on <path> for
//     those two the first time, write on <path>/leases (the recorded
//     maximum, written by the mutex holder when there is no record or a
//     different one and no other lease); read on all three.
//   - queue.Queue: create under the queue's path for Put and PutAll; delete
//     there for Take, Poll and Claim.Ack; create and delete under the claim
//     path (default <path>/taken, itself created under the queue's path)
//     for Claim, Ack and Release; read for Peek, Len and every consumer.
//     With DefaultAuthACL an outsider can therefore neither put, take, claim
//     nor ack: the queue's node is creator-only for create and delete.
//   - twophase: the Coordinator creates under the root (Begin's multi) and
//     under <root>/<tx> (the decision); each Participant creates under
//     <root>/<tx>/<site> (alive, vote, done) and deletes its alive node,
//     and may create the decision (an abort at its deadline); Collect
//     deletes whole transactions. Begin's site nodes carry the
//     coordinator's ACL, so participants need its principal (or an
//     ACLProvider's grant) to vote; read for everything else.

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
	"github.com/zkrecipes/zkrecipes/rwlock"
	"github.com/zkrecipes/zkrecipes/twophase"
)

// outsiderSessions returns an anonymous Session and one with digest b.
func outsiderSessions(t *testing.T, addrs []string) map[string]*recipes.Session {
	t.Helper()
	return map[string]*recipes.Session{
		"anonymous": connect(t, addrs),
		"digest b":  connect(t, addrs, recipes.WithDigestAuth(userB, passB)),
	}
}

type attempt struct {
	what string
	do   func() error
}

// refused runs each attempt and fails the test unless it failed with an
// error wrapping zk.ErrNoAuth, within 10 seconds; held (when not nil) must
// still be live after each.
func refused(t *testing.T, held context.Context, attempts []attempt) {
	t.Helper()
	for _, at := range attempts {
		start := time.Now()
		err := at.do()
		if !errors.Is(err, zk.ErrNoAuth) {
			t.Errorf("%s: %v, want an error wrapping zk.ErrNoAuth", at.what, err)
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("%s took %v to fail", at.what, d)
		}
		if held != nil && held.Err() != nil {
			t.Fatalf("after %q the holding ended: %v", at.what, context.Cause(held))
		}
	}
}

// rawAttacks are the direct requests against a holder's node and its
// parent: delete, setData, setACL on both, and creates in parent of first
// (a name sorting first) and of a sequential node named seqPrefix.
func rawAttacks(o *recipes.Session, parent, node, first, seqPrefix string) []attempt {
	c := o.Conn()
	return []attempt{
		{"delete the holder's node", func() error { return c.Delete(node, -1) }},
		{"set the holder's data", func() error { _, err := c.Set(node, []byte("forged"), -1); return err }},
		{"open the holder's ACL", func() error { _, err := c.SetACL(node, zk.WorldACL(zk.PermAll), -1); return err }},
		{"open the parent's ACL", func() error { _, err := c.SetACL(parent, zk.WorldACL(zk.PermAll), -1); return err }},
		{"create ahead of the holder", func() error {
			_, err := c.Create(parent+"/"+first, nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll))
			return err
		}},
		{"create a sequential node in line", func() error {
			_, err := c.Create(parent+"/"+seqPrefix, nil, zk.FlagEphemeralSequential, zk.WorldACL(zk.PermAll))
			return err
		}},
	}
}

// Curator's protected prefix with a zero UUID.
const zeroProtected = "_c_00000000-0000-0000-0000-000000000000-"

// TestLeaderOutsiders: while A (digest a) leads, an outsider can neither
// put a node ahead of A's, delete or write A's node, nor campaign; A still
// leads, and the outsider still sees A as the leader.
func TestLeaderOutsiders(t *testing.T) {
	e := ensemble(t)
	addrs := e.Addrs()
	path := base(t, addrs) + "/election"
	a := connect(t, addrs, recipes.WithDigestAuth(userA, passA))
	ctx := ctxFor(t, 2*time.Minute)

	el, err := leader.New(a, path, leader.WithData([]byte("leader-a")))
	if err != nil {
		t.Fatal(err)
	}
	term, err := el.Campaign(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer term.Release(ctx)
	node := term.Participant().Node
	wantSecureACL(t, a, path)
	wantSecureACL(t, a, node)

	for name, o := range outsiderSessions(t, addrs) {
		t.Run(name, func(t *testing.T) {
			oe, err := leader.New(o, path, leader.WithData([]byte("outsider")))
			if err != nil {
				t.Fatal(err)
			}
			attempts := rawAttacks(o, path, node, zeroProtected+"latch-0000000000", zeroProtected+"latch-")
			attempts = append(attempts, attempt{"campaign", func() error {
				ot, err := oe.Campaign(ctx)
				if err == nil {
					ot.Release(ctx)
				}
				return wantRecipesNoAuth(err)
			}})
			refused(t, term.Context(), attempts)
			p, err := oe.Leader(ctx)
			if err != nil || p.Node != node || p.ID != "leader-a" || p.SessionID != a.ID() {
				t.Fatalf("outsider's Leader = %+v, %v", p, err)
			}
		})
	}
	if kids, _, err := a.Conn().Children(path); err != nil || len(kids) != 1 {
		t.Fatalf("election after the attacks: %q, %v", kids, err)
	}
	if err := term.Context().Err(); err != nil {
		t.Fatalf("A no longer leads: %v", context.Cause(term.Context()))
	}
}

// TestRWLockOutsiders: while A (digest a) holds an RWMutex for writing, and
// then for reading, an outsider can neither delete or write the holder's
// node, put a writer ahead of it, nor take the lock either way; A still
// holds, and the outsider still sees the holder.
func TestRWLockOutsiders(t *testing.T) {
	e := ensemble(t)
	addrs := e.Addrs()
	path := base(t, addrs) + "/rwlock"
	a := connect(t, addrs, recipes.WithDigestAuth(userA, passA))
	ctx := ctxFor(t, 2*time.Minute)
	outsiders := outsiderSessions(t, addrs)

	m, err := rwlock.New(a, path, rwlock.WithData([]byte("holder-a")))
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{"write", "read"} {
		var held context.Context
		var node string
		if mode == "write" {
			err = m.Lock(ctx)
			held, node = m.Context(), m.Node()
		} else {
			err = m.Reader().Lock(ctx)
			held, node = m.Reader().Context(), m.Reader().Node()
		}
		if err != nil {
			t.Fatal(err)
		}
		wantSecureACL(t, a, path)
		wantSecureACL(t, a, node)
		for name, o := range outsiders {
			t.Run(mode+"/"+name, func(t *testing.T) {
				om, err := rwlock.New(o, path)
				if err != nil {
					t.Fatal(err)
				}
				attempts := rawAttacks(o, path, node, zeroProtected+"__WRIT__0000000000", zeroProtected+"__WRIT__")
				attempts = append(attempts,
					attempt{"revoke the holder", func() error { return wantRecipesNoAuth(rwlock.Revoke(ctx, o, node)) }},
					attempt{"take the write lock", func() error {
						err := om.Lock(ctx)
						if err == nil {
							om.Unlock(ctx)
						}
						return wantRecipesNoAuth(err)
					}},
				)
				if mode == "read" {
					// A reader would hold at once: refused at the create.
					attempts = append(attempts, attempt{"take the read lock", func() error {
						err := om.Reader().Lock(ctx)
						if err == nil {
							om.Reader().Unlock(ctx)
						}
						return wantRecipesNoAuth(err)
					}})
				}
				refused(t, held, attempts)
				ps, err := om.Participants(ctx)
				if err != nil || len(ps) != 1 || ps[0].Node != node || ps[0].SessionID != a.ID() || string(ps[0].Data) != "holder-a" {
					t.Fatalf("outsider's Participants = %+v, %v", ps, err)
				}
			})
		}
		if mode == "write" {
			err = m.Unlock(ctx)
		} else {
			err = m.Reader().Unlock(ctx)
		}
		if err != nil {
			t.Fatalf("%s unlock after the attacks: %v", mode, err)
		}
	}
}

// TestSemaphoreOutsiders: while A (digest a) holds the only lease of a
// semaphore, an outsider can neither delete or write the lease, add a lease
// (every child of <path>/leases counts as one), take the semaphore's mutex
// ahead of others, overwrite the recorded maximum, nor acquire; A still
// holds, and A's principal on another Session acquires once A releases.
func TestSemaphoreOutsiders(t *testing.T) {
	e := ensemble(t)
	addrs := e.Addrs()
	path := base(t, addrs) + "/semaphore"
	a := connect(t, addrs, recipes.WithDigestAuth(userA, passA))
	ctx := ctxFor(t, 2*time.Minute)

	sem, err := lock.NewSemaphore(a, path, 1)
	if err != nil {
		t.Fatal(err)
	}
	lease, err := sem.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	node := lease.Node()
	leases, locks := path+"/leases", path+"/locks"
	for _, p := range []string{path, leases, locks, node} {
		wantSecureACL(t, a, p)
	}
	for name, o := range outsiderSessions(t, addrs) {
		t.Run(name, func(t *testing.T) {
			osem, err := lock.NewSemaphore(o, path, 1)
			if err != nil {
				t.Fatal(err)
			}
			attempts := rawAttacks(o, leases, node, zeroProtected+"lease-0000000000", zeroProtected+"lease-")
			attempts = append(attempts,
				attempt{"take the semaphore's mutex ahead", func() error {
					_, err := o.Conn().Create(locks+"/"+zeroProtected+"lock-0000000000", nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll))
					return err
				}},
				attempt{"raise the recorded maximum", func() error { _, err := o.Conn().Set(leases, []byte("2"), -1); return err }},
				attempt{"acquire", func() error {
					// Refused at the mutex's create: no wait, no retry.
					l, err := osem.Acquire(ctx)
					if err == nil {
						l.Release(ctx)
					}
					return wantRecipesNoAuth(err)
				}},
			)
			refused(t, lease.Context(), attempts)
			// TryAcquire reads the leases first and creates nothing when
			// none is free: it answers ErrNoPermit.
			if l, err := osem.TryAcquire(ctx); !errors.Is(err, lock.ErrNoPermit) {
				if err == nil {
					l.Release(ctx)
				}
				t.Fatalf("outsider's TryAcquire = %v, want lock.ErrNoPermit", err)
			}
			ps, err := osem.Participants(ctx)
			if err != nil || len(ps) != 1 || ps[0].Node != node || ps[0].SessionID != a.ID() {
				t.Fatalf("outsider's Participants = %+v, %v", ps, err)
			}
		})
	}
	if kids, _, err := a.Conn().Children(leases); err != nil || len(kids) != 1 {
		t.Fatalf("leases after the attacks: %q, %v", kids, err)
	}
	if data, _, err := a.Conn().Get(leases); err != nil || string(data) != "1" {
		t.Fatalf("recorded maximum after the attacks: %q, %v", data, err)
	}

	a2 := connect(t, addrs, recipes.WithDigestAuth(userA, passA))
	sem2, err := lock.NewSemaphore(a2, path, 1)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	var lease2 *lock.Permit
	go func() {
		var err error
		lease2, err = sem2.Acquire(ctx)
		got <- err
	}()
	waitFor(t, 20*time.Second, "the waiter's lease node", func() bool {
		kids, _, err := a.Conn().Children(leases)
		return err == nil && len(kids) == 2
	})
	select {
	case err := <-got:
		t.Fatalf("second lease granted while A holds: %v", err)
	default:
	}
	if err := lease.Release(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-got:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("waiter got no lease after A released")
	}
	wantSecureACL(t, a2, lease2.Node())
	if err := lease2.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestQueueOutsiders: A (digest a) puts items and claims one. An outsider
// can neither put, take, claim, ack (delete an item), delete A's claim nor
// create a claim node for another item; a consumer with A's credentials on
// another Session still claims and acks, and A's claim is intact.
func TestQueueOutsiders(t *testing.T) {
	e := ensemble(t)
	addrs := e.Addrs()
	path := base(t, addrs) + "/queue"
	claims := path + "/taken"
	a := connect(t, addrs, recipes.WithDigestAuth(userA, passA))
	ctx := ctxFor(t, 2*time.Minute)

	q, err := queue.New(a, path)
	if err != nil {
		t.Fatal(err)
	}
	names, err := q.PutAll(ctx, [][]byte{[]byte("one"), []byte("two")})
	if err != nil {
		t.Fatal(err)
	}
	c, err := q.Claim(ctx)
	if err != nil {
		t.Fatal(err)
	}
	first := c.Item().Name
	if string(c.Item().Data) != "one" {
		t.Fatalf("claimed %q", c.Item().Data)
	}
	second := path + "/" + lastSegment(names[1])
	if lastSegment(names[1]) == first {
		t.Fatalf("names %q, claimed %q", names, first)
	}
	for _, p := range []string{path, claims, path + "/" + first, claims + "/" + first, second} {
		wantSecureACL(t, a, p)
	}

	for name, o := range outsiderSessions(t, addrs) {
		t.Run(name, func(t *testing.T) {
			oc := o.Conn()
			oq, err := queue.New(o, path)
			if err != nil {
				t.Fatal(err)
			}
			refused(t, c.Context(), []attempt{
				{"delete the claimed item", func() error { return oc.Delete(path+"/"+first, -1) }},
				{"delete the claim", func() error { return oc.Delete(claims+"/"+first, -1) }},
				{"delete an unclaimed item", func() error { return oc.Delete(second, -1) }},
				{"set an item's data", func() error { _, err := oc.Set(second, []byte("forged"), -1); return err }},
				{"claim an item by hand", func() error {
					_, err := oc.Create(claims+"/"+lastSegment(second), nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll))
					return err
				}},
				{"put an item ahead", func() error {
					_, err := oc.Create(path+"/qn-0000000000", []byte("forged"), 0, zk.WorldACL(zk.PermAll))
					return err
				}},
				{"put", func() error { _, err := oq.Put(ctx, []byte("outsider")); return wantRecipesNoAuth(err) }},
				{"take", func() error { _, err := oq.Take(ctx); return wantRecipesNoAuth(err) }},
				{"claim", func() error {
					oc, err := oq.Claim(ctx)
					if err == nil {
						oc.Release(ctx)
					}
					return wantRecipesNoAuth(err)
				}},
			})
			// Reads stay open.
			if n, err := oq.Len(ctx); err != nil || n != 2 {
				t.Fatalf("outsider's Len = %d, %v", n, err)
			}
			if it, err := oq.Peek(ctx); err != nil || string(it.Data) != "one" {
				t.Fatalf("outsider's Peek = %+v, %v", it, err)
			}
		})
	}

	// A's principal on another Session claims the other item and acks it.
	a2 := connect(t, addrs, recipes.WithDigestAuth(userA, passA))
	q2, err := queue.New(a2, path)
	if err != nil {
		t.Fatal(err)
	}
	c2, err := q2.Claim(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if string(c2.Item().Data) != "two" {
		t.Fatalf("second consumer claimed %q", c2.Item().Data)
	}
	if err := c2.Ack(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.Ack(ctx); err != nil {
		t.Fatalf("A's ack after the attacks: %v", err)
	}
	if n, err := q.Len(ctx); err != nil || n != 0 {
		t.Fatalf("Len after the acks = %d, %v", n, err)
	}
}

func lastSegment(p string) string {
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] == '/' {
			return p[i+1:]
		}
	}
	return p
}

// TestTwoPhaseOutsiders: a coordinator and two participants, all with
// digest a. An outsider can neither write the decision, vote for a site,
// delete or rewrite the transaction, abort it through its own Coordinator
// nor vote through its own Participant; the participants' commit votes
// still make the coordinator's decision Commit.
func TestTwoPhaseOutsiders(t *testing.T) {
	e := ensemble(t)
	addrs := e.Addrs()
	root := base(t, addrs) + "/2pc"
	a := connect(t, addrs, recipes.WithDigestAuth(userA, passA))
	ctx := ctxFor(t, 2*time.Minute)

	co, err := twophase.NewCoordinator(a, root)
	if err != nil {
		t.Fatal(err)
	}
	sites := []string{"s1", "s2"}
	tx, err := co.Begin(ctx, "tx1", sites, []byte("payload"))
	if err != nil {
		t.Fatal(err)
	}
	txPath := tx.Path()
	for _, p := range []string{root, txPath, txPath + "/s1"} {
		wantSecureACL(t, a, p)
	}

	for name, o := range outsiderSessions(t, addrs) {
		t.Run(name, func(t *testing.T) {
			oc := o.Conn()
			oco, err := twophase.NewCoordinator(o, root)
			if err != nil {
				t.Fatal(err)
			}
			op, err := twophase.NewSite(o, root, "s1")
			if err != nil {
				t.Fatal(err)
			}
			refused(t, nil, []attempt{
				{"write the decision", func() error {
					_, err := oc.Create(txPath+"/decision", []byte("abort\nforged"), 0, zk.WorldACL(zk.PermAll))
					return err
				}},
				{"vote for a site", func() error {
					_, err := oc.Create(txPath+"/s1/vote", []byte("abort"), 0, zk.WorldACL(zk.PermAll))
					return err
				}},
				{"mark a site alive", func() error {
					_, err := oc.Create(txPath+"/s2/alive", nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll))
					return err
				}},
				{"delete a site", func() error { return oc.Delete(txPath+"/s2", -1) }},
				{"rewrite the payload", func() error { _, err := oc.Set(txPath, []byte("forged"), -1); return err }},
				{"begin a transaction", func() error {
					_, err := oco.Begin(ctx, "tx-outsider", sites, nil)
					return wantRecipesNoAuth(err)
				}},
				{"abort through a Coordinator", func() error {
					otx, err := oco.Resume(ctx, "tx1")
					if err != nil {
						return err
					}
					_, err = otx.Abort(ctx)
					return wantRecipesNoAuth(err)
				}},
				{"vote through a Participant", func() error {
					pr, err := op.Lookup(ctx, "tx1")
					if err != nil {
						return wantRecipesNoAuth(err)
					}
					return wantRecipesNoAuth(pr.Vote(ctx, twophase.Abort))
				}},
			})
			// Reads stay open.
			otx, err := oco.Resume(ctx, "tx1")
			if err != nil || string(otx.Payload()) != "payload" {
				t.Fatalf("outsider's Resume: %v", err)
			}
		})
	}
	if d, ok, err := tx.Decision(ctx); err != nil || ok {
		t.Fatalf("decision after the attacks: %v, %v, %v", d, ok, err)
	}

	// The real participants (digest a, own Sessions) vote commit.
	for _, site := range sites {
		s := connect(t, addrs, recipes.WithDigestAuth(userA, passA))
		p, err := twophase.NewSite(s, root, site)
		if err != nil {
			t.Fatal(err)
		}
		pr, err := p.Lookup(ctx, "tx1")
		if err != nil {
			t.Fatal(err)
		}
		if err := pr.Vote(ctx, twophase.Commit); err != nil {
			t.Fatalf("%s's vote: %v", site, err)
		}
	}
	if d, err := tx.Decide(ctx); err != nil || d != twophase.Commit {
		t.Fatalf("Decide = %v, %v; want Commit", d, err)
	}
}
