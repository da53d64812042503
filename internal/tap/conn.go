// The tapped connection: reading the frames that go out (requests and their
// paths) and come in (replies and their zxids), the pinger, and when a reply
// renews the lease (renewalPoint, with the Stall cap).

package tap

import (
	"encoding/binary"
	"net"
	"slices"
	"sync"
	"time"

	"github.com/zkrecipes/zkrecipes/internal/zkframe"
)

// maxTapHead bounds the bytes kept from a request: header, path length, a
// path of up to 4 KiB (longer paths are simply not tapped) and a read's
// watch flag.
const maxTapHead = 12 + 4096 + 1

const opCreate = 1

// opSetWatches is go-zookeeper's re-registration of its watches on a new
// connection: request header (xid, op), then relativeZxid int64 and the
// three lists of paths.
const opSetWatches = 101

// xidWatchEvent marks a frame the server sends on its own (a watch event):
// it answers nothing we sent and renews nothing.
const xidWatchEvent = -1

// maxUnanswered bounds the send times a connection keeps for requests not
// answered yet; beyond it new sends are not tracked (the lease then renews
// less, never more).
const maxUnanswered = 1 << 16

// tapConn reads both directions of one connection. Writes and reads happen
// on different goroutines; mu guards the maps and the splitters. A stream
// that stops looking like ZooKeeper framing is no longer tapped (the
// splitter stops; the core then reads fencing tokens back, and the lease
// renews no more).
type tapConn struct {
	net.Conn
	t       *Tap
	wmu     sync.Mutex // held across parsing and writing a frame: the wire order is the parse order
	mu      sync.Mutex
	out, in *zkframe.Splitter
	pending map[int32]string   // xid -> requested path of a wanted create
	sent    map[int32][]sentAt // xid -> requests not answered yet, oldest first
	nsent   int                // total length of the lists in sent
	waiting []time.Time        // the send times in sent, in send order
	stall   time.Duration      // the lease's Stall cap, when capped
	window  time.Duration      // how long a stall's cap holds for later requests
	capped  bool               // a cap applies (leaseStall's ok, read at the handshake)
	memo    stallMemo          // the last stall of this connection
	connect time.Time          // send time of the connect request
	now     time.Time          // when the Write being parsed began
	base    int64              // t.seen when this connection's handshake was read (0: not yet)

	// Filled while parsing a Read, handed to the lease after unlocking.
	handshake   bool
	hsTimeout   time.Duration
	hsSession   int64
	renewed     time.Time
	renewedSome bool
	lastCode    int32 // error code of the last reply to a request, for the auth sink
	hasCode     bool

	calls tapCalls // with Sinks.Calls only (calls.go)

	// The setWatches gate (gate.go), guarded by mu but gateOpen.
	watchReads map[int32]watchRead // xid -> a read with its watch flag set, not answered yet
	gated      bool                // a reconnection with watches held: replies with a zxid wait for setWatches
	hold       bool                // the Read being parsed must wait for the gate
	gateOpen   chan struct{}       // closed when setWatches was written (or the fallback passed)
	gateOnce   sync.Once

	lastWrite time.Time     // when the last frame was written (guarded by mu)
	pinging   bool          // the lease pinger runs (guarded by mu)
	closed    chan struct{} // closed by Close; ends the pinger
	closeOnce sync.Once
}

// Write parses the frames before sending them, with the time the write
// began: a reply can then never arrive before its request is known, and the
// server cannot have received a frame before that time.
func (c *tapConn) Write(b []byte) (int, error) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.mu.Lock()
	c.now = time.Now()
	c.lastWrite = c.now
	b, from := c.fixSetWatches(b)
	_ = c.out.Feed(b, func(f zkframe.Frame) error { c.request(f.Head, f.First); return nil })
	calls, base := c.calls.take(), c.base
	c.mu.Unlock()
	c.t.observe(calls)
	if from != 0 && c.t.sinks.Fixed != nil {
		c.t.sinks.Fixed(from, base)
	}
	return c.Conn.Write(b)
}

// fixSetWatches returns b unchanged and 0, unless b is exactly one
// setWatches request (go-zookeeper writes each frame with one Write) whose
// relativeZxid is above c.base: then a copy of b carrying c.base, and the
// relativeZxid it replaced (see the tap's doc). Nothing is changed before
// the handshake was read or once the stream stopped looking like
// ZooKeeper framing. Called with c.mu held, before b is fed.
func (c *tapConn) fixSetWatches(b []byte) ([]byte, int64) {
	if c.base <= 0 || len(b) < 20 || !c.out.AtBoundary() ||
		int64(binary.BigEndian.Uint32(b[0:4])) != int64(len(b)-4) ||
		int32(binary.BigEndian.Uint32(b[8:12])) != opSetWatches {
		return b, 0
	}
	rel := int64(binary.BigEndian.Uint64(b[12:20]))
	if rel <= c.base {
		return b, 0
	}
	fixed := slices.Clone(b)
	binary.BigEndian.PutUint64(fixed[12:20], uint64(c.base))
	return fixed, rel
}

// Close ends the lease pinger, then closes the connection.
func (c *tapConn) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return c.Conn.Close()
}

// pingFrame is a ping request: length 8, xid -2, op 11 (ZooKeeper answers
// it in order with xid -2; go-zookeeper ignores ping replies).
var pingFrame = []byte{0, 0, 0, 8, 0xff, 0xff, 0xff, 0xfe, 0, 0, 0, 11}

// startPinger starts the lease pinger once per connection, after the
// handshake: it writes a ping whenever nothing was written for every, so
// that the server (and through it the leader) hears from us at least that
// often (see recipes' lease.go). The ping goes through the tap like any frame, so
// its reply renews the lease.
func (c *tapConn) startPinger(every time.Duration) {
	c.mu.Lock()
	start := !c.pinging
	c.pinging = true
	c.mu.Unlock()
	if start {
		go c.pinger(every)
	}
}

func (c *tapConn) pinger(every time.Duration) {
	t := time.NewTimer(every)
	defer t.Stop()
	for {
		select {
		case <-c.closed:
			return
		case <-t.C:
		}
		c.mu.Lock()
		idle := time.Since(c.lastWrite)
		c.mu.Unlock()
		if idle < every {
			t.Reset(every - idle)
			continue
		}
		if _, err := c.Write(pingFrame); err != nil {
			return
		}
		t.Reset(every)
	}
}

func (c *tapConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	obs := c.t.sinks.Calls != nil
	if n > 0 || obs && err != nil {
		c.mu.Lock()
		if obs {
			c.calls.readAt = time.Now()
		}
		_ = c.in.Feed(b[:n], func(f zkframe.Frame) error { c.reply(f.Head, f.First); return nil })
		if obs && err != nil {
			c.calls.end()
		}
		hs, timeout, sid, sent := c.handshake, c.hsTimeout, c.hsSession, c.connect
		renewed, some := c.renewed, c.renewedSome
		code, hasCode := c.lastCode, c.hasCode
		hold := c.hold
		c.handshake, c.renewedSome, c.hasCode, c.hold = false, false, false, false
		calls := c.calls.take()
		c.mu.Unlock()
		c.t.observe(calls)
		if a := c.t.sinks.Auth; a != nil && hasCode {
			a(code)
		}
		if hs {
			if h := c.t.sinks.Handshake; h != nil {
				h(sent, timeout, sid)
			}
			if st := c.t.sinks.Stall; st != nil {
				stall, window, ok := st()
				c.mu.Lock()
				c.stall, c.window, c.capped = stall, window, ok
				c.mu.Unlock()
			}
			if pe := c.t.sinks.PingEvery; pe != nil {
				if p := pe(); p > 0 {
					c.startPinger(p)
				}
			}
		}
		if r := c.t.sinks.Renew; r != nil && some {
			r(renewed)
		}
		if hold {
			c.waitGate()
		}
	}
	return n, err
}

// request sees the head of a request frame: xid, op, then for a create its
// path (int32 length, bytes). The first frame is the connect request.
func (c *tapConn) request(head []byte, first bool) {
	if first {
		c.connect = c.now
		return
	}
	if len(head) < 8 {
		return
	}
	if c.t.sinks.Calls != nil {
		c.calls.sent(head, c.now)
	}
	xid, op := int32(binary.BigEndian.Uint32(head[0:4])), int32(binary.BigEndian.Uint32(head[4:8]))
	if c.nsent < maxUnanswered {
		oldest := c.now
		if len(c.waiting) > 0 {
			oldest = c.waiting[0]
		}
		c.sent[xid] = append(c.sent[xid], sentAt{at: c.now, oldest: oldest})
		c.waiting = append(c.waiting, c.now)
		c.nsent++
	}
	if op == opSetWatches {
		c.openGate()
	}
	c.watchRequest(xid, op, head)
	if len(head) < 12 || op != opCreate {
		return
	}
	l := int(int32(binary.BigEndian.Uint32(head[8:12])))
	if l < 0 || 12+l > len(head) {
		return
	}
	if path := string(head[12 : 12+l]); c.t.wanted(path) {
		c.pending[xid] = path
	}
}

// reply sees the head of a reply frame: xid, zxid, err. The first frame is
// the connect response: protocolVersion int32, timeOut int32 (the
// negotiated timeout in ms), sessionId int64 (0: the session expired),
// then the password.
func (c *tapConn) reply(head []byte, first bool) {
	if len(head) < 16 {
		return
	}
	if first {
		timeout := int32(binary.BigEndian.Uint32(head[4:8]))
		sid := int64(binary.BigEndian.Uint64(head[8:16]))
		if sid == 0 {
			c.t.seen.Store(0) // expired: go-zookeeper resets lastZxid
		} else {
			c.base = c.t.seen.Load() // no reply of this connection read yet
		}
		c.gateHandshake(sid)
		if sid != 0 && timeout > 0 && !c.connect.IsZero() {
			c.calls.sid = sid
			c.handshake, c.hsTimeout, c.hsSession = true, time.Duration(timeout)*time.Millisecond, sid
		}
		return
	}
	xid := int32(binary.BigEndian.Uint32(head[0:4]))
	if z := int64(binary.BigEndian.Uint64(head[4:12])); xid >= 0 && z > 0 {
		c.t.seen.Store(z) // as go-zookeeper's recvLoop records lastZxid
		if c.gated {
			select {
			case <-c.gateOpen:
			default:
				c.hold = true // go-zookeeper must not record it before its setWatches is built
			}
		}
	}
	if xid == xidWatchEvent {
		c.watchEvent(head)
	} else {
		c.watchReply(xid, int32(binary.BigEndian.Uint32(head[12:16])))
	}
	if c.t.sinks.Calls != nil {
		c.calls.replied(xid, int32(binary.BigEndian.Uint32(head[12:16])))
	}
	if xid != xidWatchEvent {
		c.lastCode, c.hasCode = int32(binary.BigEndian.Uint32(head[12:16])), true
		if q := c.sent[xid]; len(q) > 0 {
			sent := q[0]
			if len(q) == 1 {
				delete(c.sent, xid)
			} else {
				c.sent[xid] = q[1:]
			}
			c.nsent--
			c.answered(sent.at)
			var at time.Time
			at, c.memo = renewalPoint(sent, c.memo, time.Now(), c.stall, c.window, c.capped)
			if renewsLease(int32(binary.BigEndian.Uint32(head[12:16]))) && at.After(c.renewed) {
				c.renewed, c.renewedSome = at, true
			}
		}
	}
	path, ok := c.pending[xid]
	if !ok {
		return
	}
	delete(c.pending, xid)
	if binary.BigEndian.Uint32(head[12:16]) == 0 {
		c.t.record(path, int64(binary.BigEndian.Uint64(head[4:12])))
	}
}

// sentAt is a request not answered yet: when it was sent, and the send
// time of the oldest request of its connection unanswered then (at itself
// when there was none).
type sentAt struct{ at, oldest time.Time }

// answered removes send time at from c.waiting. ZooKeeper answers a
// session's requests in order, so it is almost always the first.
func (c *tapConn) answered(at time.Time) {
	switch i := slices.IndexFunc(c.waiting, at.Equal); {
	case i == 0:
		c.waiting = c.waiting[1:]
	case i > 0:
		c.waiting = slices.Delete(c.waiting, i, i+1)
	}
}

// stallMemo is a connection's last stall: replies to requests sent before
// until renew from no later than cap.
type stallMemo struct{ cap, until time.Time }

// renewalPoint is the moment a reply to s, arriving at now, renews the
// lease from, and the connection's stall memo after it. Uncapped: the
// send time. Capped: no later than stall after the send time of the
// oldest request then unanswered, and, for requests sent within window of
// a reply so capped (a stall), no later than that reply's point. A stall
// within an earlier stall's window leaves the memo as it is: the earlier
// cap binds every request sent in the window, whatever it waited behind.
//
// A server frozen while our requests queue answers them all at its thaw
// with what it believed before the freeze; the oldest of them was sent at
// most the Session's ping period after the freeze began, so the cap keeps
// every such answer within what the lease's terms cover. Between its thaw
// and its shutdown (a follower whose leader gave it up, a leader that lost
// its quorum: both notice within S of running time) it may also answer a
// request sent after the thaw that waited behind nothing, or only behind
// a request sent late in the freeze: the memo caps those too, for window
// (S) after the first stall's reply arrived, which came after the thaw
// (docs/design.md, "Server freezes"). While the server
// answers promptly, s.oldest is s.at or a few round trips earlier, no
// stall is seen, and the cap changes nothing. Pure.
func renewalPoint(s sentAt, m stallMemo, now time.Time, stall, window time.Duration, capped bool) (time.Time, stallMemo) {
	if !capped {
		return s.at, m
	}
	at := s.at
	if lim := s.oldest.Add(stall); lim.Before(at) {
		at = lim
	}
	if s.at.Before(m.until) {
		// Sent within an earlier stall's window: its cap binds, and its
		// memo stays (a later stall there, behind a request the frozen
		// server queued late, must not move the cap forward).
		if m.cap.Before(at) {
			at = m.cap
		}
		return at, m
	}
	if at.Before(s.at) {
		return at, stallMemo{cap: at, until: now.Add(window)}
	}
	return at, m
}

// renewsLease reports whether a reply with error code code shows that the
// server took the request as from a live session: success, or an ordinary
// answer about the data (no node, node exists, bad version, not empty, no
// auth, invalid ACL, no children for ephemerals, no watcher). Session
// expired or moved, and system errors, renew nothing.
func renewsLease(code int32) bool {
	switch code {
	case 0, -101, -102, -103, -108, -110, -111, -114, -121:
		return true
	}
	return false
}
