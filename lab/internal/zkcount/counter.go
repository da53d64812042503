package zkcount

import (
	"maps"
	"net"
	"sync"
	"time"
)

// Counts is a snapshot of a Counter.
type Counts struct {
	Requests map[Op]int64 // requests sent, by op (pings, connects and setAuths excluded)
	Pings    int64        // ping requests sent
	Connects int64        // connect requests sent (one per TCP connection)
	// Auths is the setAuth requests sent: a session with credentials sends
	// them once at Connect and again, ahead of any other request, on every
	// new connection (go-zookeeper), so they belong to the connection, as
	// the connect request does, not to any recipe operation.
	Auths         int64
	Notifications int64 // watch notifications received
	// NotificationZxid is the header zxid of the last notification
	// received (see Frame.Zxid: -1 from ZooKeeper 3.8).
	NotificationZxid int64
	Replies          int64 // replies received to requests (not pings, setAuths nor the connect)
	Corrupt          int64 // streams that stopped parsing
	// BytesOut is the size on the wire (length prefix included) of the
	// requests counted in Requests; BytesIn that of every server frame but
	// the connect response, ping and setAuth replies (replies and
	// notifications).
	BytesOut, BytesIn int64
	// ReplyBytes is the part of BytesIn that replied to requests of each
	// op (matched by xid): ReplyBytes[OpGetChildren2] is what the
	// children listings brought back. Notifications are in no op's.
	ReplyBytes map[Op]int64
}

// Req returns the number of requests with op o.
func (c Counts) Req(o Op) int64 { return c.Requests[o] }

// Total returns the number of requests of every op except pings.
func (c Counts) Total() int64 {
	var n int64
	for _, v := range c.Requests {
		n += v
	}
	return n
}

// Sub returns c minus an earlier snapshot prev.
func (c Counts) Sub(prev Counts) Counts {
	d := Counts{
		Requests:      make(map[Op]int64),
		Pings:         c.Pings - prev.Pings,
		Connects:      c.Connects - prev.Connects,
		Auths:         c.Auths - prev.Auths,
		Notifications: c.Notifications - prev.Notifications,
		Replies:       c.Replies - prev.Replies,
		Corrupt:       c.Corrupt - prev.Corrupt,
		BytesOut:      c.BytesOut - prev.BytesOut,
		BytesIn:       c.BytesIn - prev.BytesIn,
	}
	for o, v := range c.Requests {
		if v -= prev.Requests[o]; v != 0 {
			d.Requests[o] = v
		}
	}
	for o, v := range c.ReplyBytes {
		if v -= prev.ReplyBytes[o]; v != 0 {
			if d.ReplyBytes == nil {
				d.ReplyBytes = make(map[Op]int64)
			}
			d.ReplyBytes[o] = v
		}
	}
	return d
}

// Counter accumulates counts over every connection it wraps. It is safe for
// concurrent use.
type Counter struct {
	mu sync.Mutex
	c  Counts
}

// New returns an empty Counter.
func New() *Counter {
	return &Counter{c: Counts{Requests: make(map[Op]int64), ReplyBytes: make(map[Op]int64)}}
}

// Snapshot returns a copy of the current counts.
func (c *Counter) Snapshot() Counts {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.c
	s.Requests = maps.Clone(c.c.Requests)
	s.ReplyBytes = maps.Clone(c.c.ReplyBytes)
	return s
}

// Dialer returns a dialer with go-zookeeper's zk.Dialer signature that dials
// with base (net.DialTimeout when nil) and wraps the connection.
func (c *Counter) Dialer(base func(network, address string, timeout time.Duration) (net.Conn, error)) func(network, address string, timeout time.Duration) (net.Conn, error) {
	if base == nil {
		base = net.DialTimeout
	}
	return func(network, address string, timeout time.Duration) (net.Conn, error) {
		conn, err := base(network, address, timeout)
		if err != nil {
			return nil, err
		}
		return c.Wrap(conn), nil
	}
}

// Wrap returns conn with both directions counted.
func (c *Counter) Wrap(conn net.Conn) net.Conn {
	return &countedConn{Conn: conn, c: c, out: NewParser(ClientToServer), in: NewParser(ServerToClient),
		xids: xidOps{pending: map[int32]Op{}, early: map[int32]int64{}}, auth: map[int32]bool{}}
}

// record counts f; authReply is true for a server frame that replies to a
// setAuth.
func (c *Counter) record(dir Direction, f Frame, authReply bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case dir == ClientToServer && f.Connect:
		c.c.Connects++
	case dir == ClientToServer && f.Op == OpPing:
		c.c.Pings++
	case dir == ClientToServer && f.Op == OpSetAuth:
		c.c.Auths++
	case authReply:
		// a setAuth's reply (see countedConn.auth) is not counted
	case dir == ClientToServer:
		c.c.Requests[f.Op]++
		c.c.BytesOut += int64(4 + f.Len)
	case f.Connect || f.Xid == XidPing:
		// the connect response and ping replies are not counted
	default:
		c.c.BytesIn += int64(4 + f.Len)
		switch {
		case f.Xid == XidNotification:
			c.c.Notifications++
			c.c.NotificationZxid = f.Zxid
		case f.Xid > 0:
			c.c.Replies++
		}
	}
}

// replyBytes adds n bytes of a reply to a request of op o.
func (c *Counter) replyBytes(o Op, n int64) {
	c.mu.Lock()
	c.c.ReplyBytes[o] += n
	c.mu.Unlock()
}

func (c *Counter) corrupt() {
	c.mu.Lock()
	c.c.Corrupt++
	c.mu.Unlock()
}

// countedConn parses what passes through it. Reads and writes may run on
// different goroutines; each direction has its own parser and lock.
type countedConn struct {
	net.Conn
	c     *Counter
	outMu sync.Mutex
	out   *Parser
	inMu  sync.Mutex
	in    *Parser
	xids  xidOps
	// auth holds the xids of setAuth requests awaiting their reply:
	// go-zookeeper gives setAuth an ordinary xid, which the server's reply
	// repeats (the Java client uses XidAuth), so the reply is known by
	// its request. A request is parsed before it is written, so before
	// its reply can be read.
	authMu sync.Mutex
	auth   map[int32]bool
}

// authReply reports whether f, a frame from the server, replies to a
// setAuth: its xid is that of a pending setAuth, or XidAuth.
func (cc *countedConn) authReply(f Frame) bool {
	if f.Connect {
		return false
	}
	cc.authMu.Lock()
	defer cc.authMu.Unlock()
	if f.Xid == XidAuth || cc.auth[f.Xid] {
		delete(cc.auth, f.Xid)
		return true
	}
	return false
}

// authSent notes a setAuth request.
func (cc *countedConn) authSent(f Frame) {
	if f.Connect || f.Op != OpSetAuth {
		return
	}
	cc.authMu.Lock()
	cc.auth[f.Xid] = true
	cc.authMu.Unlock()
}

// xidOps matches replies to their requests' ops by xid. The request is
// parsed after it was written, so its reply may be parsed first: early
// keeps such replies' sizes until the request shows up.
type xidOps struct {
	mu      sync.Mutex
	pending map[int32]Op    // requests parsed, not yet answered
	early   map[int32]int64 // replies parsed before their request: bytes
}

// sent notes a request; it returns the size of its reply when that came
// first.
func (x *xidOps) sent(xid int32, o Op) (int64, bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if n, ok := x.early[xid]; ok {
		delete(x.early, xid)
		return n, true
	}
	x.pending[xid] = o
	return 0, false
}

// replied notes a reply of n bytes; it returns its request's op when that
// was parsed already.
func (x *xidOps) replied(xid int32, n int64) (Op, bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if o, ok := x.pending[xid]; ok {
		delete(x.pending, xid)
		return o, true
	}
	x.early[xid] = n
	return 0, false
}

// attribute credits reply sizes to ops (see Counts.ReplyBytes).
func (cc *countedConn) attribute(dir Direction, f Frame) {
	switch {
	case f.Connect || f.Xid <= 0 || (dir == ClientToServer && f.Op == OpSetAuth):
		// connect, pings, notifications, setAuths: no op's reply
	case dir == ClientToServer:
		if n, ok := cc.xids.sent(f.Xid, f.Op); ok {
			cc.c.replyBytes(f.Op, n)
		}
	default:
		n := int64(4 + f.Len)
		if o, ok := cc.xids.replied(f.Xid, n); ok {
			cc.c.replyBytes(o, n)
		}
	}
}

// Write counts b's frames before it writes them: counted after the write,
// a request's reply could reach the caller (and a test's next Snapshot)
// before its Write returned and the request was counted, as CI once saw.
// A write that fails part-way has still counted the whole of b: the
// connection is broken then, and its requests fail.
func (cc *countedConn) Write(b []byte) (int, error) {
	cc.outMu.Lock()
	if perr := cc.out.Feed(b, func(f Frame) {
		cc.authSent(f)
		cc.c.record(ClientToServer, f, false)
		cc.attribute(ClientToServer, f)
	}); perr != nil {
		cc.c.corrupt()
	}
	cc.outMu.Unlock()
	return cc.Conn.Write(b)
}

func (cc *countedConn) Read(b []byte) (int, error) {
	n, err := cc.Conn.Read(b)
	if n > 0 {
		cc.inMu.Lock()
		if perr := cc.in.Feed(b[:n], func(f Frame) {
			if cc.authReply(f) {
				cc.c.record(ServerToClient, f, true)
				return
			}
			cc.c.record(ServerToClient, f, false)
			cc.attribute(ServerToClient, f)
		}); perr != nil {
			cc.c.corrupt()
		}
		cc.inMu.Unlock()
	}
	return n, err
}
