package recipes

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/zkrecipes/internal/tap"
)

// recorder is an Observer keeping what it sees.
type recorder struct {
	BaseObserver
	mu    sync.Mutex
	calls []CallEvent
}

func (r *recorder) ObserveCall(c CallEvent) {
	r.mu.Lock()
	r.calls = append(r.calls, c)
	r.mu.Unlock()
}

// TestCallSink: the tap's calls reach the observer as CallEvents, with the
// op's name, the path, the session, and the error of the reply's code
// (nil for 0, go-zookeeper's error when it has one, an error naming an
// unknown code) or zk.ErrConnectionClosed for a call the connection's end
// cut short; without an observer there is no sink and the tap times
// nothing.
func TestCallSink(t *testing.T) {
	if callSink(nil) != nil {
		t.Fatal("a sink without an observer")
	}
	rec := &recorder{}
	callSink(rec)([]tap.Call{{Op: 1, Path: "/a", SessionID: 0x77, Duration: time.Millisecond},
		{Op: 4, Path: "/b", SessionID: 0x77, Code: -101}, {Op: 14, SessionID: 0x77, Code: -999},
		{Op: 3, Path: "/c", SessionID: 0x77, Closed: true}})
	type call struct {
		op, path string
		err      error
	}
	want := []call{{"create", "/a", nil}, {"getData", "/b", zk.ErrNoNode}, {"multi", "", zk.ErrUnknown},
		{"exists", "/c", zk.ErrConnectionClosed}}
	if len(rec.calls) != len(want) {
		t.Fatalf("calls = %+v, want %d", rec.calls, len(want))
	}
	for i, w := range want {
		g := rec.calls[i]
		if g.Op != w.op || g.Path != w.path || g.SessionID != 0x77 || !errors.Is(g.Err, w.err) || (w.err == nil) != (g.Err == nil) {
			t.Errorf("call %d = %+v, want %+v in session 0x77", i, g, w)
		}
	}
	if rec.calls[0].Duration != time.Millisecond {
		t.Errorf("duration %v, want 1ms", rec.calls[0].Duration)
	}
	if s := rec.calls[2].Err.Error(); !strings.Contains(s, "-999") {
		t.Errorf("unknown code's error %q does not name it", s)
	}
}

// TestObservers: nil entries are dropped, one observer is returned as is,
// several each see every event.
func TestObservers(t *testing.T) {
	if Observers(nil, nil) != nil {
		t.Error("Observers of nils is not nil")
	}
	a, b := &recorder{}, &recorder{}
	if Observers(nil, a) != Observer(a) {
		t.Error("one observer is not returned as is")
	}
	Observers(a, nil, b).ObserveCall(CallEvent{Op: "sync"})
	if len(a.calls) != 1 || len(b.calls) != 1 {
		t.Errorf("calls seen: %d and %d, want 1 each", len(a.calls), len(b.calls))
	}
}

// TestSlogObserver: the attributes docs/observability.md names, at the
// levels it names.
func TestSlogObserver(t *testing.T) {
	if _, err := NewSlogObserver(nil); !errors.Is(err, ErrBadArgument) {
		t.Errorf("NewSlogObserver(nil) = %v, want ErrBadArgument", err)
	}
	var buf bytes.Buffer
	o, err := NewSlogObserver(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})))
	if err != nil {
		t.Fatal(err)
	}
	o.ObserveCall(CallEvent{Op: "getData", Path: "/x", SessionID: 0x10, Duration: time.Millisecond, Err: zk.ErrNoNode})
	o.ObserveHolding(HoldingEvent{Phase: HoldingAcquired, Kind: "lock", Path: "/l/n", SessionID: 0x10, Waited: 2 * time.Second})
	o.ObserveHolding(HoldingEvent{Phase: HoldingEnded, Kind: "lock", Path: "/l/n", SessionID: 0x10, Held: time.Second, Cause: ErrSuspended})
	o.ObserveHolding(HoldingEvent{Phase: HoldingEnded, Kind: "lease", Path: "/s/n", Cause: ErrReleased})
	o.ObserveLease(LeaseEvent{Expired: true, SessionID: 0x10, Remaining: -time.Millisecond, Timeout: 4 * time.Second, Margin: 400 * time.Millisecond})
	o.ObserveState(StateChange{State: StateSuspended, SessionID: 0x10})
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	want := []string{
		`level=DEBUG msg="zookeeper call" op=getData path=/x session=0x10 duration=1ms err="zk: node does not exist"`,
		`level=DEBUG msg="zookeeper holding acquired" kind=lock path=/l/n session=0x10 waited=2s`,
		`level=WARN msg="zookeeper holding ended" kind=lock path=/l/n session=0x10 held=1s cause=`,
		`level=DEBUG msg="zookeeper holding ended" kind=lease path=/s/n session=0x0 held=0s cause=`,
		`level=WARN msg="zookeeper lease expired" session=0x10 remaining=-1ms timeout=4s margin=400ms`,
		`level=DEBUG msg="zookeeper state" state=suspended session=0x10`,
	}
	if len(lines) != len(want) {
		t.Fatalf("logged:\n%s\nwant %d lines", buf.String(), len(want))
	}
	for i, w := range want {
		if !strings.Contains(lines[i], w) {
			t.Errorf("line %d = %s\nwant it to contain %s", i, lines[i], w)
		}
	}
}

// TestLabels: the metric labels of outcomes and ends, in matching order.
func TestLabels(t *testing.T) {
	for err, want := range map[error]string{
		nil: "ok", zk.ErrNoNode: "no_node", fmt.Errorf("x: %w", zk.ErrConnectionClosed): "connection_closed",
		codeErr(-999): "error", codeErr(-103): "bad_version",
	} {
		if got := (CallEvent{Err: err}).Outcome(); got != want {
			t.Errorf("Outcome(%v) = %s, want %s", err, got, want)
		}
	}
	for cause, want := range map[error]string{
		ErrReleased: "released", ErrLeaseExpired: "lease_expired", ErrSuspended: "suspended",
		closedCause: "closed", fmt.Errorf("%w: session 0x1", ErrSessionLost): "session_lost",
		ErrNodeDeleted: "node_deleted", ErrRevoked: "revoked", errors.New("x"): "other",
	} {
		if got := (HoldingEvent{Phase: HoldingEnded, Cause: cause}).End(); got != want {
			t.Errorf("End(%v) = %s, want %s", cause, got, want)
		}
	}
	if e := (HoldingEvent{Phase: HoldingAcquired}); e.End() != "" || e.Lost() {
		t.Errorf("an acquisition: End %q, Lost %v", e.End(), e.Lost())
	}
}

// BenchmarkHoldingObserver measures the core's report of one holding
// (acquired, then ended when its context is cancelled) without an
// observer and with one; both include making and cancelling the
// holding's context.
func BenchmarkHoldingObserver(b *testing.B) {
	for _, bc := range []struct {
		name string
		o    Observer
	}{{"none", nil}, {"observer", BaseObserver{}}} {
		b.Run(bc.name, func(b *testing.B) {
			s := &Session{opts: options{observer: bc.o}}
			spec := &Spec{Role: RoleLock, begun: time.Now()}
			n := &node{path: "/zkrecipes/bench/_c_x-lock-0000000001", sid: 0x77}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				h := &Holding{node: n}
				h.ctx, h.cancel = context.WithCancelCause(context.Background())
				s.observeHolding(spec, h)
				h.cancel(ErrReleased)
			}
		})
	}
}
