package cluster

import (
	"context"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/chaos/history"
)

// The runner's sampler records a client's new session id (an expiry it
// went through), for clients in worker processes too (no connection here).
func TestSampleSessions(t *testing.T) {
	env := &Env{Rec: history.NewRecorder()}
	c := &Client{Name: "p1", Log: env.Rec.Client("p1")}
	env.clients = append(env.clients, c)
	c.SetSession(1)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); SampleSessions(ctx, env) }()
	defer func() { cancel(); <-done }()
	found := func() (history.Event, bool) {
		for _, e := range env.Rec.History().Events {
			if e.Kind == history.KindSession && e.Client == "p1" && e.Detail == "new" {
				return e, true
			}
		}
		return history.Event{}, false
	}
	deadline := time.Now().Add(10 * time.Second)
	for id := int64(2); ; id++ {
		if _, ok := found(); ok || time.Now().After(deadline) {
			break
		}
		c.SetSession(id) // until the sampler saw one id, then another
		select {
		case <-time.After(30 * time.Millisecond):
		case <-done:
		}
	}
	e, ok := found()
	if !ok || e.Value < 2 {
		t.Fatalf("no new session recorded: %+v", env.Rec.History().Events)
	}
	n := env.Rec.Len()
	for _, e := range env.Rec.History().Events {
		if e.Detail != "new" {
			t.Fatalf("a client without a connection recorded %+v (of %d)", e, n)
		}
	}
}

// An expiry as go-zookeeper shows it: the session id drops to 0 for a
// while before the new one; the sampler still records the new session.
func TestSampleSessionsAcrossZero(t *testing.T) {
	env := &Env{Rec: history.NewRecorder()}
	c := &Client{Name: "p1", Log: env.Rec.Client("p1")}
	env.clients = append(env.clients, c)
	c.SetSession(7)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); SampleSessions(ctx, env) }()
	defer func() { cancel(); <-done }()
	seen := func(v int64) bool {
		for _, e := range env.Rec.History().Events {
			if e.Kind == history.KindSession && e.Detail == "new" && e.Value == v {
				return true
			}
		}
		return false
	}
	// Hold each id long enough (several 20 ms ticks) for the sampler to see it.
	wait := func() {
		select {
		case <-time.After(100 * time.Millisecond):
		case <-done:
		}
	}
	wait()
	c.SetSession(0)
	wait()
	c.SetSession(8)
	deadline := time.Now().Add(10 * time.Second)
	for !seen(8) && time.Now().Before(deadline) {
		wait()
	}
	if !seen(8) {
		t.Fatalf("the new session after an id of 0 was not recorded: %+v", env.Rec.History().Events)
	}
	for _, e := range env.Rec.History().Events {
		if e.Kind == history.KindSession && e.Detail == "new" && e.Value == 8 && e.Arg != 7 {
			t.Fatalf("the new session's event names %d as the expired one, want 7: %+v", e.Arg, e)
		}
	}
}
