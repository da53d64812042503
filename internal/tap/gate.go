package tap

import (
	"encoding/binary"
	"time"
)

// The tap keeps go-zookeeper's writer and reader of lastZxid apart.
//
// go-zookeeper v1.0.4 reads its lastZxid in sendSetWatches (conn.go, loop)
// after it has started a new connection's receive goroutine, which writes
// lastZxid for every reply that carries a zxid, with nothing ordering the
// two: a data race (go-zookeeper PR #35, open upstream). The value sent is
// corrected by fixSetWatches; this file removes the race itself, so that
// a service's own tests under -race do not fail on it.
//
// sendSetWatches reads lastZxid only when go-zookeeper holds watches, and
// then hands the setWatches request, built from what it read, to the send
// goroutine, which writes it through the tap. So on a reconnection under
// the same session with watches held, the tap holds back every reply that
// would write lastZxid (xid >= 0, zxid > 0) until the setWatches frame has
// been written on that connection: the read, the request's hand-over, the
// write, the gate's opening and the reply's delivery are then ordered, and
// the receive goroutine writes lastZxid only after the read. With no
// watches held go-zookeeper reads nothing, and the gate stays open.
//
// To know whether go-zookeeper holds watches, the tap keeps the same table
// go-zookeeper does, from the wire: a read with its watch flag set adds
// its (path, kind) when its reply comes (getData and getChildren on
// success, exists on success as a data watch or on no node as an exist
// watch), a watch event removes the kinds go-zookeeper removes for its
// type, and a new or expired session empties the table. Replies of the
// first connection, of a new session, and replies without a zxid (setAuth,
// pings, watch events) are never held.
//
// Should the table ever claim a watch go-zookeeper does not hold (a path
// longer than the tap keeps, say), no setWatches comes and the gate opens
// after GateFallback, reported through Sinks.Stalled; the replies are then late,
// never lost. Cost: nothing on the wire; on a reconnection with watches,
// the replies to requests queued while disconnected wait for the
// setWatches written right after them.

// tableKind is go-zookeeper's watchType: which changes of a path a watch
// fires for.
type tableKind uint8

const (
	tableData tableKind = iota
	tableExist
	tableChild
)

type tableKey struct {
	path string
	kind tableKind
}

// watchRead is a read sent with its watch flag set, waiting for its reply.
type watchRead struct {
	op   int32
	path string
}

// The ZooKeeper reads that can leave a watch.
const (
	opExists       = 3
	opGetData      = 4
	opGetChildren  = 8
	opGetChildren2 = 12
)

// The watch event types, and the error code for no node.
const (
	eventNodeCreated         = 1
	eventNodeDeleted         = 2
	eventNodeDataChanged     = 3
	eventNodeChildrenChanged = 4
	codeNoNode               = -101
)

// replyHead is how much of each reply the tap keeps: the reply header
// (xid, zxid, err: 16 bytes), then for a watch event its type, state and
// path (int32 length, bytes) of up to 4 KiB.
const replyHead = 16 + 12 + 4096

// GateFallback bounds how long a reply is held for a setWatches that does
// not come (a variable for the tap's own tests only).
var GateFallback = 2 * time.Second

// watchRequest notes a read with its watch flag set (head: xid, op, path,
// then the flag). Called with c.mu held.
func (c *tapConn) watchRequest(xid, op int32, head []byte) {
	switch op {
	case opExists, opGetData, opGetChildren, opGetChildren2:
	default:
		return
	}
	if len(head) < 12 {
		return
	}
	l := int(int32(binary.BigEndian.Uint32(head[8:12])))
	if l < 0 || 12+l+1 > len(head) || head[12+l] == 0 {
		return
	}
	c.watchReads[xid] = watchRead{op: op, path: string(head[12 : 12+l])}
}

// watchReply adds the watch a read's reply left, as go-zookeeper's reply
// handlers do. Called with c.mu held.
func (c *tapConn) watchReply(xid, code int32) {
	w, ok := c.watchReads[xid]
	if !ok {
		return
	}
	delete(c.watchReads, xid)
	kind, ok := watchLeft(w.op, code)
	if !ok {
		return
	}
	c.t.mu.Lock()
	c.t.watches[tableKey{w.path, kind}] = struct{}{}
	c.t.mu.Unlock()
}

// watchLeft is the watch go-zookeeper keeps after a read op answered with
// code (GetW, ChildrenW, ExistsW in conn.go).
func watchLeft(op, code int32) (tableKind, bool) {
	switch {
	case code == 0 && (op == opGetData || op == opExists):
		return tableData, true
	case code == codeNoNode && op == opExists:
		return tableExist, true
	case code == 0 && (op == opGetChildren || op == opGetChildren2):
		return tableChild, true
	}
	return 0, false
}

// firedKinds are the kinds of watch on the event's path that go-zookeeper
// fires and forgets for an event type (notifyWatches in conn.go).
func firedKinds(typ int32) []tableKind {
	switch typ {
	case eventNodeCreated:
		return []tableKind{tableExist}
	case eventNodeDataChanged:
		return []tableKind{tableExist, tableData}
	case eventNodeChildrenChanged:
		return []tableKind{tableChild}
	case eventNodeDeleted:
		return []tableKind{tableExist, tableData, tableChild}
	}
	return nil
}

// watchEvent forgets the watches a watch event fired (head: reply header,
// type, state, path). Called with c.mu held.
func (c *tapConn) watchEvent(head []byte) {
	if len(head) < 28 {
		return
	}
	typ := int32(binary.BigEndian.Uint32(head[16:20]))
	l := int(int32(binary.BigEndian.Uint32(head[24:28])))
	if l < 0 || 28+l > len(head) {
		return
	}
	path := string(head[28 : 28+l])
	c.t.mu.Lock()
	for _, k := range firedKinds(typ) {
		delete(c.t.watches, tableKey{path, k})
	}
	c.t.mu.Unlock()
}

// gateHandshake decides, from a connect response's session, whether this
// connection holds back replies until its setWatches: only a reconnection
// under the same session while watches are held. A new or expired session
// empties the table, as go-zookeeper does. Called with c.mu held.
func (c *tapConn) gateHandshake(sid int64) {
	c.t.mu.Lock()
	defer c.t.mu.Unlock()
	if sid == 0 || sid != c.t.sid {
		clear(c.t.watches)
	}
	c.gated = sid != 0 && sid == c.t.sid && len(c.t.watches) > 0
	c.t.sid = sid
}

// openGate lets held replies through for the rest of the connection.
func (c *tapConn) openGate() { c.gateOnce.Do(func() { close(c.gateOpen) }) }

// waitGate waits, outside every lock, until the gate is open, the
// connection closed, or GateFallback has passed.
func (c *tapConn) waitGate() {
	t := time.NewTimer(GateFallback)
	defer t.Stop()
	select {
	case <-c.gateOpen:
	case <-c.closed:
	case <-t.C:
		c.openGate()
		if c.t.sinks.Stalled != nil {
			c.t.sinks.Stalled()
		}
	}
}
