package discovery_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/discovery"
	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"github.com/zkrecipes/zkrecipes/lab/internal/zkcount"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// TestUnregisterLeavesReplacement: a second process registers the same
// Static id between our Register and our Leave, replacing our node.
// Our Leave deletes only the node it created: the replacement
// survives, whether the delete is sent by Leave itself or, after its
// ctx ended on a suspended connection, by the background delete once the
// connection is back. (Both deleted the replacement before: by version
// read just before, and by path.)
func TestUnregisterLeavesReplacement(t *testing.T) {
	e := ensemble(t)
	ctx := ctxT(t, 2*time.Minute)
	base := basePath(t)
	link, err := e.NewLink("unregister-replaced")
	if err != nil {
		t.Fatal(err)
	}
	defer link.Close()
	counter := zkcount.New()
	s := testutil.ConnectWrapped(t, link.Addrs(), counter.Wrap)
	other := connect(t, e.Addrs())
	d, dOther := newDiscovery(t, s, base), newDiscovery(t, other, base)

	survives := func(t *testing.T, what string, theirs *discovery.Registration, czxid int64) {
		t.Helper()
		if _, st := node(t, other, theirs.Path()); st == nil || st.Czxid != czxid {
			t.Fatalf("%s: the replacement node (czxid 0x%x) is gone or changed: %+v", what, czxid, st)
		}
		if err := theirs.Present().Err(); err != nil {
			t.Fatalf("%s: the replacement's Present is done: %v", what, context.Cause(theirs.Present()))
		}
	}

	t.Run("foreground", func(t *testing.T) {
		inst := discovery.Instance{Name: "api", ID: "fg", Port: 1, ServiceType: discovery.Static}
		ours := register(t, d, inst)
		_, stOurs := node(t, other, ours.Path())
		inst.Port = 2
		theirs := register(t, dOther, inst)
		_, stTheirs := node(t, other, theirs.Path())
		if stOurs == nil || stTheirs == nil || stTheirs.Czxid == stOurs.Czxid {
			t.Fatalf("the second Register did not replace our node: %+v, %+v", stOurs, stTheirs)
		}
		if err := ours.Leave(ctx); err != nil {
			t.Fatalf("Leave = %v", err)
		}
		if !errors.Is(context.Cause(ours.Present()), recipes.ErrReleased) {
			t.Fatalf("our Present after Leave: %v", context.Cause(ours.Present()))
		}
		survives(t, "foreground Leave", theirs, stTheirs.Czxid)
		if err := theirs.Leave(ctx); err != nil {
			t.Fatal(err)
		}
		if _, st := node(t, other, theirs.Path()); st != nil {
			t.Fatalf("the replacement's own Leave left its node: %+v", st)
		}

	})

	// Background: our Leave gives up on a suspended connection and
	// hands the delete to the background; the replacement comes meanwhile.
	t.Run("background", func(t *testing.T) {
		inst := discovery.Instance{Name: "api", ID: "bg", Port: 1, ServiceType: discovery.Static}
		ours := register(t, d, inst)
		sid := s.ID()
		if err := link.Cut(); err != nil {
			t.Fatal(err)
		}
		waitFor(t, 20*time.Second, "our connection suspended", func() bool { return s.State() == recipes.StateSuspended })
		short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		err := ours.Leave(short)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Leave on a suspended connection = %v, want its ctx's error", err)
		}
		inst.Port = 2
		theirs := register(t, dOther, inst)
		_, stTheirs := node(t, other, theirs.Path())
		before := counter.Snapshot()
		if err := link.Restore(); err != nil {
			t.Fatal(err)
		}
		waitFor(t, 20*time.Second, "the same session back", func() bool {
			return s.State() == recipes.StateReconnected && s.ID() == sid
		})
		waitFor(t, 20*time.Second, "the background delete's first request", func() bool {
			d := counter.Snapshot().Sub(before)
			return d.Req(zkcount.OpExists)+d.Req(zkcount.OpDelete) > 0
		})
		// One more round trip on our connection: the server has answered
		// whatever the background sent before it.
		if _, _, err := s.Conn().Exists(theirs.Path()); err != nil {
			t.Fatal(err)
		}
		survives(t, "background delete", theirs, stTheirs.Czxid)
		if err := theirs.Leave(ctx); err != nil {
			t.Fatal(err)
		}
	})
}

// TestUpdateLeavesReplacement: a second process registers the same Static
// id, replacing our node; our Update must not write the replacement (it
// fails, wrapping zk.ErrNodeExists, and the replacement keeps its data).
// Before, Update wrote by path with version -1, so the newest write won
// on whichever node held the path.
func TestUpdateLeavesReplacement(t *testing.T) {
	e := ensemble(t)
	ctx := ctxT(t, time.Minute)
	base := basePath(t)
	s, other := connect(t, e.Addrs()), connect(t, e.Addrs())
	d, dOther := newDiscovery(t, s, base), newDiscovery(t, other, base)
	inst := discovery.Instance{Name: "api", ID: "i1", Port: 1, ServiceType: discovery.Static}
	ours := register(t, d, inst)

	// Ours still: Update writes it.
	inst.Port = 2
	if err := ours.Update(ctx, inst); err != nil {
		t.Fatalf("Update of our own node = %v", err)
	}
	if data, _ := node(t, other, ours.Path()); !strings.Contains(string(data), `"port":2`) {
		t.Fatalf("our node after Update: %s", data)
	}

	inst.Port = 3
	theirs := register(t, dOther, inst)
	dataTheirs, stTheirs := node(t, other, theirs.Path())
	inst.Port = 4
	if err := ours.Update(ctx, inst); !errors.Is(err, zk.ErrNodeExists) {
		t.Errorf("Update of a replaced node = %v, want an error wrapping zk.ErrNodeExists", err)
	}
	data, st := node(t, other, theirs.Path())
	if st == nil || st.Czxid != stTheirs.Czxid || st.Version != stTheirs.Version || string(data) != string(dataTheirs) {
		t.Fatalf("the replacement changed: %s %+v, was %s %+v", data, st, dataTheirs, stTheirs)
	}

	// Gone: Update creates it again, as ours.
	if err := theirs.Leave(ctx); err != nil {
		t.Fatal(err)
	}
	inst.Port = 5
	if err := ours.Update(ctx, inst); err != nil {
		t.Fatalf("Update of a deleted node = %v", err)
	}
	if data, _ := node(t, other, ours.Path()); !strings.Contains(string(data), `"port":5`) {
		t.Fatalf("our node after Update: %s", data)
	}
	if err := ours.Leave(ctx); err != nil {
		t.Fatal(err)
	}
	if _, st := node(t, other, ours.Path()); st != nil {
		t.Fatalf("Leave after the re-creating Update left the node: %+v", st)
	}
}
