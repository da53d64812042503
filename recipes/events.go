// How the Session follows go-zookeeper's session events: its state, the
// subscriptions and hooks told of each change (StateChange).

package recipes

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/go-zookeeper/zk"
)

// onEvent is go-zookeeper's event callback. It runs on the connection's
// goroutines and must not block: it only updates state under s.mu, queues
// changes on subscriptions and calls hooks (which only cancel contexts),
// and hands watch events to the WatchSets (which only queue them) and to
// the watch registry (which closes channels and runs non-blocking calls).
func (s *Session) onEvent(ev zk.Event) {
	if ev.Type != zk.EventSession {
		s.watchEvent(ev) // watch events: to the WatchSets and the armed watches
		return
	}
	<-s.ready // Connect sets s.conn right after zk.Connect returns
	var out []StateChange
	now := time.Now()
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		return
	}
	s.lease.down = false // go-zookeeper speaks for the connection again
	switch ev.State {
	case zk.StateHasSession:
		id := s.conn.SessionID()
		switch {
		case s.lastID != 0 && id != s.lastID:
			if s.state != StateLost {
				out = append(out, StateChange{State: StateLost, SessionID: s.lastID, At: now})
			}
			out = append(out, StateChange{State: StateConnected, SessionID: id, At: now})
		case s.lastID == 0:
			out = append(out, StateChange{State: StateConnected, SessionID: id, At: now})
		case s.state == StateSuspended, s.state == StateLost && s.id == id:
			// Lost with the same id: the lease had given the session up,
			// but the server still had it.
			out = append(out, StateChange{State: StateReconnected, SessionID: id, At: now})
		}
		s.id, s.lastID = id, id
	case zk.StateDisconnected:
		if s.state.usable() {
			out = append(out, StateChange{State: StateSuspended, SessionID: s.id, At: now})
		}
	case zk.StateExpired:
		if s.lastID != 0 && s.state != StateLost {
			out = append(out, StateChange{State: StateLost, SessionID: s.lastID, At: now})
		}
		s.id = 0
	}
	hooks := s.applyLocked(out)
	s.mu.Unlock()
	s.runHooks(hooks, out)
}

// applyLocked records changes, wakes waiters and queues the changes on
// subscriptions; it returns the hooks to call (outside the lock).
func (s *Session) applyLocked(out []StateChange) []func(StateChange) {
	if len(out) == 0 {
		return nil
	}
	for _, c := range out {
		s.state = c.State
		for sub := range s.subs {
			sub.push(c)
		}
		level := slog.LevelDebug // connected, closed: routine
		switch c.State {
		case StateSuspended, StateReconnected:
			level = slog.LevelInfo
		case StateLost:
			level = slog.LevelWarn
		}
		s.log.Log(context.Background(), level, "zookeeper session state", "state", c.State.String(), "session", fmt.Sprintf("0x%x", c.SessionID))
	}
	close(s.changed)
	s.changed = make(chan struct{})
	hooks := make([]func(StateChange), 0, len(s.hooks))
	for _, h := range s.hooks {
		hooks = append(hooks, h)
	}
	return hooks
}

func (s *Session) runHooks(hooks []func(StateChange), out []StateChange) {
	s.observeStates(out)
	for _, c := range out {
		for _, h := range hooks {
			h(c)
		}
	}
}
