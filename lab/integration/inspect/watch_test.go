package inspect_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/cmd/zkrecipes/inspect"
	"github.com/zkrecipes/zkrecipes/lock"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// watch draws the path, draws it again when a contender arrives (well
// before its -interval of a minute), and stops when its context ends.
func TestWatchRedrawsOnChange(t *testing.T) {
	e := ensemble(t)
	path := testPath(t)
	ctx := ctxFor(t, 2*time.Minute)
	s := connect(t, e.Addrs())
	m, err := lock.New(s, path, lock.WithData([]byte("first")))
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	var out syncBuffer
	wctx, stop := context.WithCancel(ctx)
	done := make(chan int, 1)
	go func() {
		done <- inspect.Main(wctx, append(serverFlags(e), "-interval", "1m", "-clear=false", "watch", path), &out, &out)
	}()
	waitFor(t, time.Minute, "the first view", func() bool { return strings.Contains(out.String(), "contenders: 1\n") })
	m2, err := lock.New(connect(t, e.Addrs()), path, lock.WithData([]byte("second")))
	if err != nil {
		t.Fatal(err)
	}
	locked := make(chan error, 1)
	go func() { locked <- m2.Lock(ctx) }()
	waitFor(t, 30*time.Second, "a view with the waiter", func() bool { return strings.Contains(out.String(), "contenders: 2\n") })
	if err := m.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-locked; err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "a view with the waiter holding", func() bool {
		v := out.String()
		last := v[strings.LastIndex(v, path+"  "):]
		return strings.Contains(last, "contenders: 1\n") && strings.Contains(last, `"second"`)
	})
	stop()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("watch exited %d: %s", code, out.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("watch did not stop with its context")
	}
	if err := m2.Unlock(ctx); err != nil {
		t.Fatal(err)
	}

	// -count bounds the views; with -json each is one document (the path
	// is empty, or already gone: its parent is a container node).
	got := zkrecipes(t, e, "-json", "-count", "2", "-interval", "10ms", "watch", path)
	if n := strings.Count(got, `"kind": "`); n != 2 || strings.Contains(got, `"contenders"`) {
		t.Errorf("-count 2 printed %d views:\n%s", n, got)
	}
}

// A holder whose client is cut off from the servers (its session not yet
// expired) is flagged: its session is connected to no server, and its node
// is listed as stale.
func TestShowDisconnectedHolder(t *testing.T) {
	e := ensemble(t)
	path := testPath(t)
	ctx := ctxFor(t, 2*time.Minute)
	link, err := e.NewLink("cut-holder")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = link.Close() })
	// A long session timeout, so the session outlives the check.
	cut := connect(t, link.Addrs(), recipes.WithSessionTimeout(40*time.Second))
	m, err := lock.New(cut, path, lock.WithData([]byte("cut-off")))
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	holderNode, sid := m.Node(), cut.ID()
	if rep := show(t, e, path); len(rep.Contenders) != 1 || rep.Contenders[0].Live == nil || !*rep.Contenders[0].Live || len(rep.Stale) != 0 {
		t.Fatalf("before the cut: %+v", rep)
	}
	if err := link.Cut(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = link.Restore() })
	var rep *inspect.Report
	waitFor(t, 20*time.Second, "the holder flagged disconnected", func() bool {
		rep = show(t, e, path)
		return len(rep.Contenders) == 1 && rep.Contenders[0].Live != nil && !*rep.Contenders[0].Live
	})
	if c := rep.Contenders[0]; c.Path != holderNode || c.Session != hex(sid) || !c.Holds {
		t.Errorf("holder %+v, want %s of %s", c, holderNode, hex(sid))
	}
	if len(rep.Stale) != 1 || rep.Stale[0].Path != holderNode || !strings.Contains(rep.Stale[0].Why, "connected to no server") {
		t.Errorf("stale %+v", rep.Stale)
	}
	text := zkrecipes(t, e, "show", path)
	if !strings.Contains(text, hex(sid)+" (disconnected)") || !strings.Contains(text, "stale:\n  "+inspect.ShortName(holderNode[strings.LastIndex(holderNode, "/")+1:])+": ") {
		t.Errorf("text:\n%s", text)
	}
	if err := link.Restore(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, time.Minute, "the holder's session back", func() bool { return cut.State() == recipes.StateReconnected })
	// The holding was lost to the cut (it steps down on suspension): Unlock
	// says so, and deletes the node the same session still owns.
	if err := m.Unlock(ctx); !errors.Is(err, recipes.ErrReleased) || !errors.Is(err, recipes.ErrSuspended) {
		t.Errorf("Unlock after the cut: %v, want ErrReleased with ErrSuspended", err)
	}
	waitFor(t, time.Minute, "the node gone", func() bool { return len(children(t, cut, path)) == 0 })
}
