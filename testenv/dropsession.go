package testenv

import (
	"encoding/binary"
	"net"
	"slices"
	"sync/atomic"
	"time"
)

// SessionDropper is a client-side dialer for go-zookeeper (zk.WithDialer,
// recipes.WithDialer) that lets a test give a session up without closing
// it, as a client does that opens a new ZooKeeper handle in place of one it
// believes dead (Curator, when it declares the connection LOST): once
// Drop(sid) was called, the connect request of every later connection that
// still carries sid asks for a new session instead (session id 0, no
// password, and last zxid seen 0, as a new handle's first request), so the
// server creates one while session sid lives on until the server expires
// it, its ephemeral nodes with it. As a new handle's, the request can be
// granted by a server behind what the old session read (a server refuses
// only a client that has seen more than it has, by the zxid it sends; with
// global sessions, creating the session brings the server up to date, with
// local sessions nothing does: Config.LocalSessions). The request is
// rewritten on the wire, below everything the client stacks on its
// connection: go-zookeeper (and recipes' tap) see their own request and
// take the session the server grants, as they would after an expiry.
// Dial works on plain TCP only (under TLS its bytes are ciphertext and
// pass unchanged); Wrap works on the plaintext side of any connection.
// Safe for concurrent use.
type SessionDropper struct {
	// Base dials the connections (net.DialTimeout when nil).
	Base    func(network, address string, timeout time.Duration) (net.Conn, error)
	dropped atomic.Int64
}

// Drop gives session sid up: the next connection asks for a new session.
func (d *SessionDropper) Drop(sid int64) { d.dropped.Store(sid) }

// Dial is the dialer to hand to the client.
func (d *SessionDropper) Dial(network, address string, timeout time.Duration) (net.Conn, error) {
	base := d.Base
	if base == nil {
		base = net.DialTimeout
	}
	c, err := base(network, address, timeout)
	if err != nil {
		return nil, err
	}
	return &droppingConn{Conn: c, d: d}, nil
}

// Wrap returns c with its connect request rewritten as Dial's are: for a
// dialer that makes its own connections (a TLS one: wrap the plaintext
// side).
func (d *SessionDropper) Wrap(c net.Conn) net.Conn { return &droppingConn{Conn: c, d: d} }

// droppingConn rewrites the connect request, the first frame written on a
// connection, when it carries the dropped session.
type droppingConn struct {
	net.Conn
	d       *SessionDropper
	written atomic.Bool
}

// connectRequestLen is the length of go-zookeeper's connect request frame,
// written with one Write: length prefix, protocol version, last zxid seen,
// timeout, session id (offset 20), password (length, 16 bytes).
const connectRequestLen = 4 + 4 + 8 + 4 + 8 + 4 + 16

func (c *droppingConn) Write(b []byte) (int, error) {
	if c.written.Swap(true) || !droppedRequest(b, c.d.dropped.Load()) {
		return c.Conn.Write(b)
	}
	fresh := slices.Clone(b)
	binary.BigEndian.PutUint64(fresh[8:16], 0)
	binary.BigEndian.PutUint64(fresh[20:28], 0)
	clear(fresh[32:48])
	return c.Conn.Write(fresh)
}

// droppedRequest reports whether b is a connect request frame for session
// sid (not 0). Pure.
func droppedRequest(b []byte, sid int64) bool {
	return sid != 0 && len(b) == connectRequestLen &&
		binary.BigEndian.Uint32(b[0:4]) == connectRequestLen-4 &&
		int64(binary.BigEndian.Uint64(b[20:28])) == sid
}
