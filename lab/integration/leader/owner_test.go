package leader_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/internal/hooks"
	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
)

// TestCampaignOwnerCheck guards the Election invariant "A term begins only
// after the core found our node first in line and an explicit check found
// the node present with our current session as its ephemeral owner" (the
// check that fixed Curator's double-leader bug, CURATOR-696): another client
// deletes our node at the moment the core finds it first in line. The term
// Campaign returns must stand on a node that exists and that our session
// owns (Campaign joins again with a new node), never on the deleted one.
func TestCampaignOwnerCheck(t *testing.T) {
	testutil.RequireHooks(t)
	e := shared(t)
	path := testPath(t)
	ctx := ctxT(t, time.Minute)
	s := connect(t, e.Addrs())
	admin := connect(t, e.Addrs())
	var once sync.Once
	deleted := make(chan error, 1)
	t.Cleanup(hooks.SetBeforeHold(func(p string) {
		if strings.HasPrefix(p, path+"/") {
			once.Do(func() { deleted <- admin.Conn().Delete(p, -1) })
		}
	}))
	term, err := newElection(t, s, path).Campaign(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer term.Release(ctx) //nolint:errcheck
	select {
	case err := <-deleted:
		if err != nil {
			t.Fatalf("deleting our node as it was found first: %v", err)
		}
	default:
		t.Fatal("Campaign returned without the core finding a node of ours first in line")
	}
	node := term.Participant().Node
	ok, st, err := admin.Conn().Exists(node)
	switch {
	case err != nil:
		t.Fatal(err)
	case !ok:
		t.Fatalf("Campaign returned a term on node %s, deleted before the term began", node)
	case st.EphemeralOwner != s.ID():
		t.Fatalf("term node %s is owned by session 0x%x, ours is 0x%x", node, st.EphemeralOwner, s.ID())
	}
	if err := term.Context().Err(); err != nil {
		t.Fatalf("term already ended when Campaign returned it: %v", err)
	}
}
