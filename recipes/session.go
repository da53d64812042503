package recipes

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/zkrecipes/internal/tap"
)

// Session owns one go-zookeeper connection and tracks its state and session
// id. Create it with Connect and close it when done (Close, or
// CloseContext to bound the wait yourself); closing ends the ZooKeeper
// session, which deletes every ephemeral node it created.
//
// Invariants: go-zookeeper's event channel is always drained and its event
// callback never blocks on subscribers; every change of session id is
// reported as StateLost (for the old id) before the new session is reported
// as StateConnected.
//
// Lease: the Session keeps its own bound on its session's life, on this
// process's monotonic clock (see LeaseDeadline and LeaseBudget). The
// ensemble cannot expire the session before the send time of the newest
// request or ping answered, plus the negotiated timeout, minus the lag: how
// long a server cut off from its leader may go on answering while the
// leader, which alone expires sessions, no longer hears of us
// (syncLimit x tickTime + tickTime/2 + the leader's retransmission
// allowance + the Session's ping interval; see WithEnsembleTiming and
// WithQuorumRetransmit). Every holding is cancelled (ErrLeaseExpired, which
// errors.Is ErrSuspended) the lease margin before that moment
// (WithLeaseMargin, DefaultLeaseMargin), whatever go-zookeeper has noticed,
// under either loss policy; at that moment itself, without a reply, the
// Session reports StateLost, as Curator does. If the same session then
// comes back (the server was only slow), StateReconnected follows;
// holdings cancelled meanwhile stay cancelled. The lease sends only pings,
// when nothing else was sent for the budget's ping interval. What this
// guarantees: a holder that checks its holding's Context before each
// action stops before the ensemble can expire its session, and so before
// any other client can acquire what it held, as long as the action takes
// effect within the margin and the ensemble's timing is no longer than
// WithEnsembleTiming and WithQuorumRetransmit say. A paused process checks
// nothing; only a fenced write (FencedMulti) is a guarantee against it. A
// negotiated timeout too short for any lease makes every acquisition fail
// with ErrLeaseTooShort.
// docs/design.md derives the bound from ZooKeeper's server code.
//
// A Session is safe for concurrent use.
type Session struct {
	conn    *zk.Conn
	opts    options
	log     *slog.Logger
	tap     *tap.Tap
	ready   chan struct{} // closed once conn is set
	drained chan struct{} // closed when go-zookeeper's event channel is closed
	watches watchRegistry // the Session's watches: Watch's and the WatchSets' (watch.go)
	auth    authGate      // refusals for missing authentication (enforced.go)
	parents parentChecks  // parents checked for squatting (squat.go)
	// liveParents: parents a contender create succeeded under (and no
	// create has found missing since): their first listing is pipelined
	// (pipeline.go). Bounded like parents.
	liveParents parentChecks

	mu       sync.Mutex
	lease    lease // lease.go
	state    State
	id       int64 // current session id, 0 while there is none
	lastID   int64 // the id of the last session seen
	changed  chan struct{}
	subs     map[*Subscription]struct{}
	hooks    map[uint64]func(StateChange)
	nextHook uint64
	closing  bool

	bg     sync.WaitGroup
	bgCtx  context.Context
	bgStop context.CancelFunc
}

// Connect dials the ensemble and returns once a session is established, or
// fails when ctx is done first (the connection is then closed). It costs the
// connect handshake only. A server list that is empty or holds an entry
// other than "host" or "host:port" (port 1..65535; "[v6]:port") fails at
// once with ErrBadArgument: nothing is resolved or dialed; so does an
// invalid option (WithTLS(nil), WithDigestAuth with an empty user). With
// WithDigestAuth, Connect returns once the server has accepted the
// credentials (an error wrapping ErrAuthFailed if it refuses them). It logs
// the servers and options at debug level, without secrets.
func Connect(ctx context.Context, servers []string, opts ...Option) (*Session, error) {
	if err := validateServers(servers); err != nil {
		return nil, err
	}
	if err := ContextError(ctx); err != nil {
		return nil, fmt.Errorf("recipes: connect: %w", err)
	}
	o, err := buildOptions(opts)
	if err != nil {
		return nil, fmt.Errorf("recipes: connect: %w", err)
	}
	s := &Session{
		opts:    o,
		ready:   make(chan struct{}),
		drained: make(chan struct{}),
		changed: make(chan struct{}),
		subs:    make(map[*Subscription]struct{}),
		hooks:   make(map[uint64]func(StateChange)),
	}
	s.tap = tap.New(tap.Sinks{
		// The tap renews the lease from what it reads,
		Handshake: s.leaseHandshake, Renew: s.leaseRenew, PingEvery: s.leasePing, Stall: s.leaseStall,
		// reports refusals for missing authentication, and times calls,
		Auth: s.authReply, Calls: callSink(s.opts.observer),
		// and it corrects the zxid of go-zookeeper's setWatches (internal/tap).
		Fixed: func(from, to int64) {
			s.log.Info("recipes: setWatches carried a zxid above the last one seen before the reconnection; sent with that one",
				"from", fmt.Sprintf("0x%x", from), "to", fmt.Sprintf("0x%x", to))
		},
		Stalled: func() {
			s.log.Warn("recipes: a reply was held " + tap.GateFallback.String() + " for a setWatches that did not come; let through")
		},
	})
	s.log = s.opts.logger
	s.bgCtx, s.bgStop = context.WithCancel(context.Background())
	// zk's option type is unexported; list infers it.
	s.log.Debug("recipes: connect", "servers", servers, "options", s.opts)
	// The layers of a connection: the dialer's TCP connection, TLS, the
	// tap (it reads ZooKeeper's frames in plaintext), go-zookeeper.
	dial := s.opts.dialer
	if s.opts.tls != nil {
		dial = tlsDialer(dial, s.opts.tls)
	}
	zopts := list(zk.WithEventCallback(s.onEvent), zk.WithLogger(zkLogger{s.log}), zk.WithLogInfo(false),
		zk.WithDialer(s.tap.Dialer(dial)))
	if s.opts.tls != nil {
		zopts = append(zopts, zk.WithHostProvider(&nameProvider{}))
	}
	conn, events, err := zk.Connect(servers, s.opts.timeout, zopts...)
	if err != nil {
		s.bgStop()
		return nil, fmt.Errorf("recipes: connect: %w", err)
	}
	s.conn = conn
	close(s.ready)
	go func() {
		// go-zookeeper also copies every event into this 6-slot channel;
		// drain it so nothing ever waits on it. It is closed when the
		// connection's loop ends.
		for range events {
		}
		close(s.drained)
	}()
	if _, err := s.waitUsable(ctx); err != nil {
		_ = s.CloseContext(context.Background())
		return nil, fmt.Errorf("recipes: connect: %w", err)
	}
	if err := s.addAuth(ctx); err != nil {
		_ = s.CloseContext(context.Background())
		return nil, fmt.Errorf("recipes: connect: %w", err)
	}
	return s, nil
}

func list[T any](xs ...T) []T { return xs }

// zkLogger routes go-zookeeper's messages to slog at debug level.
type zkLogger struct{ l *slog.Logger }

func (z zkLogger) Printf(format string, args ...any) {
	z.l.Debug(fmt.Sprintf(format, args...), "component", "go-zookeeper")
}

// ID returns the current session id, or 0 while there is none (before the
// first session, and between an expiry and the next session). Holdings
// record it at acquisition; a different value later means their session is
// lost. When the lease reports StateLost, ID keeps the id until
// go-zookeeper learns whether the server expired it (the session may come
// back as StateReconnected).
func (s *Session) ID() int64 {
	if s == nil {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.id
}

// State returns the current state.
func (s *Session) State() State {
	if s == nil {
		return StateClosed
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state
}

// Conn returns the underlying connection for raw calls. Recipes never need
// it; do not close it (use Session.Close) and do not rely on its event
// channel. Nil for a nil Session.
func (s *Session) Conn() *zk.Conn {
	if s == nil {
		return nil
	}
	return s.conn
}

// ACL returns the Session's default ACL: WithACL's, else DefaultAuthACL
// with WithDigestAuth, else world:anyone with all permissions. The nodes
// the recipes create take theirs from ACLFor, which answers ACL unless an
// ACLProvider (WithACLProvider) answers for the path. Nil for a nil
// Session.
func (s *Session) ACL() []zk.ACL {
	if s == nil {
		return nil
	}
	return s.opts.acl
}

// LossPolicy returns the session's default loss policy.
func (s *Session) LossPolicy() LossPolicy { return s.opts.policy }

// Logger returns the session's logger.
func (s *Session) Logger() *slog.Logger { return s.log }

// MaxData returns the largest request, in bytes on the wire, that the
// session sends (the server's jute.maxbuffer; see WithMaxData): node data
// must fit in it together with the request's path, ACL and header.
func (s *Session) MaxData() int { return s.opts.maxData }

// SessionTimeout returns the session timeout requested at Connect.
func (s *Session) SessionTimeout() time.Duration { return s.opts.timeout }

// Subscribe returns a subscription to state changes, starting with the
// current state. Close it when done. On a nil Session it returns a
// subscription whose Next fails with ErrNilSession.
func (s *Session) Subscribe() *Subscription {
	if s == nil {
		sub := newSubscription(nil)
		sub.finish(ErrNilSession)
		return sub
	}
	sub := newSubscription(s)
	s.mu.Lock()
	defer s.mu.Unlock()
	sub.push(StateChange{State: s.state, SessionID: s.id, At: time.Now()})
	if s.closing {
		sub.finish(ErrClosed)
		return sub
	}
	s.subs[sub] = struct{}{}
	return sub
}

func (s *Session) unsubscribe(sub *Subscription) {
	s.mu.Lock()
	delete(s.subs, sub)
	s.mu.Unlock()
}

// addHook registers f to be called synchronously, in order, for every state
// change; f must not block. It returns the current state and session id
// (read atomically with the registration) and a function removing the hook.
func (s *Session) addHook(f func(StateChange)) (State, int64, func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := s.nextHook
	s.nextHook++
	s.hooks[k] = f
	return s.state, s.id, func() {
		s.mu.Lock()
		delete(s.hooks, k)
		s.mu.Unlock()
	}
}

// check returns ErrNilSession or ErrClosed when the session cannot be used.
// checkCtx is check, then the nil-ctx rule (ErrNilContext).
func (s *Session) checkCtx(ctx context.Context) error {
	if err := s.check(); err != nil {
		return err
	}
	if ctx == nil {
		return ErrNilContext
	}
	return nil
}

func (s *Session) check() error {
	if s == nil || s.conn == nil {
		return ErrNilSession
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return ErrClosed
	}
	return nil
}

// waitUsable waits until the session is connected (or reconnected) and
// returns its id. It fails with ErrClosed, or with ctx's error.
func (s *Session) waitUsable(ctx context.Context) (int64, error) {
	for {
		s.mu.Lock()
		if s.closing {
			s.mu.Unlock()
			return 0, ErrClosed
		}
		if s.state.usable() {
			id := s.id
			s.mu.Unlock()
			return id, nil
		}
		ch := s.changed
		s.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return 0, ContextError(ctx)
		}
	}
}

// retryPause waits a little (or for a state change) before a request that
// failed for connection reasons is tried again; it returns ctx's error, or
// an error wrapping ErrNoAuth at once while the server refuses the Session
// for missing authentication (see enforced.go).
func (s *Session) retryPause(ctx context.Context) error {
	return s.retryOrRefused(ctx)
}

// usableNow reports whether the session is connected right now.
func (s *Session) usableNow() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.closing && s.state.usable()
}

// removeNode deletes a node of session sid: at once when connected, else
// (or if the outcome is ambiguous) in the background while sid lives, so a
// caller giving up during a disconnection returns promptly.
func (s *Session) removeNode(n *node) {
	if n.ambiguous {
		// A late copy of an ambiguous create may still show up.
		defer s.cleanupGUID(n.dialect, n.parent, n.guid)
	}
	if s.ID() != n.sid {
		return // gone with its session
	}
	if !s.usableNow() {
		s.deleteInBackground(n.path, n.sid)
		return
	}
	s.deleteNow(n.path)
}

// changes returns a channel closed at the next state change.
func (s *Session) changes() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.changed
}

// background runs f on a goroutine that Close waits for; f's context is
// cancelled when Close starts. It returns false (and does not run f) once
// the session is closing.
func (s *Session) background(f func(ctx context.Context)) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return false
	}
	s.bg.Add(1)
	go func() {
		defer s.bg.Done()
		f(s.bgCtx)
	}()
	return true
}
