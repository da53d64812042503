package interop

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/group"
	"github.com/zkrecipes/zkrecipes/lab/internal/peers"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// pollPeer repeats a peer command until its answer satisfies ok, failing
// the test after d.
func pollPeer(t *testing.T, ctx context.Context, p *peers.Peer, command string, d time.Duration, what string, ok func(string) bool) string {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		got, err := p.Do(ctx, command)
		if err != nil {
			t.Fatal(err)
		}
		if ok(got) {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %q after %v", what, got, d)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// untilSnapshot receives Snapshots of w until one satisfies ok, failing
// the test after d.
func untilSnapshot(t *testing.T, w *recipes.Stream[group.Snapshot], d time.Duration, what string, ok func(group.Snapshot) bool) group.Snapshot {
	t.Helper()
	deadline := time.After(d)
	var last group.Snapshot
	for {
		select {
		case snap, open := <-w.C:
			if !open {
				t.Fatalf("watch closed waiting for %s: %v", what, w.Err())
			}
			if ok(snap) {
				return snap
			}
			last = snap
		case <-deadline:
			t.Fatalf("no snapshot with %s within %v; last %+v", what, d, last)
			return nil
		}
	}
}

// TestGroupWithCuratorGroupMember: a Go member and Curator's GroupMember on
// one path (Curator's layout, <path>/<id> with the payload as data) see
// each other: joins, payload updates and leaves, both ways.
func TestGroupWithCuratorGroupMember(t *testing.T) {
	forEachRelease(t, func(t *testing.T, rel peers.Release) {
		e := ensemble(t)
		ctx := ctxFor(t, 3*time.Minute)
		path := uniquePath(t, "group")
		java := startPeer(t, rel, peers.Curator, e.ConnectString())
		s := session(t, e.Addrs())
		w := group.Watch(ctx, session(t, e.Addrs()), path)
		defer w.Stop()

		if _, err := java.Do(ctx, fmt.Sprintf("group-join %s java-1 jp1", path)); err != nil {
			t.Fatal(err)
		}
		m, err := group.Join(ctx, s, path, "go-1", group.WithData([]byte("gp1")))
		if err != nil {
			t.Fatal(err)
		}
		// Go sees the Curator member, with its payload and session.
		snap := untilSnapshot(t, w, 30*time.Second, "both members", func(s group.Snapshot) bool {
			return slices.Equal(s.IDs(), []string{"go-1", "java-1"})
		})
		if i, _ := snap.Get("java-1"); string(i.Data) != "jp1" || i.SessionID != java.SessionID || i.Node != path+"/java-1" {
			t.Fatalf("the Curator member as Go sees it: %+v (peer session 0x%x)", i, java.SessionID)
		}
		// Curator sees the Go member with its payload.
		pollPeer(t, ctx, java, "group-members java-1", 30*time.Second, "Curator's view", func(got string) bool {
			return got == "go-1=gp1 java-1=jp1"
		})

		// Payload updates, both ways.
		if err := m.Update(ctx, []byte("gp2")); err != nil {
			t.Fatal(err)
		}
		pollPeer(t, ctx, java, "group-members java-1", 30*time.Second, "Curator's view of the Go update", func(got string) bool {
			return got == "go-1=gp2 java-1=jp1"
		})
		if _, err := java.Do(ctx, "group-update java-1 jp2"); err != nil {
			t.Fatal(err)
		}
		untilSnapshot(t, w, 30*time.Second, "the Curator update", func(s group.Snapshot) bool {
			i, _ := s.Get("java-1")
			return string(i.Data) == "jp2"
		})

		// Leaves, both ways.
		if err := m.Leave(ctx); err != nil {
			t.Fatal(err)
		}
		pollPeer(t, ctx, java, "group-members java-1", 30*time.Second, "Curator's view after the Go member left", func(got string) bool {
			return got == "java-1=jp2"
		})
		if _, err := java.Do(ctx, "group-leave java-1"); err != nil {
			t.Fatal(err)
		}
		untilSnapshot(t, w, 30*time.Second, "nobody", func(s group.Snapshot) bool { return len(s) == 0 })
	})
}

// TestGroupWithKazooParty: a Go member in kazoo's layout
// (WithDialect(recipes.Kazoo): "<uuid hex>__party__", the id as data) and
// kazoo's Party on one path see each other, and their leaves.
func TestGroupWithKazooParty(t *testing.T) {
	forEachRelease(t, func(t *testing.T, rel peers.Release) {
		e := ensemble(t)
		ctx := ctxFor(t, 3*time.Minute)
		path := uniquePath(t, "party")
		py := startPeer(t, rel, peers.Kazoo, e.ConnectString())
		s := session(t, e.Addrs())
		kazoo := group.WithDialect(recipes.Kazoo)
		w := group.Watch(ctx, session(t, e.Addrs()), path, kazoo)
		defer w.Stop()

		if _, err := py.Do(ctx, fmt.Sprintf("party-join %s py-1", path)); err != nil {
			t.Fatal(err)
		}
		m, err := group.Join(ctx, s, path, "go-1", kazoo)
		if err != nil {
			t.Fatal(err)
		}
		snap := untilSnapshot(t, w, 30*time.Second, "both members", func(s group.Snapshot) bool {
			return slices.Equal(s.IDs(), []string{"go-1", "py-1"})
		})
		if i, _ := snap.Get("py-1"); i.SessionID != py.SessionID || !strings.HasSuffix(i.Node, "__party__") {
			t.Fatalf("the kazoo member as Go sees it: %+v (peer session 0x%x)", i, py.SessionID)
		}
		// kazoo reads from its own server, which may lag behind Go's: poll.
		pollPeer(t, ctx, py, "party-members "+path, 30*time.Second, "kazoo's view", func(got string) bool {
			return got == "go-1 py-1"
		})
		if err := m.Leave(ctx); err != nil {
			t.Fatal(err)
		}
		pollPeer(t, ctx, py, "party-members "+path, 30*time.Second, "kazoo's view after the Go member left", func(got string) bool {
			return got == "py-1"
		})
		if _, err := py.Do(ctx, "party-leave py-1"); err != nil {
			t.Fatal(err)
		}
		untilSnapshot(t, w, 30*time.Second, "nobody", func(s group.Snapshot) bool { return len(s) == 0 })
	})
}

// TestGroupWithKazooShallowParty: a Go member in kazoo's ShallowParty
// layout (WithShallowParty: "<uuid hex32>-<id>") and kazoo's ShallowParty
// on one path see each other, and their leaves.
func TestGroupWithKazooShallowParty(t *testing.T) {
	forEachRelease(t, func(t *testing.T, rel peers.Release) {
		e := ensemble(t)
		ctx := ctxFor(t, 3*time.Minute)
		path := uniquePath(t, "shallow")
		py := startPeer(t, rel, peers.Kazoo, e.ConnectString())
		s := session(t, e.Addrs())
		shallow := group.WithShallowParty()
		w := group.Watch(ctx, session(t, e.Addrs()), path, shallow)
		defer w.Stop()

		if _, err := py.Do(ctx, fmt.Sprintf("shallow-join %s py-1", path)); err != nil {
			t.Fatal(err)
		}
		m, err := group.Join(ctx, s, path, "go-1", shallow)
		if err != nil {
			t.Fatal(err)
		}
		snap := untilSnapshot(t, w, 30*time.Second, "both members", func(s group.Snapshot) bool {
			return slices.Equal(s.IDs(), []string{"go-1", "py-1"})
		})
		if i, _ := snap.Get("py-1"); i.SessionID != py.SessionID || !strings.HasSuffix(i.Node, "-py-1") {
			t.Fatalf("the kazoo member as Go sees it: %+v (peer session 0x%x)", i, py.SessionID)
		}
		pollPeer(t, ctx, py, "shallow-members "+path, 30*time.Second, "kazoo's view", func(got string) bool {
			return got == "go-1 py-1"
		})
		if err := m.Leave(ctx); err != nil {
			t.Fatal(err)
		}
		pollPeer(t, ctx, py, "shallow-members "+path, 30*time.Second, "kazoo's view after the Go member left", func(got string) bool {
			return got == "py-1"
		})
		if _, err := py.Do(ctx, "party-leave py-1"); err != nil {
			t.Fatal(err)
		}
		untilSnapshot(t, w, 30*time.Second, "nobody", func(s group.Snapshot) bool { return len(s) == 0 })
	})
}
