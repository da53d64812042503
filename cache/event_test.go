package cache

import (
	"errors"
	"testing"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/recipes"
)

func TestEventString(t *testing.T) {
	for _, tc := range []struct {
		ev   Event
		want string
	}{
		{Event{Type: EventInitialized}, "initialized"},
		{Event{Type: EventReset}, "reset"},
		{Event{Type: EventAdded, Node: Node{Path: "/a", Stat: zk.Stat{Czxid: 3, Mzxid: 5}}}, "added /a (czxid 3, mzxid 5)"},
		{Event{Type: EventUpdated, Node: Node{Path: "/a"}}, "updated /a (czxid 0, mzxid 0)"},
		{Event{Type: EventRemoved, Node: Node{Path: "/a"}}, "removed /a (czxid 0, mzxid 0)"},
		{Event{Type: EventType(42)}, "event(42)"},
	} {
		if got := tc.ev.String(); got != tc.want {
			t.Errorf("%#v: %q, want %q", tc.ev, got, tc.want)
		}
	}
}

// The constructors refuse a nil session before anything else; the other
// bad input needs a session (lab/integration/cache TestBadInput).
func TestNilSession(t *testing.T) {
	if _, err := NewNodeCache(nil, "/a"); !errors.Is(err, recipes.ErrNilSession) {
		t.Errorf("NewNodeCache: %v", err)
	}
	if _, err := NewChildrenCache(nil, "/a"); !errors.Is(err, recipes.ErrNilSession) {
		t.Errorf("NewChildrenCache: %v", err)
	}
	if _, err := NewTreeCache(nil, "/a", WithMaxDepth(-1)); !errors.Is(err, recipes.ErrNilSession) {
		t.Errorf("NewTreeCache: %v", err)
	}
}

// depth counts the levels below the root, for the root "/" too.
func TestDepth(t *testing.T) {
	for _, tc := range []struct {
		root, path string
		want       int
	}{
		{"/", "/", 0},
		{"/", "/a", 1},
		{"/", "/a/b", 2},
		{"/r", "/r", 0},
		{"/r", "/r/a", 1},
		{"/r/s", "/r/s/a/b/c", 3},
	} {
		e := newEngine(nil, tc.root, config{})
		if got := e.depth(tc.path); got != tc.want {
			t.Errorf("depth(%q under %q) = %d, want %d", tc.path, tc.root, got, tc.want)
		}
	}
}

func TestBelow(t *testing.T) {
	for _, tc := range []struct {
		q, p string
		want bool
	}{
		{"/a/b", "/a", true},
		{"/a/b/c", "/a", true},
		{"/a", "/a", false},
		{"/ab", "/a", false},
		{"/a", "/a/b", false},
		{"/a", "/", true},
		{"/", "/", false},
	} {
		if got := below(tc.q, tc.p); got != tc.want {
			t.Errorf("below(%q, %q) = %v, want %v", tc.q, tc.p, got, tc.want)
		}
	}
}
