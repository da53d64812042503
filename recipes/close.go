// Closing a Session: Close and CloseContext end the ZooKeeper session and
// everything the Session runs.

package recipes

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/go-zookeeper/zk"
)

// Session is an io.Closer: Close needs no context.
var _ io.Closer = (*Session)(nil)

// Close is CloseContext bounded by the session timeout requested at
// Connect (SessionTimeout): by then the server has, or is about to have,
// expired the session on its own if the close request never reached it.
// It satisfies io.Closer, so a Session can be handed to code that closes
// resources generically (defer s.Close()).
func (s *Session) Close() error {
	if s == nil || s.conn == nil {
		return ErrNilSession
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.opts.timeout)
	defer cancel()
	return s.CloseContext(ctx)
}

// CloseContext ends the session: holdings are cancelled (cause ErrClosed,
// which also matches ErrSessionLost), the server is told to close the
// session (1 closeSession request; the server deletes its ephemeral nodes,
// waking their watchers), and CloseContext waits for the
// connection's and the session's background goroutines until ctx is done;
// then it returns ctx's error (ContextError) while the teardown finishes in
// the background. Everything but that wait happens whatever ctx says: an
// already-done ctx still closes the session, and returns ctx's error at
// once. Closing again returns nil; a nil Session returns ErrNilSession, a
// nil ctx ErrNilContext (and the Session stays open).
func (s *Session) CloseContext(ctx context.Context) error {
	if s == nil || s.conn == nil {
		return ErrNilSession
	}
	if ctx == nil {
		return ErrNilContext
	}
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		return nil
	}
	out := []StateChange{{State: StateClosed, SessionID: s.id, At: time.Now()}}
	hooks := s.applyLocked(out)
	s.closing = true
	s.stopLeaseLocked()
	for sub := range s.subs {
		sub.finish(ErrClosed)
	}
	s.subs = nil
	s.mu.Unlock()
	s.runHooks(hooks, out)
	s.bgStop()
	s.closeWatches()

	done := make(chan struct{})
	go func() {
		// go-zookeeper's Close waits up to a few seconds for the server's
		// answer; run it here so that ctx bounds Close.
		s.conn.Close()
		<-s.drained
		s.bg.Wait()
		close(done)
	}()
	if err := ContextError(ctx); err != nil {
		return fmt.Errorf("recipes: close: %w", err) // no wait at all
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("recipes: close: %w", ContextError(ctx))
	}
}

// closedCause is the cause holdings get when their session is closed.
var closedCause = fmt.Errorf("%w (%w)", ErrClosed, ErrSessionLost)

// isConnErr reports whether err means the request's outcome is unknown or
// the connection is unusable right now (as opposed to an answer from the
// server).
func isConnErr(err error) bool {
	return errors.Is(err, zk.ErrConnectionClosed) || errors.Is(err, zk.ErrNoServer) ||
		errors.Is(err, zk.ErrSessionMoved) || errors.Is(err, zk.ErrClosing) ||
		errors.Is(err, zk.ErrSessionExpired) || isNetErr(err)
}
