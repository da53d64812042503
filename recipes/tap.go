package recipes

import (
	"encoding/binary"
	"net"
	"sync"
	"time"
)

// The create tap learns the czxid of our own nodes for free. ZooKeeper's
// reply to a create carries the transaction's zxid in its header, which is
// the new node's czxid, but go-zookeeper's Create drops it. Every connection
// the Session dials is wrapped to read the request and reply headers (never
// bodies, except the path of creates we announced with want), so a holding
// knows its fencing token without an extra getData. If the tap misses
// (unusual framing, a reply lost with its connection), the core falls back
// to reading the node.
type createTap struct {
	mu   sync.Mutex
	want map[string]int   // requested create paths we wait for
	done map[string]int64 // requested path -> zxid of its successful reply
}

func newCreateTap() *createTap {
	return &createTap{want: make(map[string]int), done: make(map[string]int64)}
}

// expect announces a create of path (as requested, before the server appends
// a sequence). Call take afterwards, whatever the outcome.
func (t *createTap) expect(path string) {
	t.mu.Lock()
	t.want[path]++
	t.mu.Unlock()
}

// take returns the zxid of the last successful reply to a create of path
// and forgets the announcement.
func (t *createTap) take(path string) (int64, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	z, ok := t.done[path]
	delete(t.done, path)
	if t.want[path]--; t.want[path] <= 0 {
		delete(t.want, path)
	}
	return z, ok
}

func (t *createTap) wanted(path string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.want[path] > 0
}

func (t *createTap) record(path string, zxid int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.want[path] > 0 {
		t.done[path] = zxid
	}
}

// dialer wraps base (net.DialTimeout when nil) so that every connection
// feeds the tap.
func (t *createTap) dialer(base func(network, address string, timeout time.Duration) (net.Conn, error)) func(network, address string, timeout time.Duration) (net.Conn, error) {
	if base == nil {
		base = net.DialTimeout
	}
	return func(network, address string, timeout time.Duration) (net.Conn, error) {
		c, err := base(network, address, timeout)
		if err != nil {
			return nil, err
		}
		return &tapConn{Conn: c, t: t, out: splitter{keep: maxTapHead}, in: splitter{keep: 16}, pending: make(map[int32]string)}, nil
	}
}

// maxTapHead bounds the bytes kept from a request: header, path length and
// a path of up to 4 KiB (longer paths are simply not tapped).
const maxTapHead = 12 + 4096

const opCreate = 1

// tapConn reads both directions of one connection. Writes and reads happen
// on different goroutines; mu guards the pending map and the splitters.
type tapConn struct {
	net.Conn
	t       *createTap
	mu      sync.Mutex
	out, in splitter
	pending map[int32]string // xid -> requested path of a wanted create
}

func (c *tapConn) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	if n > 0 {
		c.mu.Lock()
		c.out.feed(b[:n], c.request)
		c.mu.Unlock()
	}
	return n, err
}

func (c *tapConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 {
		c.mu.Lock()
		c.in.feed(b[:n], c.reply)
		c.mu.Unlock()
	}
	return n, err
}

// request sees the head of a request frame: xid, op, then for a create its
// path (int32 length, bytes).
func (c *tapConn) request(head []byte) {
	if len(head) < 12 || int32(binary.BigEndian.Uint32(head[4:8])) != opCreate {
		return
	}
	l := int(int32(binary.BigEndian.Uint32(head[8:12])))
	if l < 0 || 12+l > len(head) {
		return
	}
	if path := string(head[12 : 12+l]); c.t.wanted(path) {
		c.pending[int32(binary.BigEndian.Uint32(head[0:4]))] = path
	}
}

// reply sees the head of a reply frame: xid, zxid, err.
func (c *tapConn) reply(head []byte) {
	if len(head) < 16 {
		return
	}
	xid := int32(binary.BigEndian.Uint32(head[0:4]))
	path, ok := c.pending[xid]
	if !ok {
		return
	}
	delete(c.pending, xid)
	if binary.BigEndian.Uint32(head[12:16]) == 0 {
		c.t.record(path, int64(binary.BigEndian.Uint64(head[4:12])))
	}
}

// splitter cuts one direction of a ZooKeeper connection into frames (4-byte
// big-endian length, then the payload) and hands the first keep bytes of
// every frame after the first (the connect handshake) to a callback.
type splitter struct {
	keep    int
	started bool
	broken  bool
	hdr     [4]byte
	nhdr    int
	need    int
	head    []byte
}

// maxFrame: anything longer is not ZooKeeper framing; the splitter stops.
const maxFrame = 64 << 20

func (s *splitter) feed(b []byte, frame func(head []byte)) {
	for len(b) > 0 && !s.broken {
		if s.nhdr < 4 {
			n := copy(s.hdr[s.nhdr:], b)
			s.nhdr += n
			b = b[n:]
			if s.nhdr < 4 {
				return
			}
			l := binary.BigEndian.Uint32(s.hdr[:])
			if l > maxFrame {
				s.broken = true
				return
			}
			s.need, s.head = int(l), s.head[:0]
		}
		n := min(s.need, len(b))
		if k := min(s.keep-len(s.head), n); k > 0 {
			s.head = append(s.head, b[:k]...)
		}
		s.need -= n
		b = b[n:]
		if s.need == 0 {
			s.nhdr = 0
			if s.started {
				frame(s.head)
			}
			s.started = true
		}
	}
}
