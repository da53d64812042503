package testenv

import (
	"encoding/binary"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/Shopify/toxiproxy/v2/stream"
	"github.com/Shopify/toxiproxy/v2/toxics"
)

// The cut-after-frame fault is a pair of toxics registered in-process with
// Toxiproxy: one on the server-to-client stream lets bytes through up to the
// end of the next complete ZooKeeper frame (4-byte length, then that many
// bytes), then drops everything; one on the client-to-server stream drops
// everything from the moment the first one has let that frame through. Both
// share a gate, named in their attributes, so that the cut is one instant
// for both directions: the client receives the frame, and nothing it sends
// afterwards reaches the server.
//
// On a TLS ensemble the toxic cannot read ZooKeeper's frames, so it walks
// TLS records instead (5-byte header: type, version, 2-byte length): the
// server (Netty's SslHandler) seals each frame it flushes in one record
// (frames under 16 KiB), so the next complete record is the next frame.
// The handshake's records and TLS 1.3 session tickets come right after a
// connection opens, before a test arms the fault on an idle connection.

const cutFrameToxic = "zkrecipes_cut_after_frame"

func init() {
	toxics.Register(cutFrameToxic, new(cutAfterFrame))
}

// cutGate is one armed fault, shared by the toxics of a link's proxies.
type cutGate struct{ cut atomic.Bool }

var (
	gatesMu sync.Mutex
	gates   = map[string]*cutGate{}
)

func gate(name string) *cutGate {
	gatesMu.Lock()
	defer gatesMu.Unlock()
	return gates[name]
}

// cutAfterFrame is the toxic; Gate names its cutGate, Down is true on the
// server-to-client stream.
type cutAfterFrame struct {
	Gate    string `json:"gate"`
	Down    bool   `json:"down"`
	Records bool   `json:"records"` // walk TLS records, not frames
}

// frameState walks the frames of one connection's stream from the moment
// the toxic was added.
type frameState struct {
	hdr     [5]byte
	nhdr    int
	need    int
	records bool // TLS records (5-byte header), not ZooKeeper frames (4)
}

func (t *cutAfterFrame) NewState() any { return new(frameState) }

func (t *cutAfterFrame) Pipe(stub *toxics.ToxicStub) {
	g := gate(t.Gate)
	st, _ := stub.State.(*frameState)
	if st == nil {
		st = new(frameState)
	}
	st.records = t.Records
	for {
		select {
		case <-stub.Interrupt:
			return
		case c := <-stub.Input:
			if c == nil {
				stub.Close()
				return
			}
			if g == nil || g.cut.Load() {
				continue // cut: drop, keep the connection open
			}
			if !t.Down {
				stub.Output <- c
				continue
			}
			if n, done := st.walk(c.Data); done {
				// Cut before the frame is handed on, so that no reply of
				// the client to it can pass upstream.
				g.cut.Store(true)
				stub.Output <- &stream.StreamChunk{Data: c.Data[:n], Timestamp: c.Timestamp}
				continue
			}
			stub.Output <- c
		}
	}
}

// walk consumes b and returns, once a frame (or TLS record) ends in it,
// the number of bytes up to and including that frame's end.
func (st *frameState) walk(b []byte) (int, bool) {
	hlen := 4
	if st.records {
		hlen = 5
	}
	for i := 0; i < len(b); {
		if st.nhdr < hlen {
			k := copy(st.hdr[st.nhdr:hlen], b[i:])
			st.nhdr += k
			i += k
			if st.nhdr < hlen {
				return len(b), false
			}
			if st.records {
				st.need = int(binary.BigEndian.Uint16(st.hdr[3:5]))
			} else {
				st.need = int(binary.BigEndian.Uint32(st.hdr[:4]))
			}
		}
		k := min(st.need, len(b)-i)
		st.need -= k
		i += k
		if st.need == 0 {
			st.nhdr = 0
			return i, true
		}
	}
	return len(b), false
}

var gateSeq atomic.Uint64

// CutAfterNextFrame blackholes the link to the given servers right after
// the next complete frame the servers send to a client (a reply, a ping
// reply or a watch event): that frame is delivered, and from then on
// nothing passes in either direction while connections stay open, as with
// Blackhole. It is the worst case for a client's failure detection: the
// last frame it received is as recent as can be, while the server has
// heard nothing since the client's last send. The frame must start after
// the call (set it while the connection is idle; frames are found by their
// length prefix from the first byte the servers send after it). Heal ends
// it. On a TLS ensemble, whose frames the link cannot see, it cuts after
// the next complete TLS record, which carries the next frame (see the
// toxic's comment above).
func (l *Link) CutAfterNextFrame(servers ...int) error {
	name := fmt.Sprintf("cut-%s-%d", l.name, gateSeq.Add(1))
	gatesMu.Lock()
	gates[name] = new(cutGate)
	gatesMu.Unlock()
	l.mu.Lock()
	l.gates = append(l.gates, name)
	l.mu.Unlock()
	if err := l.toxic(servers, "cut-after-frame-up", cutFrameToxic, "upstream", map[string]any{"gate": name}); err != nil {
		return err
	}
	return l.toxic(servers, "cut-after-frame-down", cutFrameToxic, "downstream", map[string]any{"gate": name, "down": true, "records": l.e.cfg.TLS})
}

// forgetGates drops the link's gates; its toxics are gone. Called with l.mu
// held.
func (l *Link) forgetGatesLocked() {
	gatesMu.Lock()
	for _, g := range l.gates {
		delete(gates, g)
	}
	gatesMu.Unlock()
	l.gates = nil
}
