package leader

import (
	"sync"
	"testing"
	"time"
)

// TestEventQueueBounded: a hook that never returns does not make the queue
// grow without bound; once it returns, it gets at most the queue's limit of
// events, the newest ones, in order.
func TestEventQueueBounded(t *testing.T) {
	release := make(chan struct{})
	var mu sync.Mutex
	var got []Event
	first := make(chan struct{})
	d := newDispatcher(func(ev Event) {
		if ev.Position == 0 {
			close(first)
			<-release
		}
		mu.Lock()
		got = append(got, ev)
		mu.Unlock()
	})
	const n = 10000
	d.emit(Event{Type: EventStart, Position: 0})
	<-first // the hook is stuck in the first event
	for i := 1; i < n; i++ {
		d.emit(Event{Type: EventDetermineComplete, Position: i})
	}
	d.mu.Lock()
	queued := len(d.queue)
	d.mu.Unlock()
	if queued > eventQueueLimit {
		t.Fatalf("%d events queued behind a stuck hook, want at most %d", queued, eventQueueLimit)
	}
	close(release)
	deadline := time.Now().Add(10 * time.Second)
	for {
		d.mu.Lock()
		idle := !d.running
		d.mu.Unlock()
		if idle {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("dispatcher still running")
		}
		time.Sleep(time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != eventQueueLimit+1 {
		t.Fatalf("hook got %d events, want %d (the first, then the newest %d)", len(got), eventQueueLimit+1, eventQueueLimit)
	}
	dropped := 0
	for i, ev := range got {
		dropped += ev.Dropped
		if i > 0 && ev.Position <= got[i-1].Position {
			t.Fatalf("events out of order: %d after %d", ev.Position, got[i-1].Position)
		}
	}
	if last := got[len(got)-1].Position; last != n-1 {
		t.Fatalf("last event delivered: %d, want %d (the newest)", last, n-1)
	}
	if dropped != n-len(got) {
		t.Fatalf("Dropped adds up to %d, want %d", dropped, n-len(got))
	}
	if got[1].Dropped != n-len(got) {
		t.Fatalf("the first event after the gap reports %d dropped, want %d", got[1].Dropped, n-len(got))
	}
}
