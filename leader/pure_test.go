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

func TestMailboxCoalesces(t *testing.T) {
	mb := &mailbox{notify: make(chan struct{}, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := make(chan Participant)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		mb.deliver(ctx, out, stop)
		close(done)
	}()
	for i := int64(1); i <= 5; i++ {
		mb.put(Participant{Node: "/n", Token: i})
	}
	// Nobody read while five values were put: the reader gets the newest,
	// possibly after older ones already handed over, never older after newer.
	var last int64
	for last != 5 {
		select {
		case p := <-out:
			if p.Token <= last {
				t.Fatalf("got token %d after %d", p.Token, last)
			}
			last = p.Token
		case <-time.After(10 * time.Second):
			t.Fatalf("newest value not delivered (last %d)", last)
		}
	}
	select {
	case p := <-out:
		t.Fatalf("extra value %+v", p)
	default:
	}
	close(stop)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("deliver did not stop")
	}
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

func TestDialectWire(t *testing.T) {
	for _, tc := range []struct {
		d    Dialect
		rd   recipes.Dialect
		role recipes.Role
	}{
		{LeaderLatch, recipes.Curator, recipes.RoleLatch},
		{LeaderSelector, recipes.Curator, recipes.RoleLock},
		{KazooElection, recipes.Kazoo, recipes.RoleLatch},
	} {
		rd, role, err := tc.d.wire()
		if err != nil || rd.String() != tc.rd.String() || role != tc.role {
			t.Errorf("%v: %v %v %v", tc.d, rd, role, err)
		}
	}
	if _, _, err := Dialect(-1).wire(); !errors.Is(err, recipes.ErrBadArgument) {
		t.Errorf("bad dialect: %v", err)
	}
}

func TestErrorsArePrefixed(t *testing.T) {
	for _, err := range []error{ErrNoLeader, ErrNilElection, ErrCampaigning, ErrResigned, ErrNoTerm, ErrLost, ErrNilFunc} {
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
