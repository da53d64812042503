package tap

import (
	"encoding/binary"
	"time"
)

// Call is one request as the tap saw it: its op code and path (for the ops
// whose request starts with one), the connection's session, and either the
// error code of its reply, or Closed when the connection's read side ended
// before any reply. Duration runs from the request's write to the read
// that brought its reply (or the end).
type Call struct {
	Op        int32
	Path      string
	SessionID int64
	Duration  time.Duration
	Code      int32
	Closed    bool
}

// tapCalls times one connection's requests for the Sinks' Calls: the tap
// notes each request's op, path and send time by xid, and turns its
// reply into a Call. It is used only when Calls is set; it is guarded by
// the tapConn's mu.
//
// Invariant: every request noted is reported exactly once: at its reply
// (matched by xid, oldest first), or Closed when the connection's read
// side ends; a request written after that is reported at once, also as
// closed. Pings and the connect request are not calls.
type tapCalls struct {
	sid     int64               // the connection's session, from its connect response
	pending map[int32][]tapCall // xid -> requests not answered yet, oldest first
	n       int                 // total length of the lists in pending
	readAt  time.Time           // when the Read being parsed returned
	ended   bool                // the read side failed: no reply will come
	out     []Call              // calls to hand to the sink after unlocking
}

type tapCall struct {
	op   int32
	path string
	at   time.Time
}

const opPingCode = 11

// pathOps are the ops whose request body starts with a path.
var pathOps = map[int32]bool{
	1: true, 2: true, 3: true, 4: true, 5: true, 6: true, 7: true, 8: true, 9: true, 12: true,
	13: true, 15: true, 17: true, 18: true, 19: true, 20: true, 21: true, 103: true, 104: true, 106: true,
}

// sent notes a request whose head is head (xid, op, then for most ops the
// path), written at at.
func (t *tapCalls) sent(head []byte, at time.Time) {
	if len(head) < 8 {
		return
	}
	xid := int32(binary.BigEndian.Uint32(head[0:4]))
	op := int32(binary.BigEndian.Uint32(head[4:8]))
	if op == opPingCode {
		return
	}
	var path string
	if pathOps[op] && len(head) >= 12 {
		if l := int(int32(binary.BigEndian.Uint32(head[8:12]))); l >= 0 && 12+l <= len(head) {
			path = string(head[12 : 12+l])
		}
	}
	switch {
	case t.ended:
		t.out = append(t.out, Call{Op: op, Path: path, SessionID: t.sid, Closed: true})
	case t.n < maxUnanswered:
		if t.pending == nil {
			t.pending = make(map[int32][]tapCall)
		}
		t.pending[xid] = append(t.pending[xid], tapCall{op: op, path: path, at: at})
		t.n++
	}
}

// replied matches a reply with xid and error code to its request.
func (t *tapCalls) replied(xid, code int32) {
	q := t.pending[xid]
	if len(q) == 0 {
		return // a watch event, a ping's reply, or a request not noted
	}
	c := q[0]
	if len(q) == 1 {
		delete(t.pending, xid)
	} else {
		t.pending[xid] = q[1:]
	}
	t.n--
	t.out = append(t.out, Call{Op: c.op, Path: c.path, SessionID: t.sid,
		Duration: t.readAt.Sub(c.at), Code: code})
}

// end reports every request not answered as closed: the connection's read
// side failed, so no reply will come.
func (t *tapCalls) end() {
	if t.ended {
		return
	}
	t.ended = true
	for _, q := range t.pending {
		for _, c := range q {
			t.out = append(t.out, Call{Op: c.op, Path: c.path, SessionID: t.sid,
				Duration: t.readAt.Sub(c.at), Closed: true})
		}
	}
	t.pending, t.n = nil, 0
}

// take returns the calls gathered and forgets them.
func (t *tapCalls) take() []Call {
	out := t.out
	t.out = nil
	return out
}

// observe hands calls to the sink; called without any lock held.
func (t *Tap) observe(calls []Call) {
	if len(calls) > 0 {
		t.sinks.Calls(calls)
	}
}
