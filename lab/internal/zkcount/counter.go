package zkcount

import (
	"maps"
	"net"
	"sync"
	"time"
)

// Counts is a snapshot of a Counter.
type Counts struct {
	Requests      map[Op]int64 // requests sent, by op (pings and connects excluded)
	Pings         int64        // ping requests sent
	Connects      int64        // connect requests sent (one per TCP connection)
	Notifications int64        // watch notifications received
	Replies       int64        // replies received to requests (not pings, not the connect)
	Corrupt       int64        // streams that stopped parsing
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
		Notifications: c.Notifications - prev.Notifications,
		Replies:       c.Replies - prev.Replies,
		Corrupt:       c.Corrupt - prev.Corrupt,
	}
	for o, v := range c.Requests {
		if v -= prev.Requests[o]; v != 0 {
			d.Requests[o] = v
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
	return &Counter{c: Counts{Requests: make(map[Op]int64)}}
}

// Snapshot returns a copy of the current counts.
func (c *Counter) Snapshot() Counts {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.c
	s.Requests = maps.Clone(c.c.Requests)
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
	return &countedConn{Conn: conn, c: c, out: NewParser(ClientToServer), in: NewParser(ServerToClient)}
}

func (c *Counter) record(dir Direction, f Frame) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case dir == ClientToServer && f.Connect:
		c.c.Connects++
	case dir == ClientToServer && f.Op == OpPing:
		c.c.Pings++
	case dir == ClientToServer:
		c.c.Requests[f.Op]++
	case f.Xid == XidNotification:
		c.c.Notifications++
	case f.Xid > 0:
		c.c.Replies++
	}
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
}

func (cc *countedConn) Write(b []byte) (int, error) {
	n, err := cc.Conn.Write(b)
	if n > 0 {
		cc.outMu.Lock()
		if perr := cc.out.Feed(b[:n], func(f Frame) { cc.c.record(ClientToServer, f) }); perr != nil {
			cc.c.corrupt()
		}
		cc.outMu.Unlock()
	}
	return n, err
}

func (cc *countedConn) Read(b []byte) (int, error) {
	n, err := cc.Conn.Read(b)
	if n > 0 {
		cc.inMu.Lock()
		if perr := cc.in.Feed(b[:n], func(f Frame) { cc.c.record(ServerToClient, f) }); perr != nil {
			cc.c.corrupt()
		}
		cc.inMu.Unlock()
	}
	return n, err
}
