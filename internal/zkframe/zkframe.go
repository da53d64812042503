// Package zkframe splits one direction of a ZooKeeper client connection
// into its frames, for the code that reads the wire without decoding it:
// the recipes Session's tap (fencing tokens and the lease from reply
// headers) and the lab's request counter. It is internal to this
// repository: the lab module may import it (its import path lies under
// this module's), services may not.
//
// The framing, in both directions: every frame is a 4-byte big-endian
// length followed by that many bytes. The first frame of each direction is
// the connect request or response, which has no request or reply header;
// what follows the length in later frames is for the caller to decode.
package zkframe

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// MaxFrame is the largest frame length accepted. ZooKeeper's own limit
// (jute.maxbuffer) is 1 MiB by default; a length far beyond it (or
// negative, as a signed int32) means the bytes are not ZooKeeper framing.
const MaxFrame = 64 << 20

// ErrCorrupt is returned once when a length prefix is beyond MaxFrame; the
// Splitter ignores the rest of that stream.
var ErrCorrupt = errors.New("zkframe: not ZooKeeper framing")

// Frame is one complete frame.
type Frame struct {
	First bool   // the first frame of the stream (connect request or response)
	Len   int    // payload length, without the 4-byte length prefix
	Head  []byte // the payload's first min(Len, keep) bytes; valid during the callback only
}

// Splitter cuts one direction of a connection into frames, keeping the
// first keep bytes of each. Feed it the bytes in any pieces. The zero value
// keeps nothing of the payloads (Head empty); use New to keep a head. A
// Splitter is not safe for concurrent use.
type Splitter struct {
	keep    int
	started bool // the first frame has been reported
	stopped bool // corrupt, or the callback refused a frame
	hdr     [4]byte
	nhdr    int // bytes of the length prefix read so far
	need    int // payload bytes of the current frame still to come
	head    []byte
}

// New returns a Splitter that keeps the first keep bytes of every frame's
// payload (keep < 0 counts as 0).
func New(keep int) *Splitter {
	keep = max(keep, 0)
	return &Splitter{keep: keep, head: make([]byte, 0, min(keep, 64))}
}

// AtBoundary reports whether the next byte fed begins a frame other than
// the stream's first: the first frame has been reported, no later one is
// partly read, and the Splitter has not stopped. A writer that writes
// whole frames can then tell that a buffer it is about to feed is exactly
// one frame (its length prefix covers the rest of the buffer).
func (s *Splitter) AtBoundary() bool { return s.started && !s.stopped && s.nhdr == 0 }

// Feed consumes b, any part of the stream (an incomplete frame is kept for
// the next call), and calls emit for each complete frame, in order. A
// length beyond MaxFrame stops the Splitter and Feed returns ErrCorrupt; if
// emit returns an error, the Splitter stops and Feed returns that error.
// Once stopped, Feed ignores its input and returns nil.
func (s *Splitter) Feed(b []byte, emit func(Frame) error) error {
	for !s.stopped {
		if s.nhdr < 4 {
			if len(b) == 0 {
				return nil
			}
			n := copy(s.hdr[s.nhdr:], b)
			s.nhdr += n
			b = b[n:]
			if s.nhdr < 4 {
				return nil
			}
			l := binary.BigEndian.Uint32(s.hdr[:])
			if l > MaxFrame {
				s.stopped = true
				return fmt.Errorf("%w: frame length %d", ErrCorrupt, int32(l))
			}
			s.need, s.head = int(l), s.head[:0]
		}
		if s.need > 0 {
			if len(b) == 0 {
				return nil
			}
			n := min(s.need, len(b))
			if k := min(s.keep-len(s.head), n); k > 0 {
				s.head = append(s.head, b[:k]...)
			}
			s.need -= n
			b = b[n:]
			if s.need > 0 {
				return nil
			}
		}
		f := Frame{First: !s.started, Len: int(binary.BigEndian.Uint32(s.hdr[:])), Head: s.head}
		s.nhdr, s.started = 0, true
		if err := emit(f); err != nil {
			s.stopped = true
			return err
		}
	}
	return nil
}
