package chaos

import (
	"context"
	"fmt"
	"sort"
	"time"
)

// Fault is one entry of the catalogue: how to inject a fault into a running
// scenario and how to heal it.
type Fault struct {
	// Name is short and stable; it names scenarios ("register/kill-leader").
	Name string
	// Doc says what the fault does and why it matters, in a sentence.
	Doc string
	// Server is set for faults that act on ZooKeeper servers; their heal
	// waits until a quorum serves again.
	Server bool
	// NeedsProcesses is set for faults that act on client processes: only
	// workloads whose clients run in worker processes can take them.
	NeedsProcesses bool
	// MinFor and MaxFor bound how long the fault lasts, in multiples of the
	// session timeout; the schedule draws a duration in between.
	MinFor, MaxFor float64
	// Quick is set for faults in the quick tier (the full tier has all).
	Quick bool
	// Voids names checkers whose invariant the fault voids by design: a
	// frozen process cannot step down, so under freeze-client two clients
	// may both believe they hold; only fencing protects the data. Their
	// findings are reported, not counted.
	Voids []string

	inject func(ctx context.Context, env *Env, w Window) (heal healFunc, err error)
}

// healFunc undoes a fault; it returns once the fault is healed.
type healFunc func(ctx context.Context) error

// healTimeout bounds a heal (servers restarting, a quorum forming).
const healTimeout = 3 * time.Minute

// Inject starts f in env as w describes and returns the function that heals
// it. Faults on client links act on the links of env's clients only.
func (f Fault) Inject(ctx context.Context, env *Env, w Window) (func(context.Context) error, error) {
	if f.NeedsProcesses {
		for _, c := range env.ClientList() {
			if c.PID() == 0 {
				return nil, fmt.Errorf("%w: %s needs clients in worker processes", ErrUnsupported, f.Name)
			}
		}
	}
	h, err := f.inject(ctx, env, w)
	if err != nil {
		return nil, fmt.Errorf("chaos: inject %s: %w", f.Name, err)
	}
	return h, nil
}

// Catalogue returns every fault, sorted by name.
func Catalogue() []Fault {
	out := append([]Fault(nil), catalogue...)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// FaultByName returns the named fault of the catalogue.
func FaultByName(name string) (Fault, error) {
	for _, f := range catalogue {
		if f.Name == name {
			return f, nil
		}
	}
	return Fault{}, fmt.Errorf("%w: %q", ErrUnknownFault, name)
}

// catalogue is the design's list of faults, mapped onto testenv calls.
var catalogue = []Fault{
	{Name: "cut-short", Quick: true, MinFor: 0.15, MaxFor: 0.3,
		Doc:    "drop every client connection and refuse new ones for less than 1/3 of the session timeout: sessions survive",
		inject: linkFault(func(c *Client, _ Window, _ time.Duration) error { return c.Link.Cut() }, restoreLink)},
	{Name: "partition-expire", Quick: true, MinFor: 0, MaxFor: 0,
		Doc:    "silence one client's link until the ensemble expires its session (Link.ExpireSession), then heal",
		inject: injectExpire},
	{Name: "half-open", Quick: true, MinFor: 0.5, MaxFor: 1,
		Doc:    "requests reach the servers but responses are lost, during creates, sets and multis",
		inject: linkFault(func(c *Client, _ Window, _ time.Duration) error { return c.Link.HalfOpen() }, healLink)},
	{Name: "limit-data", Quick: true, MinFor: 0.7, MaxFor: 1.3,
		Doc: "close each connection after a few hundred bytes from the servers, in the middle of a response",
		inject: linkFault(func(c *Client, w Window, _ time.Duration) error {
			return c.Link.LimitData(200 + w.Param%1800)
		}, healLink)},
	{Name: "latency-low", Quick: true, MinFor: 0.7, MaxFor: 1.3,
		Doc: "delay every response by 1/20 of the session timeout",
		inject: linkFault(func(c *Client, _ Window, st time.Duration) error {
			return c.Link.Latency(st/20, st/100)
		}, healLink)},
	{Name: "latency-near", Quick: true, MinFor: 0.7, MaxFor: 1.3,
		Doc: "delay every response by about half the session timeout, near go-zookeeper's 2/3 read timeout",
		inject: linkFault(func(c *Client, _ Window, st time.Duration) error {
			return c.Link.Latency(st/2, st/20)
		}, healLink)},
	{Name: "bandwidth", Quick: true, MinFor: 0.7, MaxFor: 1.3,
		Doc: "limit what the servers send to 2 KB/s while clients list a large child list",
		inject: linkFault(func(c *Client, _ Window, _ time.Duration) error {
			return c.Link.Bandwidth(2)
		}, healLink)},
	{Name: "slicer", Quick: true, MinFor: 0.7, MaxFor: 1.3,
		Doc: "split responses into pieces of a few bytes, each sent a little later",
		inject: linkFault(func(c *Client, w Window, _ time.Duration) error {
			return c.Link.Slicer(4+int(w.Param%28), 3, 200*time.Microsecond)
		}, healLink)},
	{Name: "slow-close", Quick: true, Server: true, MinFor: 0.7, MaxFor: 1.3,
		Doc:    "delay the close of client connections while a follower is killed, so clients see their server's death late",
		inject: injectSlowClose},
	{Name: "kill-follower", Quick: true, Server: true, MinFor: 0.7, MaxFor: 1.3,
		Doc:    "SIGKILL a follower, restart it after the window",
		inject: injectKill(false)},
	{Name: "kill-leader", Quick: true, Server: true, MinFor: 0.7, MaxFor: 1.3,
		Doc:    "SIGKILL the ZooKeeper leader: the others elect a new one; restart it after the window",
		inject: injectKill(true)},
	{Name: "pause-server", Quick: true, Server: true, MinFor: 1.2, MaxFor: 1.8,
		Doc:    "freeze a server's process past the session timeout: sockets open, nothing answers",
		inject: injectPause},
	{Name: "isolate-leader", Quick: true, Server: true, MinFor: 1.2, MaxFor: 1.8,
		Doc:    "cut the ZooKeeper leader off from the quorum while its client port stays reachable",
		inject: injectIsolate},
	{Name: "lose-quorum", Quick: true, Server: true, MinFor: 0.7, MaxFor: 1.3,
		Doc:    "kill a majority of the servers, then restart them and wait for a quorum",
		inject: injectLoseQuorum},
	{Name: "freeze-client", Quick: true, NeedsProcesses: true, MinFor: 1.3, MaxFor: 1.8,
		Voids:  []string{"mutual-exclusion", "single-leader"},
		Doc:    "SIGSTOP one client process past the session timeout, then SIGCONT: fencing must reject the stale holder",
		inject: injectFreeze},
}
