package recipes_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/recipes"
)

func TestIsConnErr(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want bool
	}{
		{nil, false},
		{zk.ErrConnectionClosed, true},
		{zk.ErrNoServer, true},
		{zk.ErrSessionMoved, true},
		{zk.ErrClosing, true},
		{zk.ErrSessionExpired, true},
		{io.EOF, true},
		{io.ErrUnexpectedEOF, true},
		{net.ErrClosed, true},
		{&net.OpError{Op: "write", Err: errors.New("broken pipe")}, true},
		{fmt.Errorf("wrapped: %w", zk.ErrConnectionClosed), true},
		{zk.ErrNoNode, false},
		{zk.ErrNodeExists, false},
		{zk.ErrBadVersion, false},
		{context.Canceled, false},
		{recipes.ErrClosed, false},
	} {
		if got := recipes.IsConnErr(tt.err); got != tt.want {
			t.Errorf("IsConnErr(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
}

func TestCheckData(t *testing.T) {
	for _, tt := range []struct {
		n, limit int
		ok       bool
	}{
		{0, 0, true},
		{recipes.DefaultMaxData, 0, true},
		{recipes.DefaultMaxData + 1, 0, false},
		{recipes.DefaultMaxData + 1, -1, false},
		{10, 10, true},
		{11, 10, false},
	} {
		err := recipes.CheckData(make([]byte, tt.n), tt.limit)
		if (err == nil) != tt.ok || (err != nil && (!errors.Is(err, recipes.ErrDataTooLarge) || !strings.HasPrefix(err.Error(), "recipes: "))) {
			t.Errorf("CheckData(%d bytes, %d) = %v, want ok %v", tt.n, tt.limit, err, tt.ok)
		}
	}
}

// Do on a nil or never-connected Session fails with ErrNilSession before
// calling, and that error is Stopped; a call's own answer is not.
func TestDoNilSession(t *testing.T) {
	for _, s := range []*recipes.Session{nil, new(recipes.Session)} {
		calls := 0
		_, err := recipes.Do(context.Background(), s, func(*zk.Conn, int64) (int, error) {
			calls++
			return 0, nil
		})
		if !errors.Is(err, recipes.ErrNilSession) || !recipes.Stopped(err) || calls != 0 {
			t.Errorf("Do(%p) = %v (Stopped %v) after %d calls; want ErrNilSession, Stopped, 0 calls", s, err, recipes.Stopped(err), calls)
		}
		if err := s.Pause(context.Background()); !errors.Is(err, recipes.ErrNilSession) {
			t.Errorf("Pause(%p) = %v, want ErrNilSession", s, err)
		}
		if err := s.EnsureParents("/a"); !errors.Is(err, recipes.ErrNilSession) {
			t.Errorf("EnsureParents(%p) = %v, want ErrNilSession", s, err)
		}
		calls = 0
		err = recipes.CreateUnder(context.Background(), s, "/a", func(*zk.Conn, int64) error {
			calls++
			return nil
		})
		if !errors.Is(err, recipes.ErrNilSession) || !recipes.Stopped(err) || calls != 0 {
			t.Errorf("CreateUnder(%p) = %v (Stopped %v) after %d calls; want ErrNilSession, Stopped, 0 calls", s, err, recipes.Stopped(err), calls)
		}
		if _, err := s.WaitUsable(context.Background()); !errors.Is(err, recipes.ErrNilSession) {
			t.Errorf("WaitUsable(%p) = %v, want ErrNilSession", s, err)
		}
		if err := s.CheckParent(context.Background(), "/a"); !errors.Is(err, recipes.ErrNilSession) {
			t.Errorf("CheckParent(%p) = %v, want ErrNilSession", s, err)
		}
		if err := s.DeleteOwned(context.Background(), "/a", 1, 0); !errors.Is(err, recipes.ErrNilSession) || !recipes.Stopped(err) {
			t.Errorf("DeleteOwned(%p) = %v, want ErrNilSession, Stopped", s, err)
		}
		// Nothing to do, must not panic.
		s.DeleteGuaranteed("/a", 0)
		s.DeleteOwnedGuaranteed("/a", 1, 0)
		s.CleanupGUID(recipes.Curator, "/a", "guid")
	}
	var h *recipes.Holding
	if err := h.Cause(); !errors.Is(err, recipes.ErrBadArgument) {
		t.Errorf("nil Holding's Cause = %v, want ErrBadArgument", err)
	}
	h.OnLoss(func(error) { t.Error("OnLoss of a nil Holding called f") })()
	var w *recipes.Watch
	w.OnFire(func(zk.Event) { t.Error("OnFire of a nil Watch called f") })
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := recipes.Do(ctx, nil, func(*zk.Conn, int64) (int, error) { return 0, nil }); !errors.Is(err, context.Canceled) || !recipes.Stopped(err) {
		t.Errorf("Do with a done ctx = %v, want context.Canceled, Stopped", err)
	}
	if err := recipes.CreateUnder(ctx, nil, "/a", func(*zk.Conn, int64) error { return nil }); !recipes.Stopped(err) {
		t.Errorf("CreateUnder with a done ctx on a nil Session = %v, want Stopped", err)
	}
}

func TestStopped(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want bool
	}{
		{nil, false},
		{zk.ErrNoNode, false},
		{context.Canceled, false}, // not from Do: a call's own error
		{recipes.ErrClosed, false},
	} {
		if got := recipes.Stopped(tt.err); got != tt.want {
			t.Errorf("Stopped(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
}

// TestAnswer: a refusal gains recipes.ErrNoAuth and keeps zk.ErrNoAuth;
// other results pass unchanged.
func TestAnswer(t *testing.T) {
	for _, err := range []error{zk.ErrNoAuth, fmt.Errorf("op: %w", zk.ErrNoAuth)} {
		got := recipes.Answer(err)
		if !errors.Is(got, recipes.ErrNoAuth) || !errors.Is(got, zk.ErrNoAuth) {
			t.Errorf("Answer(%v) = %v", err, got)
		}
	}
	for _, err := range []error{nil, zk.ErrNoNode, zk.ErrConnectionClosed} {
		if got := recipes.Answer(err); got != err {
			t.Errorf("Answer(%v) = %v", err, got)
		}
	}
}
