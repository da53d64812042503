package ttl_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"github.com/zkrecipes/zkrecipes/lab/internal/zkcount"
	"github.com/zkrecipes/zkrecipes/recipes"
	"github.com/zkrecipes/zkrecipes/ttl"
)

// TestOnceLostRequest: the create itself is lost with the connection, so
// the server never applied it and nobody holds the period. Once's
// guarantee is that it returns true only when this call created the claim
// and false only with a claim someone else made first: it must neither
// count the lost create as a win (no node would be there) nor report the
// period taken with no claim (nobody would run it). It reads the node back,
// finds the period free, creates again and wins, with its own claim id in
// the node.
//
// The aim: an upstream reset on the client's link swallows the next chunk
// the client sends and resets the connection, and every new connection
// likewise, until Heal. The create must be the chunk lost: zkcount must have
// seen it written before the client noticed the drop, and the node must be
// absent then. When a ping went first and the create was not written before
// the drop, the trial aims again on a path of its own (at most 3 attempts),
// then fails as not exercised.
func TestOnceLostRequest(t *testing.T) {
	e := ensemble(t)
	base := testPath(t)
	link, err := e.NewLink("ttl-lost-request")
	if err != nil {
		t.Fatal(err)
	}
	defer link.Close()
	s, counter := testutil.CountedSession(t, link.Addrs())
	admin := testutil.Connect(t, e.Addrs())
	ctx := testutil.Ctx(t, 2*time.Minute)
	if err := zkEnsure(admin, base); err != nil {
		t.Fatal(err)
	}
	// As in TestOnceLostAnswer: a first claim under base runs the secured
	// pass's squatting check (1 getACL, once) before the link is reset.
	if _, won, err := ttl.Once(ctx, s, base+"/warm-up", time.Minute, nil); err != nil || !won {
		t.Fatalf("warm-up claim = %v, %v", won, err)
	}
	type result struct {
		c   ttl.Claim
		won bool
		err error
	}
	const attempts = 3
	for attempt := 1; ; attempt++ {
		path := fmt.Sprintf("%s/job-%d", base, attempt)
		before := counter.Snapshot().Req(zkcount.OpCreateTTL)
		if err := link.ResetPeer(0); err != nil {
			t.Fatal(err)
		}
		done := make(chan result, 1)
		go func() {
			c, won, err := ttl.Once(ctx, s, path, time.Minute, nil)
			done <- result{c, won, err}
		}()
		testutil.WaitFor(t, 10*time.Second, "the client to notice the reset", func() bool {
			st := s.State()
			return st == recipes.StateSuspended || st == recipes.StateLost
		})
		sent := counter.Snapshot().Req(zkcount.OpCreateTTL) - before
		applied, _, err := admin.Conn().Exists(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := link.Heal(); err != nil {
			t.Fatal(err)
		}
		var r result
		select {
		case r = <-done:
		case <-time.After(time.Minute):
			t.Fatal("Once did not return within a minute of the heal")
		}
		if sent != 1 || applied {
			if attempt == attempts {
				t.Fatalf("not exercised: in %d attempts the create was never the request lost (last: %d creates written before the drop, applied %v)", attempts, sent, applied)
			}
			t.Logf("attempt %d missed its aim (%d creates written before the drop, applied %v): again", attempt, sent, applied)
			continue
		}
		if r.err != nil || !r.won {
			t.Fatalf("Once whose create was lost before the server applied it = (%+v, %v, %v); want a win (the period was free)", r.c, r.won, r.err)
		}
		got, err := ttl.Read(ctx, admin, path)
		if errors.Is(err, zk.ErrNoNode) {
			t.Fatalf("Once reported a win with no claim node at %s", path)
		}
		if err != nil {
			t.Fatal(err)
		}
		if got.ID != r.c.ID {
			t.Fatalf("the claim node's id is %q, Once's claim %q: the win is not this call's", got.ID, r.c.ID)
		}
		if n := counter.Snapshot().Req(zkcount.OpCreateTTL) - before; n != 2 {
			t.Fatalf("%d creates written, want 2 (the lost one and the one that won)", n)
		}
		t.Logf("attempt %d: the lost create was read back as free and claimed again", attempt)
		return
	}
}
