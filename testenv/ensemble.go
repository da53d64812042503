package testenv

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/google/uuid"
	"github.com/rs/zerolog"
	zlog "github.com/rs/zerolog/log"
)

// backend runs the servers of one ensemble. Indexes are 0-based.
type backend interface {
	// start brings every server up (not necessarily serving yet).
	start(ctx context.Context) error
	// clientAddr is server i's client port as reachable from this process.
	clientAddr(i int) string
	kill(ctx context.Context, i int) error
	stop(ctx context.Context, i int) error
	startServer(ctx context.Context, i int) error
	pause(ctx context.Context, i int) error
	resume(ctx context.Context, i int) error
	// isolate drops server i's quorum and election traffic in the
	// directions dir names (Both, Inbound, Outbound).
	isolate(ctx context.Context, i int, dir Direction) error
	rejoin(ctx context.Context, i int) error
	// exited reports whether server i's process is known to have ended.
	exited(ctx context.Context, i int) bool
	// logs returns the tail of server i's log, for failure messages.
	logs(ctx context.Context, i int) string
	close(ctx context.Context) error
}

// serverState is what the ensemble did to a server, for WaitQuorum.
type serverState int

const (
	running serverState = iota
	down                // killed or stopped
	paused
	isolated
)

// Ensemble is a running ZooKeeper ensemble. Its embedded *Link is the
// default link: Cut, Blackhole, ExpireSession and the other link faults on an
// Ensemble act on it. Safe for concurrent use.
type Ensemble struct {
	*Link

	cfg     Config
	id      string
	backend Backend
	b       backend
	tp      *toxiproxy.ApiServer

	// Set up by setupSecurity before the servers start, then read-only.
	pki           *pki        // with TLS
	tlsDir        string      // with TLS: the PKI's files on this host
	superPassword string      // with EnforceAuth
	extTLS        *tls.Config // Attach's TLS configuration, or nil

	// version is the release server 0 reported once the quorum formed.
	version string

	mu     sync.Mutex
	state  []serverState
	links  []*Link
	closed bool
}

// Start starts an ensemble as cfg describes, waits until a quorum serves, and
// returns it. The caller must Close it. With the containers backend and the
// default image, Start first builds the image if it is missing (EnsureImage).
func Start(ctx context.Context, cfg Config) (*Ensemble, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if cfg.Backend == BackendAuto {
		cfg.Backend = BackendProcesses
		if dockerAnswers(ctx) {
			cfg.Backend = BackendContainers
		}
	}
	Reap(ctx, cfg.Logger) // what killed test binaries left behind
	if cfg.Backend == BackendContainers {
		if err := EnsureImage(ctx, cfg.Image, cfg.Logger); err != nil {
			return nil, err
		}
	}
	// A port picked free can be taken by another process before the server
	// binds it; such a start fails fast and is tried again on new ports.
	for attempt := 1; ; attempt++ {
		e, err := startOnce(ctx, cfg)
		if err == nil || attempt == 3 || !errors.Is(err, errRetryStart) || ctx.Err() != nil {
			return e, err
		}
		cfg.Logger.Warn("testenv: start failed, trying again", "attempt", attempt, "err", err)
	}
}

// errRetryStart marks a start that failed early enough to try again.
var errRetryStart = errors.New("testenv: start failed early")

// quietToxics silences zerolog's global logger, through which Toxiproxy's
// toxics write trace lines (the bandwidth toxic's "interrupted during
// writing data") to stderr, in the middle of test output.
var quietToxics sync.Once

func startOnce(ctx context.Context, cfg Config) (*Ensemble, error) {
	quietToxics.Do(func() { zlog.Logger = zerolog.Nop() })
	e := &Ensemble{
		cfg:     cfg,
		id:      uuid.NewString()[:8],
		backend: cfg.Backend,
		state:   make([]serverState, cfg.Servers),
		tp:      toxiproxy.NewServer(toxiproxy.NewMetricsContainer(nil), zerolog.Nop()),
	}
	var err error
	switch cfg.Backend {
	case BackendContainers:
		e.b, err = newContainerBackend(e)
	case BackendProcesses:
		e.b, err = newProcessBackend(e)
	}
	if err != nil {
		return nil, err
	}
	sctx, cancel := context.WithTimeout(ctx, cfg.StartTimeout)
	defer cancel()
	began := time.Now()
	err = e.start(sctx)
	if err == nil {
		err = e.checkVersion(sctx)
	}
	if err != nil {
		cctx, ccancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer ccancel()
		_ = e.Close(cctx)
		return nil, err
	}
	cfg.Logger.Info("testenv: ensemble ready", "id", e.id, "backend", cfg.Backend, "zookeeper", e.version,
		"servers", cfg.Servers, "took", time.Since(began).Round(time.Millisecond), "connect", e.ConnectString())
	return e, nil
}

func (e *Ensemble) start(ctx context.Context) error {
	if err := e.setupSecurity(ctx); err != nil {
		return err
	}
	if err := e.b.start(ctx); err != nil {
		return fmt.Errorf("%w: %w", errRetryStart, err)
	}
	ups := make([]string, e.cfg.Servers)
	for i := range ups {
		ups[i] = e.b.clientAddr(i)
	}
	l, err := newLink(e, "default", ups)
	if err != nil {
		return err
	}
	e.Link = l
	if err := e.waitStarted(ctx); err != nil {
		var tails []string
		for i := range e.cfg.Servers {
			tails = append(tails, fmt.Sprintf("--- server %d log ---\n%s", i, e.b.logs(context.WithoutCancel(ctx), i)))
		}
		return fmt.Errorf("%w\n%s", err, strings.Join(tails, "\n"))
	}
	return nil
}

// checkVersion records the release every server reports (srvr) and fails
// with ErrVersion when one differs from Config.Version (when it asks one)
// or from the others.
func (e *Ensemble) checkVersion(ctx context.Context) error {
	for i := range e.cfg.Servers {
		out, err := fourLetter(ctx, e.b.clientAddr(i), "srvr", e.ClientTLS())
		if err != nil {
			return fmt.Errorf("testenv: server %d: srvr: %w", i, err)
		}
		v, err := parseVersion(out)
		if err != nil {
			return err
		}
		if want := e.cfg.Version; want != "" && v != want {
			return fmt.Errorf("%w: server %d runs ZooKeeper %s, not %s (image %s, backend %s)", ErrVersion, i, v, want, e.cfg.Image, e.backend)
		}
		if e.version != "" && v != e.version {
			return fmt.Errorf("%w: server %d runs ZooKeeper %s, server 0 %s", ErrVersion, i, v, e.version)
		}
		e.version = v
	}
	return nil
}

// ServerVersion returns the ZooKeeper release the servers reported when the
// ensemble started ("3.9.6").
func (e *Ensemble) ServerVersion() string { return e.version }

// ID returns the ensemble's short random id, part of its resource names.
func (e *Ensemble) ID() string { return e.id }

// Backend returns the backend the ensemble runs on.
func (e *Ensemble) Backend() Backend { return e.backend }

// Servers returns the number of servers.
func (e *Ensemble) Servers() int { return e.cfg.Servers }

// Config returns the ensemble's configuration with defaults filled in.
func (e *Ensemble) Config() Config { return e.cfg }

// Timing returns the ensemble's tickTime and syncLimit, for
// recipes.WithEnsembleTiming: SyncLimit, or 0 for a single server, which
// runs standalone.
func (e *Ensemble) Timing() (tickTime time.Duration, syncLimit int) {
	if e.cfg.Servers == 1 {
		return e.cfg.TickTime, 0
	}
	return e.cfg.TickTime, SyncLimit
}

// SyncTimeout returns syncLimit x tickTime of the servers testenv starts
// (SyncLimit ticks: 1 s at the default tick): how long a follower cut from its
// leader goes on answering its clients before it notices and closes their
// connections, while the leader expires their sessions on its own clock.
// Meaningless for servers testenv did not start (Attach).
func (e *Ensemble) SyncTimeout() time.Duration { return SyncLimit * e.cfg.TickTime }

// DirectAddrs returns the servers' client addresses without any proxy.
func (e *Ensemble) DirectAddrs() []string {
	out := make([]string, e.cfg.Servers)
	for i := range out {
		out[i] = e.b.clientAddr(i)
	}
	return out
}

// DirectConnectString returns DirectAddrs joined with commas.
func (e *Ensemble) DirectConnectString() string { return strings.Join(e.DirectAddrs(), ",") }

// NewLink makes a private set of proxies to every server, for one client
// whose faults must not reach the others. Ensemble.Close closes it too.
func (e *Ensemble) NewLink(name string) (*Link, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil, ErrClosed
	}
	l, err := newLink(e, fmt.Sprintf("%s-%d", name, len(e.links)+1), e.DirectAddrs())
	if err != nil {
		return nil, err
	}
	e.links = append(e.links, l)
	return l, nil
}

// Mode asks server i for its mode with the srvr four-letter word: one of
// ModeLeader, ModeFollower, ModeStandalone, ModeObserver, or an error when it
// does not answer or does not serve.
func (e *Ensemble) Mode(ctx context.Context, i int) (string, error) {
	if _, err := pick(e.cfg.Servers, []int{i}); err != nil {
		return "", err
	}
	out, err := fourLetter(ctx, e.b.clientAddr(i), "srvr", e.ClientTLS())
	if err != nil {
		return "", err
	}
	return parseMode(out)
}

// Leader returns the index of the server that leads now (for one server,
// the standalone one), or ErrNoLeader.
func (e *Ensemble) Leader(ctx context.Context) (int, error) {
	for i := range e.cfg.Servers {
		if e.serverState(i) != running {
			continue
		}
		m, err := e.Mode(ctx, i)
		if err == nil && (m == ModeLeader || m == ModeStandalone) {
			return i, nil
		}
	}
	return -1, ErrNoLeader
}

// waitStarted is WaitQuorum that gives up early, with errRetryStart, when a
// server exits (typically because its port was taken).
func (e *Ensemble) waitStarted(ctx context.Context) error {
	for {
		if ok, _ := e.quorumNow(ctx); ok {
			return nil
		}
		for i := range e.cfg.Servers {
			if e.b.exited(ctx, i) {
				return fmt.Errorf("%w: server %d exited", errRetryStart, i)
			}
		}
		select {
		case <-ctx.Done():
			return e.WaitQuorum(ctx) // says which servers do what
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// WaitQuorum waits until every server that testenv has not killed, stopped,
// paused or isolated serves as leader or follower and exactly one of them
// leads. It returns ctx's error, with the servers' modes, when that does not
// happen in time (also when too few servers are up to form a quorum).
func (e *Ensemble) WaitQuorum(ctx context.Context) error {
	var last string
	for {
		ok, status := e.quorumNow(ctx)
		if ok {
			return nil
		}
		last = status
		select {
		case <-ctx.Done():
			return fmt.Errorf("testenv: no quorum (%s): %w", last, context.Cause(ctx))
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (e *Ensemble) quorumNow(ctx context.Context) (bool, string) {
	leaders, serving, up := 0, 0, 0
	var status []string
	for i := range e.cfg.Servers {
		if st := e.serverState(i); st != running {
			status = append(status, fmt.Sprintf("%d:%s", i, st))
			continue
		}
		up++
		m, err := e.Mode(ctx, i)
		if err != nil {
			status = append(status, fmt.Sprintf("%d:%v", i, err))
			continue
		}
		status = append(status, fmt.Sprintf("%d:%s", i, m))
		switch m {
		case ModeLeader, ModeStandalone:
			leaders++
			serving++
		case ModeFollower:
			serving++
		}
	}
	ok := leaders == 1 && serving == up && 2*serving > e.cfg.Servers
	return ok, strings.Join(status, " ")
}

func (s serverState) String() string {
	return [...]string{"running", "down", "paused", "isolated"}[s]
}

func (e *Ensemble) serverState(i int) serverState {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.state[i]
}

// act runs a server-side fault and records the server's new state.
func (e *Ensemble) act(ctx context.Context, i int, what string, to serverState, fn func(context.Context, int) error) error {
	if _, err := pick(e.cfg.Servers, []int{i}); err != nil {
		return err
	}
	e.mu.Lock()
	closed := e.closed
	e.mu.Unlock()
	if closed {
		return ErrClosed
	}
	if err := fn(ctx, i); err != nil {
		return fmt.Errorf("testenv: %s server %d: %w", what, i, err)
	}
	e.mu.Lock()
	e.state[i] = to
	e.mu.Unlock()
	e.cfg.Logger.Info("testenv: "+what, "server", i)
	return nil
}

// ErrNotServing is Mode's error for a server that is up but does not serve:
// it answers srvr with "not currently serving requests" (it is electing a
// leader, or syncing with one).
var ErrNotServing = errors.New("testenv: server not serving")

// RestartStuck restarts, with Kill and StartServer, every server that runs
// (this Ensemble neither stopped, paused nor isolated it) but does not serve
// (ErrNotServing) while the others hold a quorum with one leader, after
// logging the last lines of its log at Warn; it returns the indexes it
// restarted (none when no quorum serves: a restart would not help then).
// It is for a test that healed its faults and must go on: ZooKeeper 3.8.0
// has been seen here to leave a server outside a serving quorum for
// minutes after an isolation was undone (WaitQuorum then gives up); a
// restarted server goes through election and sync afresh. Call WaitQuorum
// after it.
func (e *Ensemble) RestartStuck(ctx context.Context) ([]int, error) {
	var stuck, done []int
	leaders, serving := 0, 0
	for i := range e.cfg.Servers {
		if e.serverState(i) != running {
			continue
		}
		m, err := e.Mode(ctx, i)
		switch {
		case errors.Is(err, ErrNotServing):
			stuck = append(stuck, i)
		case err != nil: // no answer: not a server stuck outside the quorum
		case m == ModeLeader || m == ModeStandalone:
			leaders++
			serving++
		case m == ModeFollower || m == ModeObserver:
			serving++
		}
	}
	if leaders != 1 || 2*serving <= e.cfg.Servers {
		return nil, nil
	}
	for _, i := range stuck {
		e.cfg.Logger.Warn("testenv: restarting a server that stays outside a serving quorum",
			"server", i, "log", e.b.logs(context.WithoutCancel(ctx), i))
		if err := e.Kill(ctx, i); err != nil {
			return done, err
		}
		if err := e.StartServer(ctx, i); err != nil {
			return done, err
		}
		done = append(done, i)
	}
	return done, nil
}

// Kill ends server i at once (SIGKILL): its connections drop without a FIN
// from ZooKeeper, clients move to another server, and if it led, the others
// elect a new leader. Its data stays for StartServer.
func (e *Ensemble) Kill(ctx context.Context, i int) error {
	return e.act(ctx, i, "kill", down, e.b.kill)
}

// Stop shuts server i down gracefully (SIGTERM, then SIGKILL after 10 s).
func (e *Ensemble) Stop(ctx context.Context, i int) error {
	return e.act(ctx, i, "stop", down, e.b.stop)
}

// StartServer starts server i again after Kill or Stop, with its data; it
// rejoins the quorum as a follower (WaitQuorum waits for that).
func (e *Ensemble) StartServer(ctx context.Context, i int) error {
	return e.act(ctx, i, "start", running, e.b.startServer)
}

// Pause freezes server i's process (cgroup freezer or SIGSTOP): its sockets
// stay open but nothing answers, so clients and peers see only timeouts.
// A container whose freeze the runtime refuses as transient ("unable to
// freeze") is asked again, up to four times in all.
func (e *Ensemble) Pause(ctx context.Context, i int) error {
	return e.act(ctx, i, "pause", paused, e.b.pause)
}

// Resume thaws server i after Pause.
func (e *Ensemble) Resume(ctx context.Context, i int) error {
	return e.act(ctx, i, "resume", running, e.b.resume)
}

// Isolate cuts server i off from the other servers (quorum and election
// traffic) while its client port stays reachable: clients connected to it
// see it stop serving once it loses the quorum, and if it led, the others
// elect a new leader after syncLimit.
func (e *Ensemble) Isolate(ctx context.Context, i int) error {
	return e.IsolateOneWay(ctx, i, Both)
}

// Direction is which of a server's traffic with its peers an isolation
// drops (IsolateOneWay).
type Direction string

const (
	// Both drops what the server sends its peers and what they send it.
	Both Direction = ""
	// Inbound drops only what the other servers send server i: it still
	// sends (pings, acks), but hears nothing back.
	Inbound Direction = "in"
	// Outbound drops only what server i sends the others: it hears them,
	// they never hear it.
	Outbound Direction = "out"
)

// IsolateOneWay is Isolate for one direction of server i's quorum and
// election traffic (Both is Isolate): TCP needs both, so either way the
// server's connections to its peers stall and it leaves the quorum after
// syncLimit, but the side that notices first differs. Its client port is
// left alone. Rejoin undoes it.
func (e *Ensemble) IsolateOneWay(ctx context.Context, i int, dir Direction) error {
	if dir != Both && dir != Inbound && dir != Outbound {
		return fmt.Errorf("%w: direction %q", ErrConfig, dir)
	}
	what := "isolate"
	if dir != Both {
		what += " (" + string(dir) + "bound only)"
	}
	return e.act(ctx, i, what, isolated, func(ctx context.Context, i int) error { return e.b.isolate(ctx, i, dir) })
}

// Rejoin reconnects server i to the others after Isolate.
func (e *Ensemble) Rejoin(ctx context.Context, i int) error {
	return e.act(ctx, i, "rejoin", running, e.b.rejoin)
}

// sessionKnown reports whether the leader's session tracker still lists id.
func (e *Ensemble) sessionKnown(ctx context.Context, id int64) (bool, error) {
	li, err := e.Leader(ctx)
	if err != nil {
		return false, err
	}
	out, err := fourLetter(ctx, e.b.clientAddr(li), "dump", e.ClientTLS())
	if err != nil {
		return false, err
	}
	if !strings.Contains(out, "Session") {
		return false, fmt.Errorf("testenv: unexpected dump answer %q", out)
	}
	return parseDumpSessions(out)[id], nil
}

// Close tears the ensemble down: every link, every server, the network and
// temporary files. It is idempotent and returns the first error met.
func (e *Ensemble) Close(ctx context.Context) error {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil
	}
	e.closed = true
	links := e.links
	e.mu.Unlock()
	for _, l := range links {
		_ = l.Close()
	}
	if e.Link != nil {
		_ = e.Link.Close()
	}
	var err error
	if e.b != nil {
		err = e.b.close(ctx)
	}
	if rerr := e.removeTLSDir(); err == nil {
		err = rerr
	}
	if err != nil {
		return fmt.Errorf("testenv: close ensemble %s: %w", e.id, err)
	}
	e.cfg.Logger.Info("testenv: ensemble closed", "id", e.id)
	return nil
}

// ownerLabel names this process for resources that outlive a crash.
func ownerLabel() string {
	h, _ := os.Hostname()
	return fmt.Sprintf("%s:%d", h, os.Getpid())
}

var errNotRunning = errors.New("not running")
