package faults

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/chaos/cluster"
	"github.com/zkrecipes/zkrecipes/chaos/history"
	"github.com/zkrecipes/zkrecipes/testenv"
)

// TestPlacedIsolation, against a real ensemble: clients pinned by Pins
// have their sessions on their pinned server (its cons lists them);
// isolate-holder-follower strikes the holder on the follower, records the
// placement it confirmed, and takes effect (the follower stops serving,
// the leader still leads); its heal brings the quorum back. Without pins,
// the fault fails with ErrNotExercised instead of striking anything.
func TestPlacedIsolation(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a ZooKeeper ensemble")
	}
	e := testenv.New(t, testenv.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ldr, err := e.Leader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	f, err := ByName("isolate-holder-follower")
	if err != nil {
		t.Fatal(err)
	}
	newEnv := func(pins []int) *cluster.Env {
		return &cluster.Env{Ensemble: e, Rec: history.NewRecorder(), SessionTimeout: 2 * time.Second, Clients: 2, Root: "/", Pins: pins}
	}
	connect := func(env *cluster.Env, name string) *cluster.Client {
		c, err := env.NewClient(name)
		if err != nil {
			t.Fatal(err)
		}
		conn, err := env.Connect(c)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close(); _ = c.Link.Close() })
		deadline := time.Now().Add(30 * time.Second)
		for c.Session() == 0 || (c.Pin() >= 0 && !sessionOn(ctx, e, c.Pin(), c.Session())) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: session 0x%x not listed by server %d's cons", name, c.Session(), c.Pin())
			}
			time.Sleep(20 * time.Millisecond)
		}
		if c.Pin() >= 0 && (len(c.Addrs()) != 1 || c.Server() != c.Pin()) {
			t.Fatalf("%s: addresses %v, dialled server %d, want only server %d", name, c.Addrs(), c.Server(), c.Pin())
		}
		return c
	}

	unplaced := newEnv(nil)
	u := connect(unplaced, "u1")
	u.Log.Acquired("/k", 1, "")
	if _, _, err := f.Inject(ctx, unplaced, Window{}); !errors.Is(err, ErrNotExercised) {
		t.Fatalf("inject without placement: %v, want ErrNotExercised", err)
	}

	env := newEnv(Pins(e.Servers(), ldr, 0))
	holder, waiter := connect(env, "c1"), connect(env, "c2")
	if holder.Pin() == ldr || waiter.Pin() != ldr {
		t.Fatalf("pins %v with leader %d: c1 must be on a follower, c2 on the leader", env.Pins, ldr)
	}
	holder.Log.Acquired("/k", 2, "")
	heal, target, err := f.Inject(ctx, env, Window{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if heal != nil {
			_ = heal(context.Background())
		}
	}()
	if target.Client != "c1" || target.ClientRole != RoleHolder || len(target.Servers) != 1 || target.Servers[0].Index != holder.Pin() {
		t.Errorf("target %s, want c1 (holder) on server %d", target, holder.Pin())
	}
	placed := map[string]Placed{}
	for _, p := range target.Placed {
		placed[p.Client] = p
	}
	if p := placed["c1"]; p.Server != holder.Pin() || p.ServerRole != RoleFollower || p.ClientRole != RoleHolder {
		t.Errorf("c1 placed %+v, want the holder on follower %d", p, holder.Pin())
	}
	if p := placed["c2"]; p.Server != ldr || p.ServerRole != RoleLeader || p.ClientRole != RoleWaiter {
		t.Errorf("c2 placed %+v, want a waiter on leader %d", p, ldr)
	}
	if target.Confirmed == "" {
		t.Error("the fault recorded no confirmation")
	}
	if m, err := e.Mode(ctx, holder.Pin()); err == nil {
		t.Errorf("the cut follower still serves as %s", m)
	}
	if i, err := e.Leader(ctx); err != nil || i != ldr {
		t.Errorf("leader %d (%v) during the cut, want %d", i, err, ldr)
	}
	err = heal(ctx)
	heal = nil
	if err != nil {
		t.Fatal(err)
	}
	if m, err := e.Mode(ctx, holder.Pin()); err != nil || m != testenv.ModeFollower {
		t.Errorf("after the heal, server %d: %q %v, want a follower", holder.Pin(), m, err)
	}
}
