package testutil

import (
	"strings"
	"testing"
	"time"
)

//go:noinline
func parkedForTest(stop <-chan struct{}) { <-stop }

// The goroutine check must see other goroutines, not the caller's, and
// Settle must return once they end.
func TestGoroutinesSeeOthers(t *testing.T) {
	match := func(g string) bool { return strings.Contains(g, "testutil.parkedForTest") }
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { defer close(done); parkedForTest(stop) }()
	WaitFor(t, 5*time.Second, "the parked goroutine", func() bool { return len(Goroutines(match)) == 1 })
	if left := Settle(50*time.Millisecond, match); len(left) != 1 {
		t.Fatalf("Settle reports %d goroutines, want 1:\n%s", len(left), strings.Join(left, "\n\n"))
	}
	for _, g := range Goroutines(func(string) bool { return true }) {
		if strings.Contains(g, "TestGoroutinesSeeOthers(") {
			t.Fatalf("Goroutines lists the caller:\n%s", g)
		}
	}
	close(stop)
	<-done
	if left := Settle(5*time.Second, match); len(left) != 0 {
		t.Fatalf("Settle reports %d goroutines after they ended", len(left))
	}
}

func TestRunning(t *testing.T) {
	m := Running("recipes", "lock")
	for stack, want := range map[string]bool{
		"github.com/go-zookeeper/zk.(*Conn).loop(...)":                   true,
		"github.com/zkrecipes/zkrecipes/lock.(*Mutex).Lock(...)":         true,
		"created by github.com/zkrecipes/zkrecipes/recipes.Connect in 1": true,
		"github.com/zkrecipes/zkrecipes/lock_test.TestX(...)":            false,
		"github.com/zkrecipes/zkrecipes/rwlock.View.Lock(...)":           false,
	} {
		if got := m(stack); got != want {
			t.Errorf("Running(recipes, lock)(%q) = %v, want %v", stack, got, want)
		}
	}
}
