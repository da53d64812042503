package recipes

import (
	"slices"
	"testing"

	"github.com/go-zookeeper/zk"
)

// The WatchSet's bookkeeping, driven by hand: no server, the events fed to
// watchEvent as go-zookeeper's callback would.

func TestFanTypes(t *testing.T) {
	for _, tc := range []struct {
		ev   zk.EventType
		want []fanType
	}{
		{zk.EventNodeCreated, []fanType{fanExist}},
		{zk.EventNodeDataChanged, []fanType{fanExist, fanData}},
		{zk.EventNodeChildrenChanged, []fanType{fanChild}},
		{zk.EventNodeDeleted, []fanType{fanExist, fanData, fanChild}},
		{zk.EventNotWatching, []fanType{fanExist, fanData, fanChild}},
		{zk.EventSession, nil},
	} {
		if got := fanTypes(tc.ev); !slices.Equal(got, tc.want) {
			t.Errorf("fanTypes(%v) = %v, want %v", tc.ev, got, tc.want)
		}
	}
}

// fakeSession is a Session with an id and no connection: enough for the
// registry and for WatchSets made by hand.
func fakeSession(id int64) *Session {
	return &Session{id: id}
}

func fakeSet(s *Session) *WatchSet {
	w := &WatchSet{s: s, interest: make(map[fanKey]struct{}), ready: make(chan struct{}, 1)}
	s.watches.mu.Lock()
	if s.watches.sets == nil {
		s.watches.sets = make(map[*WatchSet]struct{})
	}
	s.watches.sets[w] = struct{}{}
	s.watches.mu.Unlock()
	return w
}

// TestFanArm: a watch-setting read is remembered as armed unless an event
// that may have fired it arrived while it was in flight, or the session
// changed meanwhile; an event afterwards disarms it.
func TestFanArm(t *testing.T) {
	k := fanKey{"/a", fanData}
	for _, tc := range []struct {
		name   string
		during func(s *Session) // runs while the read is in flight
		armed  bool
	}{
		{"quiet", func(*Session) {}, true},
		{"event on another path", func(s *Session) { s.watchEvent(zk.Event{Type: zk.EventNodeDataChanged, Path: "/b"}) }, true},
		{"children event on the path", func(s *Session) { s.watchEvent(zk.Event{Type: zk.EventNodeChildrenChanged, Path: "/a"}) }, true},
		{"data event on the path", func(s *Session) { s.watchEvent(zk.Event{Type: zk.EventNodeDataChanged, Path: "/a"}) }, false},
		{"deleted", func(s *Session) { s.watchEvent(zk.Event{Type: zk.EventNodeDeleted, Path: "/a"}) }, false},
		{"watches dropped", func(s *Session) { s.watchEvent(zk.Event{Type: zk.EventNotWatching, Path: "/a"}) }, false},
		{"new session", func(s *Session) { s.mu.Lock(); s.id = 2; s.mu.Unlock() }, false},
	} {
		s := fakeSession(1)
		err := s.watches.armRead(s, k, func() (fanKey, bool, error) {
			tc.during(s)
			return k, true, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if got := s.watches.isArmed(k, s.ID()); got != tc.armed {
			t.Errorf("%s: armed %v, want %v", tc.name, got, tc.armed)
		}
		if a, f, _ := s.fanStats(); f != 0 || (a == 1) != tc.armed {
			t.Errorf("%s: %d armed, %d in flight", tc.name, a, f)
		}
		s.watchEvent(zk.Event{Type: zk.EventNodeDataChanged, Path: "/a"})
		if s.watches.isArmed(k, s.ID()) {
			t.Errorf("%s: still armed after its event", tc.name)
		}
	}
	// A read that set no watch (missing node, error) is not remembered.
	s := fakeSession(1)
	_ = s.watches.armRead(s, k, func() (fanKey, bool, error) { return k, false, zk.ErrNoNode })
	if s.watches.isArmed(k, 1) {
		t.Error("a failed read is armed")
	}
	// An exists on a missing node arms the exist key: a creation fires it.
	ke := fanKey{"/a", fanExist}
	_ = s.watches.armRead(s, ke, func() (fanKey, bool, error) { return ke, true, nil })
	if !s.watches.isArmed(ke, 1) || s.watches.isArmed(k, 1) {
		t.Error("exists on a missing node: wrong key armed")
	}
	s.watchEvent(zk.Event{Type: zk.EventNodeCreated, Path: "/a"})
	if s.watches.isArmed(ke, 1) {
		t.Error("still armed after the creation")
	}
	// An entry of an older session does not count.
	_ = s.watches.armRead(s, k, func() (fanKey, bool, error) { return k, true, nil })
	if s.watches.isArmed(k, 2) {
		t.Error("armed under another session")
	}
}

// TestFanDeliver: a WatchSet keeps an event only for a watch it relies on,
// once per read, in order, and signals Ready once for any number; a closed
// one keeps nothing.
func TestFanDeliver(t *testing.T) {
	s := fakeSession(1)
	w, other := fakeSet(s), fakeSet(s)
	w.want(fanKey{"/a", fanData}, fanKey{"/b", fanChild})
	other.want(fanKey{"/a", fanData})

	s.watchEvent(zk.Event{Type: zk.EventNodeChildrenChanged, Path: "/a"}) // not a watch of ours
	s.watchEvent(zk.Event{Type: zk.EventNodeDataChanged, Path: "/a"})
	s.watchEvent(zk.Event{Type: zk.EventNodeDataChanged, Path: "/a"}) // not read again: no watch
	s.watchEvent(zk.Event{Type: zk.EventNodeDeleted, Path: "/b"})     // fires the child watch too
	select {
	case <-w.Ready():
	default:
		t.Fatal("Ready not signalled")
	}
	select {
	case <-w.Ready():
		t.Fatal("Ready signalled twice")
	default:
	}
	got := w.Events()
	want := []zk.Event{{Type: zk.EventNodeDataChanged, Path: "/a"}, {Type: zk.EventNodeDeleted, Path: "/b"}}
	if !slices.Equal(got, want) {
		t.Fatalf("events %v, want %v", got, want)
	}
	if evs := w.Events(); evs != nil {
		t.Fatalf("events taken twice: %v", evs)
	}
	if evs := other.Events(); len(evs) != 1 || evs[0].Path != "/a" {
		t.Fatalf("the other set got %v", evs)
	}

	other.Close()
	other.want(fanKey{"/c", fanData})
	s.watchEvent(zk.Event{Type: zk.EventNodeDataChanged, Path: "/c"})
	if evs := other.Events(); evs != nil {
		t.Fatalf("a closed set got %v", evs)
	}
	if _, _, sets := s.fanStats(); sets != 1 {
		t.Fatalf("%d sets registered, want 1", sets)
	}
}

// TestFanUnwant: interest in a watch no read set is dropped, unless the
// watch is armed or a read of the path is in flight.
func TestFanUnwant(t *testing.T) {
	s := fakeSession(1)
	w := fakeSet(s)
	k := fanKey{"/a", fanData}
	w.want(k)
	w.unwant(k)
	if len(w.interest) != 0 {
		t.Fatal("interest kept for a watch nobody set")
	}
	w.want(k)
	_ = s.watches.armRead(s, k, func() (fanKey, bool, error) { return k, true, nil })
	w.unwant(k)
	if len(w.interest) != 1 {
		t.Fatal("interest dropped for an armed watch")
	}
	s.watchEvent(zk.Event{Type: zk.EventNodeDataChanged, Path: "/a"})
	w.want(k)
	_ = s.watches.armRead(s, k, func() (fanKey, bool, error) {
		w.unwant(k) // another read of the path is in flight
		if len(w.interest) != 1 {
			t.Error("interest dropped while a read is in flight")
		}
		return k, false, zk.ErrNoNode
	})
}
