package faults

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/zkrecipes/zkrecipes/chaos/cluster"
	"github.com/zkrecipes/zkrecipes/chaos/history"
	"github.com/zkrecipes/zkrecipes/testenv"
)

// Fault is one entry of the catalogue: how to inject a fault into a running
// scenario and how to heal it.
type Fault struct {
	// Name is short and stable; it names scenarios ("register/kill-leader").
	// A variant aimed at a waiter ends in "@waiter"
	// ("lock/partition-expire@waiter"); its base name aims at the holder.
	Name string
	// Doc says what the fault does and why it matters, in a sentence.
	Doc string
	// Server is set for faults that act on ZooKeeper servers; their heal
	// waits until a quorum serves again.
	Server bool
	// NeedsProcesses is set for faults that act on client processes: only
	// workloads whose clients run in worker processes can take them.
	NeedsProcesses bool
	// Aim is the client role the fault strikes (RoleHolder, RoleWaiter),
	// or the client whose server a server fault strikes; "" for faults on
	// every client's link or on servers chosen by role alone. A workload
	// without holdings gives a seeded client (RoleClient) instead.
	Aim string
	// Place, when set (PlaceHolderOnFollower, PlaceHolderOnLeader), asks
	// the runner to place the clients' sessions before the workload
	// starts (Pins: each client is given one server's address only), and
	// the fault to strike the holder on a server of that role with a
	// waiter on the other; a scenario where that cannot be done and
	// confirmed fails (ErrNotExercised). Such a fault runs in workloads
	// with in-process clients and with worker processes alike, and in no
	// mixed scenario (its placement would bind the other faults').
	Place string
	// Trace is the mark the fault must leave in the history, or the
	// scenario was not exercised (see checkers.Exercised).
	Trace Trace
	// MinFor and MaxFor bound how long the fault lasts, in multiples of the
	// session timeout; the schedule draws a duration in between.
	MinFor, MaxFor float64
	// Quick is set for faults in the quick tier (the full tier has all).
	Quick bool
	// QuickFor, when set, names the only workloads that take the fault in
	// the quick tier: the scenarios where it matters most, so that the
	// quick tier stays short.
	QuickFor []string
	// Voids names checkers whose invariant the fault voids by design: a
	// frozen process cannot step down, so under freeze-client two clients
	// may both believe they hold; only fencing protects the data. Their
	// findings are reported, not counted.
	Voids []string

	inject func(ctx context.Context, env *cluster.Env, w Window, t *Target) (heal healFunc, err error)
}

// InQuick reports whether workload takes f in the quick tier.
func (f Fault) InQuick(workload string) bool {
	if !f.Quick {
		return false
	}
	if len(f.QuickFor) == 0 {
		return true
	}
	for _, w := range f.QuickFor {
		if w == workload {
			return true
		}
	}
	return false
}

// healFunc undoes a fault; it returns once the fault is healed.
type healFunc func(ctx context.Context) error

// HealTimeout bounds a heal (servers restarting, a quorum forming).
const HealTimeout = 3 * time.Minute

// StuckAfter is how long WaitQuorum waits for every running server to
// serve before it restarts those that stay outside a serving quorum.
const StuckAfter = 45 * time.Second

// Inject starts f in env as w describes and returns the function that heals
// it and the target it really struck (clients with their roles, servers
// with theirs). Faults on client links act on the links of env's clients
// only. The same window picks the same role of target: which client holds
// then is up to the run.
func (f Fault) Inject(ctx context.Context, env *cluster.Env, w Window) (func(context.Context) error, Target, error) {
	t := Target{Fault: f.Name, Aim: f.Aim}
	if f.NeedsProcesses {
		for _, c := range env.ClientList() {
			if c.PID() == 0 {
				return nil, t, fmt.Errorf("%w: %s needs clients in worker processes", ErrUnsupported, f.Name)
			}
		}
	}
	h, err := f.inject(ctx, env, w, &t)
	if err != nil {
		return nil, t, fmt.Errorf("chaos: inject %s: %w", f.Name, err)
	}
	if t.At == 0 {
		t.At = history.Now()
	}
	return h, t, nil
}

// NotApplicable returns why f cannot run against e, or "" when it can: a
// server fault on servers testenv did not start (testenv.Attach: it can
// neither kill, pause nor isolate them). Every client fault runs on a TLS
// client port too: cut-after-frame cuts after the next TLS record there,
// which carries the next frame (testenv's CutAfterNextFrame). Pure: it
// asks no server.
func (f Fault) NotApplicable(e *testenv.Ensemble) string {
	if f.Server && e.Backend() == testenv.BackendExternal {
		return "server fault: the servers were not started by the chaos suite, which cannot kill, pause or isolate them"
	}
	return ""
}

// Catalogue returns every fault, sorted by name.
func Catalogue() []Fault {
	out := append([]Fault(nil), catalogue...)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// ByName returns the named fault of the catalogue.
func ByName(name string) (Fault, error) {
	for _, f := range catalogue {
		if f.Name == name {
			return f, nil
		}
	}
	return Fault{}, fmt.Errorf("%w: %q", ErrUnknownFault, name)
}

// holdingWorkloads are the workloads whose clients hold something (a lock,
// a lease, leadership, a permit, a partition) without naming their quick
// faults: the placed isolations go to them in the quick tier (the others,
// QuickFaulters, list them in their quick faults).
var holdingWorkloads = []string{"lock", "lock-proc"}

// catalogue is the design's list of faults, mapped onto testenv calls.
var catalogue = []Fault{
	{Name: "cut-short", Quick: true, MinFor: 0.15, MaxFor: 0.3, Trace: TraceDisruption,
		Doc:    "drop every client connection and refuse new ones for less than 1/3 of the session timeout: sessions survive",
		inject: linkFault(func(c *cluster.Client, _ Window, _ time.Duration) error { return c.Link.Cut() }, restoreLink)},
	{Name: "partition-expire", Quick: true, MinFor: 0, MaxFor: 0, Aim: RoleHolder, Trace: TraceTarget,
		Doc:    "silence the holder's link until the ensemble expires its session (Link.ExpireSession), then heal",
		inject: injectExpire},
	{Name: "partition-expire@waiter", Quick: true, QuickFor: []string{"lock"}, MinFor: 0, MaxFor: 0, Aim: RoleWaiter, Trace: TraceTarget,
		Doc:    "partition-expire aimed at a client that waits: its queued node must go with its session",
		inject: injectExpire},
	{Name: "half-open", Quick: true, MinFor: 0.5, MaxFor: 1, Aim: RoleHolder, Trace: TraceTarget,
		Doc:    "the holder's requests reach the servers but their responses are lost, during creates, sets and multis; the heal resets its connections",
		inject: aimedLinkFault(func(c *cluster.Client) error { return c.Link.HalfOpen() }, healHalfOpen)},
	{Name: "half-open@waiter", MinFor: 0.5, MaxFor: 1, Aim: RoleWaiter, Trace: TraceTarget,
		Doc:    "half-open aimed at a client that waits: the watch that would wake it is lost",
		inject: aimedLinkFault(func(c *cluster.Client) error { return c.Link.HalfOpen() }, healHalfOpen)},
	{Name: "limit-data", Quick: true, MinFor: 0.7, MaxFor: 1.3, Trace: TraceDisruption,
		Doc: "close each connection after a few hundred bytes from the servers, in the middle of a response; each connection's count drawn anew (200 to 1999 bytes), so that the cut falls on every kind of frame",
		inject: linkFault(func(c *cluster.Client, w Window, _ time.Duration) error {
			return c.Link.LimitDataEach(200, 1800, uint64(w.Param))
		}, healLink)},
	{Name: "latency-low", Quick: true, QuickFor: []string{"lock", "queue"}, MinFor: 0.7, MaxFor: 1.3, Trace: TraceTraffic,
		Doc: "delay every response by 1/20 of the session timeout",
		inject: linkFault(func(c *cluster.Client, _ Window, st time.Duration) error {
			return c.Link.Latency(st/20, st/100)
		}, healLink)},
	// latency-near lasts 1.7 to 2.2 session timeouts: a handoff under it
	// takes two delayed messages (the watch event, then the listing), a
	// session timeout, and a multi-lock's three, so a shorter window could
	// pass with every client's operation still in flight and no trace of
	// the fault in the history (checkers.Exercised: not exercised).
	{Name: "latency-near", Quick: true, MinFor: 1.7, MaxFor: 2.2, Trace: TraceTraffic,
		Doc: "delay every response by about half the session timeout, near go-zookeeper's 2/3 read timeout",
		inject: linkFault(func(c *cluster.Client, _ Window, st time.Duration) error {
			return c.Link.Latency(st/2, st/20)
		}, healLink)},
	{Name: "bandwidth", Quick: true, QuickFor: []string{"register", "queue"}, MinFor: 0.7, MaxFor: 1.3, Trace: TraceTraffic,
		Doc: "limit what the servers send to 2 KB/s while clients list a large child list",
		inject: linkFault(func(c *cluster.Client, _ Window, _ time.Duration) error {
			return c.Link.Bandwidth(2)
		}, healLink)},
	{Name: "slicer", Quick: true, QuickFor: []string{"lock", "rwlock"}, MinFor: 0.7, MaxFor: 1.3, Trace: TraceTraffic,
		Doc: "split responses into pieces of a few bytes, each sent a little later",
		inject: linkFault(func(c *cluster.Client, w Window, _ time.Duration) error {
			return c.Link.Slicer(4+int(w.Param%28), 3, 200*time.Microsecond)
		}, healLink)},
	{Name: "slow-close", Quick: true, Server: true, MinFor: 0.7, MaxFor: 1.3, Aim: RoleHolder, Trace: TraceDisruption,
		Doc:    "delay the close of client connections while a follower (the holder's server when it follows) is killed, so clients see their server's death late",
		inject: injectSlowClose},
	{Name: "kill-follower", Quick: true, Server: true, MinFor: 0.7, MaxFor: 1.3, Aim: RoleHolder, Trace: TraceDisruption,
		Doc:    "SIGKILL a follower, the holder's server when it follows, restart it after the window",
		inject: injectKill(RoleFollower)},
	{Name: "kill-leader", Quick: true, Server: true, MinFor: 0.7, MaxFor: 1.3, Trace: TraceDisruption,
		Doc:    "SIGKILL the ZooKeeper leader: the others elect a new one; restart it after the window",
		inject: injectKill(RoleLeader)},
	{Name: "kill-all", Quick: true, QuickFor: []string{"register"}, Server: true, MinFor: 0.5, MaxFor: 0.8, Trace: TraceDisruption,
		Doc:    "SIGKILL every server, restart them all after the window: sessions must survive a whole-ensemble restart",
		inject: injectKillAll},
	{Name: "pause-server", Quick: true, Server: true, MinFor: 1.2, MaxFor: 1.8, Aim: RoleHolder, Trace: TraceDisruption,
		Doc:    "freeze the holder's server's process past the session timeout: sockets open, nothing answers",
		inject: injectPause},
	{Name: "isolate-leader", Quick: true, Server: true, MinFor: 1.2, MaxFor: 1.8, Trace: TraceDisruption,
		Doc:    "cut the ZooKeeper leader off from the quorum while its client port stays reachable",
		inject: injectIsolate(RoleLeader)},
	{Name: "isolate-holder-follower", Quick: true, QuickFor: holdingWorkloads, Server: true, MinFor: 1.5, MaxFor: 2, Aim: RoleHolder, Trace: TraceTarget,
		Place:  PlaceHolderOnFollower,
		Doc:    "holder's session placed on a follower, a waiter's on the leader: cut that follower off from both other servers (both ways) while every client link stays up; it answers its clients until syncLimit, the leader expires their sessions on its own clock",
		inject: injectIsolatePlaced(PlaceHolderOnFollower, testenv.Both)},
	{Name: "isolate-holder-follower-in", Quick: true, QuickFor: []string{"lock"}, Server: true, MinFor: 1.5, MaxFor: 2, Aim: RoleHolder, Trace: TraceTarget,
		Place:  PlaceHolderOnFollower,
		Doc:    "isolate-holder-follower one way: the follower still sends to the other servers but hears nothing from them",
		inject: injectIsolatePlaced(PlaceHolderOnFollower, testenv.Inbound)},
	{Name: "isolate-holder-follower-out", Quick: true, QuickFor: []string{"lock"}, Server: true, MinFor: 1.5, MaxFor: 2, Aim: RoleHolder, Trace: TraceTarget,
		Place:  PlaceHolderOnFollower,
		Doc:    "isolate-holder-follower one way: the follower hears the other servers but they never hear it",
		inject: injectIsolatePlaced(PlaceHolderOnFollower, testenv.Outbound)},
	{Name: "isolate-holder-leader", Quick: true, QuickFor: holdingWorkloads, Server: true, MinFor: 1.5, MaxFor: 2, Aim: RoleHolder, Trace: TraceTarget,
		Place:  PlaceHolderOnLeader,
		Doc:    "the reverse of isolate-holder-follower: holder's session placed on the leader, a waiter's on a follower; cut the leader off from both other servers while every client link stays up",
		inject: injectIsolatePlaced(PlaceHolderOnLeader, testenv.Both)},
	{Name: "partition-minority", Quick: true, QuickFor: []string{"lock"}, Server: true, MinFor: 1.2, MaxFor: 1.8, Aim: RoleHolder, Trace: TraceDisruption,
		Doc:    "cut a minority of followers (the holder's server first) off from the others: the rest keeps its quorum and leader",
		inject: injectIsolate(aimMinority)},
	{Name: "partition-majority", Quick: true, QuickFor: []string{"register"}, Server: true, MinFor: 0.7, MaxFor: 1.3, Aim: RoleHolder, Trace: TraceDisruption,
		Doc:    "cut a majority of the servers (the holder's first) off from each other: no side keeps a quorum, every process runs",
		inject: injectIsolate(aimMajority)},
	{Name: "lose-quorum", Quick: true, Server: true, MinFor: 0.7, MaxFor: 1.3, Aim: RoleHolder, Trace: TraceDisruption,
		Doc:    "kill a majority of the servers (the holder's first), then restart them and wait for a quorum",
		inject: injectLoseQuorum},
	{Name: "overlap", Quick: true, QuickFor: []string{"lock"}, Server: true, MinFor: 0.6, MaxFor: 0.9, Aim: RoleHolder, Trace: TraceTarget,
		Doc:    "two overlapping faults: half-open on the holder's link, and a third of the way in SIGKILL the ZooKeeper leader; the link heals first, the leader restarts a third later",
		inject: injectOverlap},
	{Name: "cut-after-frame", Quick: true, QuickFor: []string{"lock"}, MinFor: 0, MaxFor: 0, Aim: RoleHolder, Trace: TraceTarget,
		Doc:    "blackhole the holder's link right after a frame from its server, until its session expires: the latest a holder can learn of its loss",
		inject: injectCutAfterFrame},
	{Name: "freeze-client", Quick: true, NeedsProcesses: true, MinFor: 1.3, MaxFor: 1.8, Aim: RoleHolder, Trace: TraceTarget,
		Voids:  []string{"mutual-exclusion", "single-leader", "lease-margin"},
		Doc:    "SIGSTOP the holder's process past the session timeout, then SIGCONT: fencing must reject the stale holder",
		inject: injectFreeze},
	{Name: "freeze-client@waiter", NeedsProcesses: true, MinFor: 1.3, MaxFor: 1.8, Aim: RoleWaiter, Trace: TraceTarget,
		Voids:  []string{"mutual-exclusion", "single-leader", "lease-margin"},
		Doc:    "freeze-client aimed at a waiting process: it must not hold on its stale session when it thaws",
		inject: injectFreeze},
	{Name: "kill-client", Quick: true, NeedsProcesses: true, MinFor: 0, MaxFor: 0, Aim: RoleHolder, Trace: TraceTarget,
		Doc:    "SIGKILL the holder's process; the workload starts a new one; healed once the dead session expired",
		inject: injectKillClient},
}
