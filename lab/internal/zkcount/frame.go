// Package zkcount counts ZooKeeper requests and watch notifications on the
// wire. It wraps the net.Conn that go-zookeeper dials (pass Counter.Dialer to
// zk.WithDialer) and decodes the headers of the client protocol without
// decoding request bodies. The frames themselves are cut by the library's
// own splitter (internal/zkframe, the one the recipes Session's tap uses):
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
	"fmt"

	"github.com/zkrecipes/zkrecipes/internal/zkframe"
)

// MaxFrame is the largest frame length the parser accepts (the splitter's
// bound). ZooKeeper's own limit (jute.maxbuffer) is 1 MiB by default;
// anything far beyond it means the stream is not ZooKeeper framing and
// parsing stops.
const MaxFrame = zkframe.MaxFrame

// ErrCorrupt is reported once when a stream stops looking like ZooKeeper
// framing (a length beyond MaxFrame, or a frame too short for its header);
// the parser ignores the rest of that stream.
var ErrCorrupt = zkframe.ErrCorrupt

// Xids with a special meaning in the protocol.
const (
	XidNotification int32 = -1
	XidPing         int32 = -2
	XidAuth         int32 = -4 // setAuth requests and their replies
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
	// Zxid is the reply header's zxid (server frames only). In a watch
	// notification it is -1 from ZooKeeper 3.8 and the zxid of the
	// transaction that fired the watch from 3.9 (ZOOKEEPER-4655).
	Zxid int64
}

// Parser decodes the headers of one direction of a connection. The zero
// value is not ready; use NewParser. A Parser is not safe for concurrent
// use.
type Parser struct {
	dir   Direction
	split *zkframe.Splitter
}

// headLen is the number of payload bytes the parser needs per frame: the
// largest header it decodes (server: xid 4 + zxid 8 + err 4 + event type 4).
const headLen = 20

// NewParser returns a parser for one direction, expecting the connect frame
// first.
func NewParser(dir Direction) *Parser {
	return &Parser{dir: dir, split: zkframe.New(headLen)}
}

// Feed consumes b, which may hold any part of the stream (partial frames
// are kept for the next call), and calls emit for each complete frame. It
// returns an error wrapping ErrCorrupt the first time the stream stops
// parsing; after that, Feed ignores its input.
func (p *Parser) Feed(b []byte, emit func(Frame)) error {
	return p.split.Feed(b, func(f zkframe.Frame) error {
		fr, err := p.decode(f)
		if err != nil {
			return err
		}
		emit(fr)
		return nil
	})
}

// decode reads the header of a complete frame.
func (p *Parser) decode(f zkframe.Frame) (Frame, error) {
	fr := Frame{Len: f.Len}
	if f.First {
		fr.Connect = true
		return fr, nil
	}
	h := f.Head
	switch p.dir {
	case ClientToServer:
		if len(h) < 8 {
			return fr, fmt.Errorf("%w: request of %d bytes", ErrCorrupt, f.Len)
		}
		fr.Xid = int32(binary.BigEndian.Uint32(h[0:4]))
		fr.Op = Op(int32(binary.BigEndian.Uint32(h[4:8])))
	default:
		if len(h) < 16 {
			return fr, fmt.Errorf("%w: reply of %d bytes", ErrCorrupt, f.Len)
		}
		fr.Xid = int32(binary.BigEndian.Uint32(h[0:4]))
		fr.Zxid = int64(binary.BigEndian.Uint64(h[4:12]))
		fr.Err = int32(binary.BigEndian.Uint32(h[12:16]))
		if fr.Xid == XidNotification && len(h) >= 20 {
			fr.Event = int32(binary.BigEndian.Uint32(h[16:20]))
		}
	}
	return fr, nil
}
