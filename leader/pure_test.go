package leader

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/recipes"
)

func TestDispatcherOrderAndNeverBlocks(t *testing.T) {
	release := make(chan struct{})
	var mu sync.Mutex
	var got []EventType
	d := newDispatcher(func(ev Event) {
		<-release // a stuck hook
		mu.Lock()
		got = append(got, ev.Type)
		mu.Unlock()
	})
	want := []EventType{EventStart, EventOfferStart, EventOfferComplete, EventDetermineStart, EventDetermineComplete, EventElectedStart, EventElectedComplete, EventStopStart, EventStopComplete}
	emitted := make(chan struct{})
	go func() {
		for _, ty := range want {
			d.emit(Event{Type: ty})
		}
		close(emitted)
	}()
	select {
	case <-emitted: // emit returned although the hook is stuck
	case <-time.After(10 * time.Second):
		t.Fatal("emit blocked on the hook")
	}
	close(release)
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		n := len(got)
		mu.Unlock()
		if n == len(want) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("delivered %d of %d events", n, len(want))
		}
		time.Sleep(time.Millisecond)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("order: got %v, want %v", got, want)
		}
	}
	// The drain goroutine is gone once the queue is empty.
	deadline = time.Now().Add(10 * time.Second)
	for {
		d.mu.Lock()
		running := d.running
		d.mu.Unlock()
		if !running {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("dispatcher still running with an empty queue")
		}
		time.Sleep(time.Millisecond)
	}
	var none *dispatcher
	none.emit(Event{Type: EventStart}) // no hook: nothing happens, no panic
}

func TestEventTypeStrings(t *testing.T) {
	seen := map[string]bool{}
	for ty := EventStart; ty <= EventStopComplete; ty++ {
		s := ty.String()
		if s == "" || strings.HasPrefix(s, "event(") || seen[s] {
			t.Errorf("%d: %q", int(ty), s)
		}
		seen[s] = true
	}
	if s := EventType(99).String(); s != "event(99)" {
		t.Errorf("unknown: %q", s)
	}
}

// TestNewValidates: New checks its arguments once and fails with a
// sentinel, returning no Election; a valid Election contends with its
// dialect's election role. New sends nothing, so an unconnected Session
// serves as a non-nil one.
func TestNewValidates(t *testing.T) {
	s := new(recipes.Session)
	for _, tc := range []struct {
		name string
		s    *recipes.Session
		path string
		opts []Option
		role recipes.Role // on success
		want []error      // nil: success
	}{
		{"default latch", s, "/e", nil, recipes.RoleLatch, nil},
		{"root", s, "/", nil, recipes.RoleLatch, nil},
		{"zero dialect", s, "/e", []Option{WithDialect(recipes.Dialect{})}, recipes.RoleLatch, nil},
		{"selector", s, "/e", []Option{WithDialect(recipes.CuratorSelector)}, recipes.RoleLock, nil},
		{"selector text order", s, "/e", []Option{WithDialect(recipes.CuratorSelector.TextOrder())}, recipes.RoleLock, nil},
		{"kazoo", s, "/e", []Option{WithDialect(recipes.Kazoo)}, recipes.RoleLatch, nil},
		{"nil options", s, "/e", []Option{nil, WithData(nil), nil}, recipes.RoleLatch, nil},
		{"nil session", nil, "/e", nil, 0, []error{recipes.ErrNilSession}},
		{"empty path", s, "", nil, 0, []error{recipes.ErrInvalidPath}},
		{"relative path", s, "e", nil, 0, []error{recipes.ErrInvalidPath}},
		{"dot dot", s, "/a/../e", nil, 0, []error{recipes.ErrInvalidPath}},
		{"reserved", s, "/zookeeper/e", nil, 0, []error{recipes.ErrInvalidPath}},
		{"id too large", s, "/e", []Option{WithData(make([]byte, recipes.DefaultMaxData+1))}, 0, []error{recipes.ErrDataTooLarge}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, err := New(tc.s, tc.path, tc.opts...)
			if len(tc.want) == 0 {
				if err != nil || e == nil {
					t.Fatalf("New = %v, %v; want an Election", e, err)
				}
				if e.role != tc.role {
					t.Errorf("role %v, want %v", e.role, tc.role)
				}
				return
			}
			if e != nil {
				t.Errorf("New returned an Election with error %v", err)
			}
			for _, w := range tc.want {
				if !errors.Is(err, w) {
					t.Errorf("error %v is not %v", err, w)
				}
			}
		})
	}
	// WithData copies its bytes; ID reads them back.
	id := []byte("p-1")
	e, err := New(s, "/e", WithData(id))
	if err != nil {
		t.Fatal(err)
	}
	id[0] = 'x'
	if e.ID() != "p-1" {
		t.Errorf("ID() = %q", e.ID())
	}
	// Do returns New's error and sends nothing.
	if err := Do(context.Background(), nil, "/e", func(context.Context) error { return nil }); !errors.Is(err, recipes.ErrNilSession) {
		t.Errorf("Do(nil session) = %v", err)
	}
}

func TestErrorsArePrefixed(t *testing.T) {
	for _, err := range []error{ErrNoLeader, ErrNilReceiver, ErrCampaigning, ErrResigned, ErrLost, ErrNilFunc} {
		if !strings.HasPrefix(err.Error(), "leader: ") {
			t.Errorf("%q lacks the package prefix", err)
		}
	}
}

// The tracker reports each ordering as events and watches only the node
// right ahead.
func TestTrackerPredicate(t *testing.T) {
	var got []Event
	var mu sync.Mutex
	e := &Election{path: "/p"}
	e.events = &dispatcher{fn: func(ev Event) { mu.Lock(); got = append(got, ev); mu.Unlock() }}
	tr := &tracker{e: e}
	cs := []recipes.Contender{{Name: "a"}, {Name: "b"}, {Name: "me"}}
	if held, watch := tr.predicate(cs, 2); held || watch != 1 {
		t.Fatalf("third in line: held %v, watch %d", held, watch)
	}
	if held, watch := tr.predicate(cs[:1:1], 0); !held || watch != -1 {
		t.Fatalf("first: held %v, watch %d", held, watch)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		n := len(got)
		mu.Unlock()
		if n == 10 || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	var types []EventType
	for _, ev := range got {
		types = append(types, ev.Type)
	}
	want := []EventType{EventOfferComplete, EventDetermineStart, EventDetermineComplete, EventReadyStart, EventReadyComplete,
		EventOfferStart, EventOfferComplete, EventDetermineStart, EventDetermineComplete, EventElectedStart}
	// The second call sees a different own node ("a"): a new offer.
	if len(types) != len(want) {
		t.Fatalf("events %v, want %v", types, want)
	}
	for i := range want {
		if types[i] != want[i] {
			t.Fatalf("events %v, want %v", types, want)
		}
	}
	if got[3].Watch != "/p/b" || got[2].Position != 2 {
		t.Errorf("ready watches %q at position %d", got[3].Watch, got[2].Position)
	}
}
