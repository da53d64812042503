package history

import (
	"bytes"
	"compress/gzip"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestHoldingNow(t *testing.T) {
	r := NewRecorder()
	if _, has := r.HoldingNow([]string{"c1"}); has {
		t.Fatal("an empty history has holdings")
	}
	c1, c2, c3 := r.Client("c1"), r.Client("c2"), r.Client("c3")
	c1.Acquired("/l", 1, "")
	c1.Released("/l", 1)
	c2.Acquired("/l", 2, "")
	c1.Invoke(FnRead, "/r", 0).OK(0)
	c3.Acquired("/l", 3, "")
	c3.Lost("/l", 3, "expired")
	holding, has := r.HoldingNow([]string{"c1", "c2", "c3", "c4"})
	if !has || holding["c1"] || !holding["c2"] || holding["c3"] || holding["c4"] {
		t.Fatalf("holding %v, has %v; want only c2", holding, has)
	}
}

// TestPending: a client's operation is pending from its call until its
// outcome (OK, Fail or Unknown), whatever the other clients and its other
// operations record meanwhile.
func TestPending(t *testing.T) {
	tests := []struct {
		name string
		play func(c1, c2 *ClientLog)
		want bool
	}{
		{"nothing recorded", func(c1, c2 *ClientLog) {}, false},
		{"called", func(c1, c2 *ClientLog) { c1.Invoke(FnEnter, "/b", 0) }, true},
		{"called, then other events", func(c1, c2 *ClientLog) {
			c1.Invoke(FnEnter, "/b", 0)
			c1.Invoke(FnRead, "/r", 0).OK(1)
			c2.Invoke(FnEnter, "/b", 0).OK(0)
			c1.Acquired("/l", 1, "")
		}, true},
		{"returned", func(c1, c2 *ClientLog) { c1.Invoke(FnEnter, "/b", 0).OK(0) }, false},
		{"failed", func(c1, c2 *ClientLog) { c1.Invoke(FnEnter, "/b", 0).Fail("lost") }, false},
		{"unknown", func(c1, c2 *ClientLog) { c1.Invoke(FnEnter, "/b", 0).Unknown("cut") }, false},
		{"returned, called again", func(c1, c2 *ClientLog) {
			c1.Invoke(FnEnter, "/b", 0).OK(0)
			c1.Invoke(FnEnter, "/b2", 0)
		}, true},
		{"another client's call", func(c1, c2 *ClientLog) { c2.Invoke(FnEnter, "/b", 0) }, false},
		{"another operation's call", func(c1, c2 *ClientLog) { c1.Invoke(FnLeave, "/b", 0) }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewRecorder()
			tt.play(r.Client("c1"), r.Client("c2"))
			if got := r.Pending("c1", FnEnter); got != tt.want {
				t.Errorf("Pending(c1, enter) = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestLoadGzip: Load reads a history saved as is and one gzipped, as the
// chaos report keeps them.
func TestLoadGzip(t *testing.T) {
	rec := NewRecorder()
	rec.Client("c1").Acquired("/l", 3, "")
	h := rec.History()
	dir := t.TempDir()
	plain := filepath.Join(dir, "h.json")
	if err := Save(plain, h); err != nil {
		t.Fatal(err)
	}
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	if err := h.WriteJSON(zw); err != nil {
		t.Fatal(err)
	}
	zw.Close()
	zipped := filepath.Join(dir, "h.json.gz")
	if err := os.WriteFile(zipped, z.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{plain, zipped} {
		got, err := Load(p)
		if err != nil || len(got.Events) != 1 || got.Events[0].Token != 3 {
			t.Errorf("%s: %+v, %v", filepath.Base(p), got.Events, err)
		}
	}
	bad := filepath.Join(dir, "bad.gz")
	os.WriteFile(bad, []byte{0x1f, 0x8b, 0, 1}, 0o644)
	if _, err := Load(bad); !errors.Is(err, ErrMalformed) {
		t.Errorf("a broken gzip file: %v, want ErrMalformed", err)
	}
}

// TestBehind: the clients the liveness checker expects to progress after a
// heal are the workload clients that recorded before it and have not
// progressed since; a client that only joined after it, one that
// progressed after it, and the nemesis, runner, audit and quiesced
// records are not behind.
func TestBehind(t *testing.T) {
	r := NewRecorder()
	early, late, moved := r.Client("early"), r.Client("late"), r.Client("moved")
	early.Invoke(FnRead, "/r", 0).OK(0)
	moved.Invoke(FnRead, "/r", 0).OK(0)
	for _, name := range []string{Nemesis, RunnerClient, Auditor, Quiesced} {
		r.Add(Event{Client: name, Kind: KindFaultStart})
	}
	heal := r.Add(Event{Client: Nemesis, Kind: KindFaultEnd}).Time
	if got := r.Behind(heal); !slices.Equal(got, []string{"early", "moved"}) {
		t.Fatalf("Behind at the heal = %v, want [early moved]", got)
	}
	late.Invoke(FnRead, "/r", 0) // joined after the heal, no progress yet
	moved.Invoke(FnRead, "/r", 0).OK(0)
	if got := r.Behind(heal); !slices.Equal(got, []string{"early"}) {
		t.Fatalf("Behind after moved progressed = %v, want [early]", got)
	}
	early.Invoke(FnRead, "/r", 0).OK(0)
	if got := r.Behind(heal); len(got) != 0 {
		t.Fatalf("Behind once all progressed = %v, want none", got)
	}
}

// TestProgress: Progress counts what the throughput checker counts, the
// workload clients' progress events, and nothing else.
func TestProgress(t *testing.T) {
	r := NewRecorder()
	c := r.Client("c1")
	want := 0
	for _, tc := range []struct {
		add      func()
		progress bool
	}{
		{func() { c.Invoke(FnRead, "/r", 0).OK(0) }, true},
		{func() { c.Invoke(FnRead, "/r", 0).Fail("lost") }, false},
		{func() { c.Invoke(FnCAS, "/r", 1).Unknown("cut") }, false},
		{func() { c.Acquired("/l", 1, "") }, true},
		{func() { c.Released("/l", 1) }, false},
		{func() { c.Fenced("/f", 1, 2, true, "") }, true},
		{func() { c.Fenced("/f", 1, 3, false, "stale") }, false},
		{func() { r.Add(Event{Client: Nemesis, Kind: KindOK}) }, false},
		{func() { r.Add(Event{Client: RunnerClient, Kind: KindOK}) }, false},
		{func() { r.Add(Event{Client: Auditor, Kind: KindAcquired}) }, false},
		{func() { r.Add(Event{Client: "w2", Kind: KindOK, Time: Now() - 1e6}) }, true}, // a worker's event, stamped earlier
	} {
		tc.add()
		if tc.progress {
			want++
		}
		if got := r.Progress(); got != want {
			t.Fatalf("Progress = %d, want %d", got, want)
		}
	}
	h := r.History()
	n := 0
	for _, e := range h.Events {
		if IsWorkloadClient(e.Client) && IsProgress(e) {
			n++
		}
	}
	if n != want {
		t.Fatalf("the history has %d workload progress events, Progress said %d", n, want)
	}
}

func TestHealed(t *testing.T) {
	tests := []struct {
		e    Event
		want bool
	}{
		{Event{Kind: KindFaultEnd, Key: "cut"}, true},
		{Event{Kind: KindFaultEnd, Key: "pause", Detail: NotInjected + ": refused"}, false},
		{Event{Kind: KindFaultStart, Key: "cut"}, false},
		{Event{Kind: KindOK}, false},
	}
	for _, tt := range tests {
		if got := Healed(tt.e); got != tt.want {
			t.Errorf("Healed(%+v) = %v, want %v", tt.e, got, tt.want)
		}
	}
}
