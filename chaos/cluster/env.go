package cluster

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/chaos/history"
	"github.com/zkrecipes/zkrecipes/testenv"
)

// Env is what the workload and the faults of one scenario share: the
// ensemble, the recorder, the znode root the workload owns, and the clients
// the workload made (faults act on their links, sessions and processes).
// Safe for concurrent use.
type Env struct {
	Ensemble *testenv.Ensemble
	Rec      *history.Recorder
	// Root is a persistent znode made for this scenario; the workload keeps
	// every node it makes under it. The runner deletes it afterwards.
	Root string
	// SessionTimeout is the session timeout clients must ask for.
	SessionTimeout time.Duration
	// Clients is how many clients the workload should run.
	Clients int
	Logger  *slog.Logger
	// Security is how every session of the scenario reaches the servers
	// and authenticates (zero: plain TCP, no authentication).
	Security Security
	// Pins places the clients' sessions: client k (in the order NewClient
	// made them) is given only the address of server Pins[k % len(Pins)]
	// on its link (Client.Addrs), so its session lives on that server and
	// stays there. Empty: every client gets every server. Set before the
	// workload starts (the runner does, for a fault with a placement).
	Pins []int

	mu      sync.Mutex
	clients []*Client
	// idleServer (1 + a server index) and idleHold: see SetIdleHold.
	idleServer, idleHold atomic.Int64
	// linger: see Linger.
	linger atomic.Pointer[func() bool]
}

// Linger asks the runner to keep the workload running past the scenario's
// duration while open reports true (and its other conditions to end are
// not met), for at most the liveness bound after the last heal: a
// workload whose exposure window opens only once a fault has healed (a
// mutant whose target must act with its new session) is not cut short by
// a scenario that ends inside that window. open is called from the
// runner's goroutine; a later call replaces an earlier one.
func (e *Env) Linger(open func() bool) { e.linger.Store(&open) }

// Lingering reports whether the function given to Linger reports true.
func (e *Env) Lingering() bool {
	f := e.linger.Load()
	return f != nil && (*f)()
}

// SetIdleHold asks the clients placed on server (Env.Pins) to pause, idle,
// for d at the start of every holding they acquire from now on, before
// their first request in it, until ClearIdleHold: a holder that works off
// ZooKeeper while it holds, its session quiet but for pings. A fault aimed
// at a holder's server uses it (faults' placed isolations): a holder with
// a request pending learns of the cut from its own read timeout, as a
// server answers nothing of a session behind its pending request, not
// even pings; an idle one hears the cut server's ping replies until that
// server gives up on its leader. Workloads honour it through
// Client.IdleHold (in-process clients only).
func (e *Env) SetIdleHold(server int, d time.Duration) {
	e.idleHold.Store(int64(d))
	e.idleServer.Store(int64(server) + 1)
}

// IdleHold returns the pause SetIdleHold asked for, 0 when none is asked.
func (e *Env) IdleHold() time.Duration {
	if e.idleServer.Load() == 0 {
		return 0
	}
	return time.Duration(e.idleHold.Load())
}

// ClearIdleHold ends SetIdleHold.
func (e *Env) ClearIdleHold() { e.idleServer.Store(0) }

// Client is one workload client as the faults see it: its private link, its
// current session and, for workloads run in worker processes, its process.
type Client struct {
	Name string
	Link *testenv.Link
	Log  *history.ClientLog

	conn    atomic.Pointer[zk.Conn]
	session atomic.Int64
	pid     atomic.Int64
	// server is 1 + the index of the server of the client's latest
	// connection (see Dial); 0 before the first.
	server atomic.Int64
	dialed atomic.Bool
	// pin is the server the client's sessions are placed on (Env.Pins),
	// or -1.
	pin int
	env *Env
}

// IdleHold returns how long the client must pause, idle, at the start of
// a holding it just acquired (see Env.SetIdleHold): 0 unless it is placed
// on the server named there.
func (c *Client) IdleHold() time.Duration {
	if c.env == nil || c.pin < 0 || c.env.idleServer.Load() != int64(c.pin)+1 {
		return 0
	}
	return time.Duration(c.env.idleHold.Load())
}

// Addrs returns the addresses a client's sessions connect to: its link's
// proxy of its pinned server only (Env.Pins), else its link's proxy of
// every server.
func (c *Client) Addrs() []string {
	all := c.Link.Addrs()
	if c.pin >= 0 && c.pin < len(all) {
		return []string{all[c.pin]}
	}
	return all
}

// Pin returns the server the client's sessions are placed on (Env.Pins),
// or -1 when they may go to any.
func (c *Client) Pin() int { return c.pin }

// Dial is go-zookeeper's dialer for the client's connections (zk.WithDialer,
// recipes.WithDialer): it records which server each connection reaches
// (serverOf reads it) and, for every connection after the client's first,
// a KindSession event "reconnected to server i". A reconnection is the
// trace a fault leaves on a client that moved to another server within its
// session, however fast: the runner's 20 ms state sampling misses those.
func (c *Client) Dial(network, address string, timeout time.Duration) (net.Conn, error) {
	conn, err := net.DialTimeout(network, address, timeout)
	if err != nil {
		return nil, err
	}
	i := slices.Index(c.Link.Addrs(), address)
	c.server.Store(int64(i) + 1)
	if c.dialed.Swap(true) {
		c.Log.Event(history.Event{Kind: history.KindSession, Detail: fmt.Sprintf("reconnected to server %d", i)})
	}
	return conn, nil
}

// Server returns the index of the server of the client's latest
// connection (see Dial), or -1.
func (c *Client) Server() int { return int(c.server.Load()) - 1 }

// SetSession records the client's current session id (ExpireSession needs
// it). Workloads call it after connecting and whenever the id changes.
func (c *Client) SetSession(id int64) { c.session.Store(id) }

// Session returns the client's current session id: its connection's (see
// Env.Connect), else the last one set, else 0.
func (c *Client) Session() int64 {
	if conn := c.conn.Load(); conn != nil {
		return conn.SessionID()
	}
	return c.session.Load()
}

// Conn returns the client's connection (see Env.Connect, SetConn), or nil
// for a client in a worker process.
func (c *Client) Conn() *zk.Conn { return c.conn.Load() }

// SetConn makes c.Session follow conn (for workloads that connect through
// their own session type, such as recipes.Session).
func (c *Client) SetConn(conn *zk.Conn) { c.conn.Store(conn) }

// SetProcess records the worker process that runs this client, which the
// freeze fault stops with SIGSTOP.
func (c *Client) SetProcess(p *os.Process) { c.pid.Store(int64(p.Pid)) }

// PID returns the worker process id, or 0 for an in-process client.
func (c *Client) PID() int { return int(c.pid.Load()) }

// NewClient makes a client with its own link (one Toxiproxy proxy per
// server) and registers it for the faults. The runner closes its link.
func (e *Env) NewClient(name string) (*Client, error) {
	l, err := e.Ensemble.NewLink(name)
	if err != nil {
		return nil, fmt.Errorf("chaos: link for %s: %w", name, err)
	}
	c := &Client{Name: name, Link: l, Log: e.Rec.Client(name), pin: -1, env: e}
	e.mu.Lock()
	if len(e.Pins) > 0 {
		c.pin = e.Pins[len(e.clients)%len(e.Pins)]
	}
	e.clients = append(e.clients, c)
	e.mu.Unlock()
	return c, nil
}

// ClientList returns the clients made so far.
func (e *Env) ClientList() []*Client {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]*Client(nil), e.clients...)
}

// Connect opens a go-zookeeper connection through c's link (to c.Addrs) with the
// scenario's session timeout, security (Security.Connect) and a silent
// logger; c.Session follows it.
// The event channel is left undrained on purpose: go-zookeeper drops what
// does not fit, and the workloads poll state rather than events.
func (e *Env) Connect(c *Client) (*zk.Conn, error) {
	conn, err := e.Security.Connect(c.Addrs(), e.SessionTimeout, c.Dial)
	if err != nil {
		return nil, fmt.Errorf("chaos: connect %s: %w", c.Name, err)
	}
	c.conn.Store(conn)
	return conn, nil
}

// CloseWhenConnected closes conn once it has a session again, waiting at
// most st for that: go-zookeeper's Close gives its closeSession request a
// second and drops it when the connection is down (as after a fault that
// just healed), leaving the session, and its ephemeral nodes, to expire;
// the runner's check of the nodes left would then find them.
func CloseWhenConnected(conn *zk.Conn, st time.Duration) {
	deadline := time.Now().Add(st)
	for conn.State() != zk.StateHasSession && time.Now().Before(deadline) {
		<-time.After(10 * time.Millisecond)
	}
	conn.Close()
}

// NopLogger is a go-zookeeper logger that discards everything.
type NopLogger struct{}

func (NopLogger) Printf(string, ...any) {}

// ConnectSetup opens a session through the ensemble's default link, which
// client faults leave alone, for a workload's setup before its clients
// start, with the scenario's security. The caller closes it.
func (e *Env) ConnectSetup(ctx context.Context) (*zk.Conn, error) {
	conn, err := e.Security.Connect(e.Ensemble.Addrs(), e.SessionTimeout, nil)
	if err != nil {
		return nil, fmt.Errorf("chaos: setup session: %w", err)
	}
	for conn.State() != zk.StateHasSession {
		select {
		case <-ctx.Done():
			conn.Close()
			return nil, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	return conn, nil
}

// Sleep waits d or until ctx is done; it reports whether to go on.
func Sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
