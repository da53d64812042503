// Package zkcount counts ZooKeeper requests and watch notifications on the
// wire. It wraps the net.Conn that go-zookeeper dials (pass Counter.Dialer to
// zk.WithDialer) and parses the framing of the client protocol without
// decoding request bodies:
//
//   - every frame is a 4-byte big-endian length followed by that many bytes;
//   - the first frame in each direction of a connection is the connect
//     request / connect response, which has no header;
//   - later client frames start with a request header: xid int32, op int32
//     (pings have xid -2, op 11);
//   - later server frames start with a reply header: xid int32, zxid int64,
//     err int32; xid -1 marks a watch notification (followed by the event
//     type int32), xid -2 a ping reply.
//
// Counter is safe for concurrent use; each wrapped connection parses its own
// two byte streams.
package zkcount

import (
	"encoding/binary"
	"errors"
)

// MaxFrame is the largest frame length the parser accepts. ZooKeeper's own
// limit (jute.maxbuffer) is 1 MiB by default; anything far beyond it means
// the stream is not ZooKeeper framing and parsing stops.
const MaxFrame = 64 << 20

// ErrCorrupt is reported once when a stream stops looking like ZooKeeper
// framing; the parser ignores the rest of that stream.
var ErrCorrupt = errors.New("zkcount: corrupt frame stream")

// Xids with a special meaning in the protocol.
const (
	XidNotification int32 = -1
	XidPing         int32 = -2
)

// Direction tells a parser which header layout to expect.
type Direction int

// The two directions of a connection.
const (
	ClientToServer Direction = iota // requests
	ServerToClient                  // replies and notifications
)

// Frame is what the parser reports for one complete frame.
type Frame struct {
	Connect bool  // the connect request or response (first frame)
	Len     int   // payload length, without the 4-byte length prefix
	Xid     int32 // request or reply xid (0 for Connect)
	Op      Op    // request op code (client frames only)
	Event   int32 // watch event type (server frames with xid -1 only)
	Err     int32 // reply error code (server frames only)
}

// Parser splits one direction of a connection into frames. The zero value is
// not ready; use NewParser. A Parser is not safe for concurrent use.
type Parser struct {
	dir     Direction
	started bool // the connect frame has been seen
	corrupt bool
	hdr     [4]byte
	nhdr    int // bytes of the length prefix read so far
	need    int // payload bytes still to consume for the current frame
	frame   Frame
	head    []byte // first bytes of the payload (up to headLen)
}

// headLen is the number of payload bytes the parser keeps per frame: the
// largest header it decodes (server: xid 4 + zxid 8 + err 4 + event type 4).
const headLen = 20

// NewParser returns a parser for one direction, expecting the connect frame
// first.
func NewParser(dir Direction) *Parser {
	return &Parser{dir: dir, head: make([]byte, 0, headLen)}
}

// Feed consumes p, which may hold any part of the stream (partial frames
// are kept for the next call), and calls emit for each complete frame. It
// returns ErrCorrupt the first time the stream stops parsing; after that,
// Feed ignores its input.
func (p *Parser) Feed(b []byte, emit func(Frame)) error {
	if p.corrupt {
		return nil
	}
	for len(b) > 0 {
		if p.nhdr < 4 {
			n := copy(p.hdr[p.nhdr:], b)
			p.nhdr += n
			b = b[n:]
			if p.nhdr < 4 {
				return nil
			}
			l := binary.BigEndian.Uint32(p.hdr[:])
			if l > MaxFrame {
				p.corrupt = true
				return ErrCorrupt
			}
			p.need = int(l)
			p.head = p.head[:0]
			if p.need == 0 {
				if err := p.finish(emit); err != nil {
					return err
				}
				continue
			}
		}
		n := min(p.need, len(b))
		if keep := min(headLen-len(p.head), n); keep > 0 {
			p.head = append(p.head, b[:keep]...)
		}
		p.need -= n
		b = b[n:]
		if p.need == 0 {
			if err := p.finish(emit); err != nil {
				return err
			}
		}
	}
	return nil
}

// finish decodes the kept head of a complete frame and reports it.
func (p *Parser) finish(emit func(Frame)) error {
	f := Frame{Len: int(binary.BigEndian.Uint32(p.hdr[:]))}
	p.nhdr = 0
	if !p.started {
		p.started = true
		f.Connect = true
		emit(f)
		return nil
	}
	h := p.head
	switch p.dir {
	case ClientToServer:
		if len(h) < 8 {
			p.corrupt = true
			return ErrCorrupt
		}
		f.Xid = int32(binary.BigEndian.Uint32(h[0:4]))
		f.Op = Op(int32(binary.BigEndian.Uint32(h[4:8])))
	default:
		if len(h) < 16 {
			p.corrupt = true
			return ErrCorrupt
		}
		f.Xid = int32(binary.BigEndian.Uint32(h[0:4]))
		f.Err = int32(binary.BigEndian.Uint32(h[12:16]))
		if f.Xid == XidNotification && len(h) >= 20 {
			f.Event = int32(binary.BigEndian.Uint32(h[16:20]))
		}
	}
	emit(f)
	return nil
}
