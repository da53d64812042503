package tap

import (
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zkrecipes/zkrecipes/internal/zkframe"
)

// The create tap learns the czxid of our own nodes for free. ZooKeeper's
// reply to a create carries the transaction's zxid in its header, which is
// the new node's czxid, but go-zookeeper's Create drops it. Every connection
// the Session dials is wrapped to read the request and reply headers (never
// bodies, except the path of creates we announced with want), so a holding
// knows its fencing token without an extra getData. If the tap misses
// (unusual framing, a reply lost with its connection), the core falls back
// to reading the node.
//
// The tap also keeps go-zookeeper's re-registration of watches honest.
// After a reconnection under the same session, go-zookeeper v1.0.4
// (conn.go, loop) starts the new connection's send and receive goroutines
// and only then builds its setWatches requests, reading lastZxid (the zxid
// of the last reply it handled) into each one's relativeZxid as it builds
// it. The server fires a data or child watch only for a change after
// relativeZxid (a node created or deleted fires whatever the zxid). A
// reply handled on the new connection before a request is built (the
// reply to a request queued while disconnected, which goes out first)
// raises lastZxid to the server's current zxid, and the data and child
// changes made while we were away then never fire: shared.Value.Watch,
// group.Watch and a queue consumer waited for the next change
// (TestSetWatchesZxid, TestSetWatchesAfterReply in lab/integration/recipes;
// docs/design.md, "A lost watch re-registration"). The tap knows the zxid
// every reply carried before go-zookeeper saw it, so it knows what
// lastZxid held when the new connection began (base); a setWatches whose
// relativeZxid is above base is written with base instead, which is what
// go-zookeeper meant to send. The race itself (go-zookeeper reads
// lastZxid while its receive goroutine may write it) is removed by the
// tap's setWatches gate (gate.go).
// Lowering it is always safe: at worst the server fires a watch whose
// node changed before it was set, and its reader looks again. Cost:
// nothing on the wire (the request go-zookeeper sends anyway, its 8 bytes
// rewritten in a copy).
//
// The same tap feeds the Session's lease (recipes' lease.go): it remembers when each
// request and ping was sent (by xid; pings all have xid -2 and are answered
// in order) and, when the reply comes, tells the lease that the server heard
// from us no earlier than that send time. It also reads the timeout the
// server negotiated from every connect response.
type Tap struct {
	mu    sync.Mutex
	want  map[string]int           // requested create paths we wait for
	done  map[string]int64         // requested path -> zxid of its successful reply
	sent  map[string]chan struct{} // requested path -> closed when its create is written (recipes' pipeline.go)
	sinks Sinks

	// seen is go-zookeeper's lastZxid as the tap reads it: the zxid of the
	// last reply to a request that carried one (go-zookeeper records no
	// zxid 0, and no zxid of a watch event or ping reply), 0 after an
	// expiry (go-zookeeper resets it).
	seen atomic.Int64

	// watches is go-zookeeper's watch table as the wire shows it, and sid
	// the session of the last connect response (gate.go); guarded by mu.
	watches map[tableKey]struct{}
	sid     int64
}

// Sinks are told what the tap learns. Each is optional (nil: not
// reported) and is called without any lock of the tap held.
type Sinks struct {
	// Handshake: a connect request sent at sent was answered with
	// session sid and the negotiated timeout (for the lease).
	Handshake func(sent time.Time, timeout time.Duration, sid int64)
	// Renew: a request or ping sent at sent was answered (for the lease).
	Renew func(sent time.Time)
	// PingEvery returns the interval at which the connection must carry
	// a frame for the lease (the tap then pings on its own when
	// go-zookeeper has written nothing for that long); 0: go-zookeeper's
	// pings suffice. Asked after each handshake.
	PingEvery func() time.Duration
	// Stall returns how long after the send time of the oldest request
	// then unanswered on its connection a request's reply may still renew
	// the lease from (the lease's Stall), and for how long after a reply
	// so capped arrived the cap holds for later requests (S); ok false: no
	// such cap. Asked after each handshake.
	Stall func() (stall, window time.Duration, ok bool)
	// Auth receives the error code of the last reply to a request (not
	// the connect response, not a watch event) of each read.
	Auth func(code int32)
	// Calls receives the requests answered or ended (calls.go); without
	// it no call is timed.
	Calls func([]Call)
	// Fixed is told of each setWatches whose relativeZxid the tap
	// lowered, from what to what.
	Fixed func(from, to int64)
	// Stalled is told when a held reply was let through after
	// GateFallback with no setWatches written.
	Stalled func()
}

// New returns a tap that reports to sinks. It dials nothing: Dialer
// wraps the connections.
func New(sinks Sinks) *Tap {
	return &Tap{want: make(map[string]int), done: make(map[string]int64), sent: make(map[string]chan struct{}),
		watches: make(map[tableKey]struct{}), sinks: sinks}
}

// Expect announces a create of path (as requested, before the server appends
// a sequence). Call Take afterwards, whatever the outcome.
func (t *Tap) Expect(path string) {
	t.mu.Lock()
	t.want[path]++
	t.mu.Unlock()
}

// Take returns the zxid of the last successful reply to a create of path
// and forgets the announcement.
func (t *Tap) Take(path string) (int64, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	z, ok := t.done[path]
	delete(t.done, path)
	delete(t.sent, path)
	if t.want[path]--; t.want[path] <= 0 {
		delete(t.want, path)
	}
	return z, ok
}

// WhenSent returns a channel closed when a create of path, announced with
// Expect, is written (before Take; Take forgets it).
func (t *Tap) WhenSent(path string) <-chan struct{} {
	t.mu.Lock()
	defer t.mu.Unlock()
	ch, ok := t.sent[path]
	if !ok {
		ch = make(chan struct{})
		t.sent[path] = ch
	}
	return ch
}

// wanted reports whether a create of path was announced, and signals its
// writing to whenSent's channel.
func (t *Tap) wanted(path string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if ch, ok := t.sent[path]; ok {
		close(ch)
		delete(t.sent, path)
	}
	return t.want[path] > 0
}

func (t *Tap) record(path string, zxid int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.want[path] > 0 {
		t.done[path] = zxid
	}
}

// Dialer wraps base (net.DialTimeout when nil) so that every connection
// feeds the tap.
func (t *Tap) Dialer(base func(network, address string, timeout time.Duration) (net.Conn, error)) func(network, address string, timeout time.Duration) (net.Conn, error) {
	if base == nil {
		base = net.DialTimeout
	}
	return func(network, address string, timeout time.Duration) (net.Conn, error) {
		c, err := base(network, address, timeout)
		if err != nil {
			return nil, err
		}
		return &tapConn{Conn: c, t: t, out: zkframe.New(maxTapHead), in: zkframe.New(replyHead),
			pending: make(map[int32]string), sent: make(map[int32][]sentAt), closed: make(chan struct{}),
			watchReads: make(map[int32]watchRead), gateOpen: make(chan struct{})}, nil
	}
}
