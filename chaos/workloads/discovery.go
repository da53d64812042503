package workloads

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/chaos/checkers"
	"github.com/zkrecipes/zkrecipes/chaos/cluster"
	"github.com/zkrecipes/zkrecipes/chaos/history"
	"github.com/zkrecipes/zkrecipes/discovery"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// Discovery is the workload of package discovery, on the service
// <root>/services/svc. Of the env.Clients clients (at least 2), the odd
// ones (c1, c3, ...) are registrants and the even ones providers; one more
// client, the last, is the mortal registrant.
//
//   - A registrant keeps three instance slots (ids "<client>-<life>-<slot>")
//     and, every Pace, acts on the next slot: registers it when it is not
//     registered, else unregisters it (one time in five) or updates it.
//     Every register and update writes a new version of the instance's
//     data (payload {"@class":"org.zkrecipes.chaos.Version","v":N}), so
//     versions of an id only grow. Each is recorded as an operation
//     (history.FnRegister, FnUpdateInstance, FnUnregister; Key the id, Arg
//     the version): ok when the call returned nil, unknown otherwise.
//   - The mortal does the same, but abandons its session every one to two
//     session timeouts, as a crashed process would: it records
//     history.KindCrash (Fn FnRegister, Value its negotiated timeout),
//     drops its connection and refuses to connect again, so the close
//     never reaches ZooKeeper and the session expires; then it starts a
//     new life with a new session and new ids. It does so only while no
//     fault window is open and a session timeout has passed since the last
//     heal (as the two-phase workload's crashes), so that its new session
//     never passes for a trace of a fault (checkers.Exercised).
//   - A provider holds a discovery.Provider of the service and records its
//     view (history.KindProviderView: every instance's id and version)
//     when it starts and at each change of its cache (a value of
//     Provider.Watch's Stream),
//     and a closed view before it closes it. It also queries the service
//     from ZooKeeper (Discovery.Instances, history.FnQuery) every 400 ms,
//     once its session has been usable without a change for
//     DiscoveryBound (and a margin): its progress. After the last heal
//     the runner waits until every client progressed, so the scenario goes
//     on until the provider's view is judged (discovery-converges judges a
//     provider only after DiscoveryBound of quiet time); the liveness
//     bound is far longer.
//
// Every client also records its Session's state changes as it sees them
// (history.KindSession; see discRecordSessions): the runner's sampling
// misses a session replaced within 20 ms, and the checker must not judge
// a registrant's instances while they are being created again.
//
// The providers close first, then the registrants close their sessions
// (so no view is judged against instances gone with a closed session), and
// the mortal waits, up to two session timeouts, for its abandoned sessions
// to expire so that none of their nodes is left.
//
// Checked by: discovery-converges (in quiet time every view equals what
// the registrants registered, with its latest data, DiscoveryBound after
// each change was acknowledged; an abandoned session's instances leave
// every view DiscoveryBound after its expiry), liveness, no-nodes-left.
//
// DiscoveryRearm runs it as a mutant and twin.
type Discovery struct {
	// Pace is the pause between a registrant's operations. Default
	// 150 ms.
	Pace time.Duration
}

// DiscoveryBound is the bound B of the discovery workloads'
// discovery-converges checker: a change is in every view, and an
// abandoned session's instances out of every view, within B of quiet time
// (see checkers.DiscoveryConverges for why that is enough). It must be
// shorter than what a quick-tier scenario runs after its heal (about 1.5
// to 2.5 session timeouts), or nothing after the heal is judged.
const DiscoveryBound = time.Second

// discoveryService is the service the discovery workloads register.
const discoveryService = "svc"

// Name is "discovery".
func (w *Discovery) Name() string { return "discovery" }

// Checkers: discovery-converges, liveness, no-nodes-left.
func (w *Discovery) Checkers(cfg CheckConfig) []checkers.Checker {
	return []checkers.Checker{checkers.DiscoveryConverges(DiscoveryBound), checkers.Liveness(cfg.LivenessBound), checkers.NoNodesLeft()}
}

// QuickFaults names the discovery workload's quick-tier faults.
func (w *Discovery) QuickFaults() []string { return quickFaults[w.Name()] }

// Run runs the registrants, the providers and the mortal until ctx is
// done, then stops them in order and returns once every session closed.
func (w *Discovery) Run(ctx context.Context, env *cluster.Env) error {
	n := max(env.Clients, 2)
	var cs []*cluster.Client
	var roles []discRole
	for i := range n {
		c, err := env.NewClient(fmt.Sprintf("c%d", i+1))
		if err != nil {
			return err
		}
		role := discRegistrant
		if i%2 == 1 {
			role = discProvider
		}
		cs, roles = append(cs, c), append(roles, role)
	}
	mortal, err := env.NewClient(fmt.Sprintf("c%d", n+1))
	if err != nil {
		return err
	}
	cs, roles = append(cs, mortal), append(roles, discMortal)
	return runDiscovery(ctx, env, cs, roles, w.Pace)
}

// discRole is what a client of a discovery workload does.
type discRole int

const (
	discRegistrant discRole = iota // registers, updates and unregisters instances
	discMortal                     // a registrant that abandons its session now and then
	discProvider                   // a discovery.Provider
	discForgetful                  // the mutant's provider (see DiscoveryRearm)
)

// runDiscovery makes the service's node, runs cs in their roles until ctx
// is done and stops them: providers first, then registrants.
func runDiscovery(ctx context.Context, env *cluster.Env, cs []*cluster.Client, roles []discRole, pace time.Duration) error {
	if pace == 0 {
		pace = 150 * time.Millisecond
	}
	setup, err := env.ConnectSetup(ctx)
	if err != nil {
		return err
	}
	defer setup.Close()
	base := env.Root + "/services"
	acl := env.ACL()
	if _, err := setup.Multi(&zk.CreateRequest{Path: base, Acl: acl}, &zk.CreateRequest{Path: base + "/" + discoveryService, Acl: acl}); err != nil {
		return fmt.Errorf("chaos: discovery setup: %w", err)
	}
	var (
		providers, registrants sync.WaitGroup
		providersDone          = make(chan struct{})
		mu                     sync.Mutex
		errs                   []error
	)
	fail := func(err error) {
		if err != nil {
			mu.Lock()
			errs = append(errs, err)
			mu.Unlock()
		}
	}
	for i, c := range cs {
		switch role := roles[i]; role {
		case discProvider, discForgetful:
			providers.Add(1)
			go func() {
				defer providers.Done()
				fail(discProviderClient(ctx, env, c, base, role == discForgetful))
			}()
		default:
			registrants.Add(1)
			go func() {
				defer registrants.Done()
				fail(discRegistrantClient(ctx, env, c, base, pace, role == discMortal, providersDone, setup))
			}()
		}
	}
	providers.Wait()
	close(providersDone)
	registrants.Wait()
	return errors.Join(errs...)
}

// discViewer is what a provider client reads: a discovery.Provider run
// by its Watch (discWatched), or the mutant's. wait returns after a
// change since the last Instances (true), or once the viewer stopped or
// ctx is done (false).
type discViewer interface {
	Instances() []discovery.Instance
	wait(ctx context.Context) bool
	Err() error
	Close() error
}

// discWatched is a discovery.Provider with the Stream of its Watch.
type discWatched struct {
	*discovery.Provider
	st *recipes.Stream[[]discovery.Instance]
}

// loaded waits for the Stream's first value (the load), or for ctx.
func (w *discWatched) loaded(ctx context.Context) error {
	select {
	case _, ok := <-w.st.C:
		if !ok {
			if err := w.st.Err(); err != nil {
				return err
			}
			return errors.New("provider stopped before its load")
		}
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (w *discWatched) wait(ctx context.Context) bool {
	select {
	case _, ok := <-w.st.C:
		return ok
	case <-ctx.Done():
		return false
	}
}

// Err is the Stream's: nil while it runs, and after a Stop.
func (w *discWatched) Err() error { return w.st.Err() }

// Close stops the Stream and waits for C to close.
func (w *discWatched) Close() error {
	w.st.Stop()
	for range w.st.C {
	}
	return nil
}

// discProviderClient starts a provider of the service (the mutant's when
// forgetful) and records its views until ctx is done, querying the
// service meanwhile; then it records a closed view and closes it.
func discProviderClient(ctx context.Context, env *cluster.Env, c *cluster.Client, base string, forgetful bool) error {
	s, err := connectRecipes(ctx, env, c)
	if s == nil {
		return err
	}
	defer closeRecipes(s, env.SessionTimeout)
	defer discRecordSessions(c, s)()
	d, err := discovery.New(s, base)
	if err != nil {
		return err
	}
	var p discViewer
	for p == nil {
		lctx, cancel := context.WithTimeout(ctx, env.SessionTimeout)
		if forgetful {
			p, err = newForgetful(lctx, s, base+"/"+discoveryService)
		} else {
			var dp *discovery.Provider
			if dp, err = d.NewProvider(discoveryService); err == nil {
				// Followed until Close (Stop), as long as the client runs.
				w := &discWatched{dp, dp.Watch(context.Background())}
				if err = w.loaded(lctx); err == nil {
					p = w
				} else {
					_ = w.Close()
				}
			}
		}
		cancel()
		if err != nil && !cluster.Sleep(ctx, 100*time.Millisecond) {
			return nil
		}
	}
	steady := discWatchSteady(s)
	defer steady.stop()
	queried := make(chan struct{})
	go func() {
		defer close(queried)
		for cluster.Sleep(ctx, 400*time.Millisecond) {
			if !steady.usableFor(DiscoveryBound + 250*time.Millisecond) {
				continue
			}
			op := c.Log.Invoke(history.FnQuery, discoveryService, 0)
			qctx, cancel := context.WithTimeout(ctx, env.SessionTimeout)
			insts, err := d.Instances(qctx, discoveryService)
			cancel()
			if err != nil {
				op.Fail(err.Error()) // a read: it changed nothing
				continue
			}
			op.OK(int64(len(insts)))
		}
	}()
	last := "\x00"
	for ctx.Err() == nil {
		view := discView(p.Instances())
		if detail := history.FormatInstances(view); detail != last {
			c.Log.Event(history.Event{Kind: history.KindProviderView, Key: discoveryService, Detail: detail, Value: int64(len(view))})
			last = detail
		}
		if !p.wait(ctx) {
			break
		}
	}
	<-queried
	closed := history.Event{Kind: history.KindProviderView, Key: discoveryService, Mode: history.ProviderClosed}
	if err := p.Err(); err != nil {
		closed.Detail = "stopped: " + err.Error()
	}
	c.Log.Event(closed)
	return p.Close()
}

// discRecordSessions records c's session changes as c's Session sees them
// (history.KindSession: "suspended", "connected", "lost", and "new" with
// the new id in Value before "connected"), until the returned function is
// called. The runner samples sessions every 20 ms, and go-zookeeper shows
// the id 0 between an expired session and the next: a session replaced
// within a sample passes unseen there, yet discovery-converges must know
// when a registrant's instances were gone with its session.
func discRecordSessions(c *cluster.Client, s *recipes.Session) (stop func()) {
	var last atomic.Int64
	_, id, stop := s.OnStateChange(func(ch recipes.StateChange) {
		var details []string
		switch ch.State {
		case recipes.StateSuspended:
			details = []string{"suspended"}
		case recipes.StateLost:
			details = []string{"lost"}
		case recipes.StateConnected, recipes.StateReconnected:
			if ch.SessionID != last.Swap(ch.SessionID) {
				details = []string{"new", "connected"}
			} else {
				details = []string{"connected"}
			}
		}
		for _, d := range details {
			e := history.Event{Kind: history.KindSession, Detail: d}
			if d == "new" {
				e.Value = ch.SessionID
			}
			c.Log.Event(e)
		}
	})
	last.CompareAndSwap(0, id)
	return stop
}

// discSteady follows since when a Session has been usable without a
// state change.
type discSteady struct {
	mu     sync.Mutex
	usable bool
	since  time.Time
	stop   func()
}

func discWatchSteady(s *recipes.Session) *discSteady {
	st := &discSteady{since: time.Now()}
	st.mu.Lock()
	defer st.mu.Unlock()
	state, _, stop := s.OnStateChange(func(ch recipes.StateChange) {
		st.mu.Lock()
		defer st.mu.Unlock()
		st.usable = ch.State == recipes.StateConnected || ch.State == recipes.StateReconnected
		st.since = time.Now()
	})
	st.usable, st.stop = state == recipes.StateConnected || state == recipes.StateReconnected, stop
	return st
}

// usableFor reports whether the session has been usable, with no state
// change, for d.
func (st *discSteady) usableFor(d time.Duration) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.usable && time.Since(st.since) >= d
}

// discView returns the id and data version of each instance (0 when the
// payload holds none).
func discView(insts []discovery.Instance) map[string]int64 {
	out := make(map[string]int64, len(insts))
	for _, inst := range insts {
		var payload struct {
			V int64 `json:"v"`
		}
		_ = inst.DecodePayload(&payload)
		out[inst.ID] = payload.V
	}
	return out
}

// discInstance is the instance id of the service with data version v.
func discInstance(id string, v int64) (discovery.Instance, error) {
	payload, err := discovery.JavaPayload("org.zkrecipes.chaos.Version", map[string]int64{"v": v})
	if err != nil {
		return discovery.Instance{}, err
	}
	return discovery.Instance{Name: discoveryService, ID: id, Address: "10.0.0.1", Port: 8080, Payload: payload}, nil
}

// discSlot is one instance a registrant keeps.
type discSlot struct {
	id         string
	version    int64
	reg        *discovery.Registration
	unregister bool // the last Leave failed: try again
}

// discRegistrantClient runs a registrant's lives (one unless mortal) until
// ctx is done; then, once the providers are done, it closes its session
// and, for the mortal, waits for its abandoned sessions to expire.
func discRegistrantClient(ctx context.Context, env *cluster.Env, c *cluster.Client, base string, pace time.Duration, mortal bool,
	providersDone <-chan struct{}, setup *zk.Conn) error {
	var abandoned []discAbandoned
	defer func() {
		<-providersDone
		discAwaitExpiry(setup, abandoned, 2*env.SessionTimeout)
	}()
	for life := 1; ; life++ {
		var s *recipes.Session
		var dialer *discDialer
		var err error
		if mortal {
			dialer = &discDialer{c: c}
			opts := append(env.SessionOptions(nil), recipes.WithDialer(dialer.dial))
			s, err = recipes.Connect(ctx, c.Addrs(), opts...)
			if err != nil && ctx.Err() != nil {
				s, err = nil, nil
			}
			if s != nil {
				c.SetConn(s.Conn())
			}
		} else {
			s, err = connectRecipes(ctx, env, c)
		}
		if s == nil {
			return err
		}
		stopRecording := discRecordSessions(c, s)
		d, err := discovery.New(s, base)
		if err != nil {
			stopRecording()
			closeRecipes(s, env.SessionTimeout)
			return err
		}
		over := func() bool { return false }
		if mortal {
			end := time.Now().Add(env.SessionTimeout + rand.N(env.SessionTimeout))
			over = func() bool {
				return time.Now().After(end) && quiet(env.Rec.History(), history.Now(), env.SessionTimeout)
			}
		}
		slots := discLive(ctx, c, d, fmt.Sprintf("%s-%d", c.Name, life), pace, over, env.SessionTimeout)
		if ctx.Err() != nil {
			<-providersDone
			stopRecording()
			closeRecipes(s, env.SessionTimeout)
			return nil
		}
		// Abandon the session: no close reaches ZooKeeper, which expires it.
		a := discAbandoned{session: s.ID()}
		for _, sl := range slots {
			if sl.version > 0 {
				a.paths = append(a.paths, base+"/"+discoveryService+"/"+sl.id)
			}
		}
		timeout := s.NegotiatedTimeout()
		if timeout == 0 { // never connected (Connect waits for a session, so not expected): the one asked for
			timeout = env.SessionTimeout
		}
		c.Log.Event(history.Event{Kind: history.KindCrash, Fn: history.FnRegister, Key: discoveryService,
			Value: int64(timeout), Detail: fmt.Sprintf("session 0x%x abandoned: it expires", a.session)})
		stopRecording()
		dialer.kill()
		abandoned = append(abandoned, a)
		closeRecipes(s, time.Second) // its close request cannot be sent
	}
}

// discLive acts on three slots, one every pace, until ctx is done or over
// says the life is over, and returns them.
func discLive(ctx context.Context, c *cluster.Client, d *discovery.Discovery, prefix string, pace time.Duration, over func() bool, st time.Duration) []discSlot {
	slots := make([]discSlot, 3)
	for i := range slots {
		slots[i].id = fmt.Sprintf("%s-%d", prefix, i)
	}
	for i := 0; ctx.Err() == nil && !over(); i++ {
		sl := &slots[i%len(slots)]
		octx, cancel := context.WithTimeout(ctx, st)
		switch {
		case sl.reg == nil:
			sl.version++
			op := c.Log.Invoke(history.FnRegister, sl.id, sl.version)
			inst, err := discInstance(sl.id, sl.version)
			if err == nil {
				sl.reg, err = d.Register(octx, inst)
			}
			if err != nil {
				op.Unknown(err.Error()) // it may have created the node
			} else {
				op.OK(sl.version)
			}
		case sl.unregister || rand.IntN(5) == 0:
			op := c.Log.Invoke(history.FnUnregister, sl.id, 0)
			err := sl.reg.Leave(octx)
			switch {
			case err == nil:
				op.OK(0)
				sl.reg, sl.unregister = nil, false
			case errors.Is(err, discovery.ErrUnregistered):
				op.Unknown(err.Error())
				sl.reg, sl.unregister = nil, false
			default:
				op.Unknown(err.Error())
				sl.unregister = true
			}
		default:
			sl.version++
			op := c.Log.Invoke(history.FnUpdateInstance, sl.id, sl.version)
			inst, err := discInstance(sl.id, sl.version)
			if err == nil {
				err = sl.reg.Update(octx, inst)
			}
			if err != nil {
				op.Unknown(err.Error()) // the data is kept for the node's re-creation
			} else {
				op.OK(sl.version)
			}
		}
		cancel()
		if !cluster.Sleep(ctx, pace) {
			break
		}
	}
	return slots
}

// discDialer dials for the mortal registrant through its client's dialer
// (cluster.Client.Dial) until kill: from then on its connections are
// closed and new ones refused, as if its process had died.
type discDialer struct {
	c     *cluster.Client
	mu    sync.Mutex
	dead  bool
	conns []net.Conn
}

func (d *discDialer) dial(network, address string, timeout time.Duration) (net.Conn, error) {
	if d.isDead() {
		return nil, errAbandoned
	}
	conn, err := d.c.Dial(network, address, timeout)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.dead {
		conn.Close()
		return nil, errAbandoned
	}
	d.conns = append(d.conns, conn)
	return conn, nil
}

func (d *discDialer) isDead() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.dead
}

// kill closes the dialer's connections and refuses new ones.
func (d *discDialer) kill() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.dead = true
	for _, c := range d.conns {
		_ = c.Close()
	}
	d.conns = nil
}

var errAbandoned = errors.New("chaos: session abandoned")

// discAbandoned is a session the mortal abandoned and the paths of the
// instances it registered.
type discAbandoned struct {
	session int64
	paths   []string
}

// discAwaitExpiry waits, at most wait, until no node of the abandoned
// sessions is left at their paths (the runner then finds none left).
func discAwaitExpiry(conn *zk.Conn, abandoned []discAbandoned, wait time.Duration) {
	deadline := time.Now().Add(wait)
	for _, a := range abandoned {
		for _, p := range a.paths {
			for time.Now().Before(deadline) {
				ok, st, err := conn.Exists(p)
				if err == nil && (!ok || st.EphemeralOwner != a.session) {
					break
				}
				<-time.After(50 * time.Millisecond)
			}
		}
	}
}
