package recipes

import (
	"crypto/tls"
	"encoding/binary"
	"io"
	"net"
	"sync"
	"testing"
)

// fakeZK is a ZooKeeper server that knows the handshake, pings, setAuth and
// closeSession, and answers every other request with NoNode. It records
// the requests of each connection, for the tests of the Session's options.
type fakeZK struct {
	ln      net.Listener
	timeout int32 // granted session timeout, ms
	authErr int32 // the answer to setAuth (0: accepted)

	mu    sync.Mutex
	conns []net.Conn
	reqs  [][]fakeReq // per connection, in order
	wg    sync.WaitGroup
}

type fakeReq struct {
	op     int32
	scheme string // setAuth
	auth   string // setAuth
}

const (
	opPing         = 11
	opSetAuth      = 100
	opCloseSession = -11
	fakeSessionID  = 0x5ec
)

// newFakeZK listens on 127.0.0.1, over TLS when cfg is not nil; it is
// closed at the end of the test.
func newFakeZK(t *testing.T, cfg *tls.Config) *fakeZK {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if cfg != nil {
		ln = tls.NewListener(ln, cfg)
	}
	f := &fakeZK{ln: ln, timeout: 4000}
	f.wg.Add(1)
	go f.accept()
	t.Cleanup(f.close)
	return f
}

func (f *fakeZK) addr() string { return f.ln.Addr().String() }

func (f *fakeZK) port() string {
	_, p, _ := net.SplitHostPort(f.addr())
	return p
}

func (f *fakeZK) accept() {
	defer f.wg.Done()
	for {
		c, err := f.ln.Accept()
		if err != nil {
			return
		}
		f.mu.Lock()
		i := len(f.conns)
		f.conns = append(f.conns, c)
		f.reqs = append(f.reqs, nil)
		f.mu.Unlock()
		f.wg.Add(1)
		go func() {
			defer f.wg.Done()
			defer c.Close()
			f.serve(i, c)
		}()
	}
}

// requests returns a copy of what connection i sent after its handshake.
func (f *fakeZK) requests() [][]fakeReq {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([][]fakeReq, len(f.reqs))
	for i, r := range f.reqs {
		out[i] = append([]fakeReq(nil), r...)
	}
	return out
}

// drop closes every connection open now.
func (f *fakeZK) drop() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range f.conns {
		_ = c.Close()
	}
}

func (f *fakeZK) close() {
	_ = f.ln.Close()
	f.drop()
	f.wg.Wait()
}

func readFrame(r io.Reader) ([]byte, error) {
	var n [4]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		return nil, err
	}
	b := make([]byte, binary.BigEndian.Uint32(n[:]))
	_, err := io.ReadFull(r, b)
	return b, err
}

func writeFrame(w io.Writer, body []byte) error {
	_, err := w.Write(append(binary.BigEndian.AppendUint32(nil, uint32(len(body))), body...))
	return err
}

// jute strings and buffers: int32 length, bytes.
func juteString(b []byte) (string, []byte, bool) {
	if len(b) < 4 {
		return "", nil, false
	}
	n := int(int32(binary.BigEndian.Uint32(b)))
	if n < 0 || 4+n > len(b) {
		return "", nil, false
	}
	return string(b[4 : 4+n]), b[4+n:], true
}

func (f *fakeZK) serve(i int, c net.Conn) {
	// connect request: protocolVersion, lastZxidSeen, timeOut, sessionId,
	// passwd.
	if _, err := readFrame(c); err != nil {
		return
	}
	resp := binary.BigEndian.AppendUint32(nil, 0)
	resp = binary.BigEndian.AppendUint32(resp, uint32(f.timeout))
	resp = binary.BigEndian.AppendUint64(resp, fakeSessionID)
	resp = binary.BigEndian.AppendUint32(resp, 16)
	resp = append(resp, make([]byte, 16)...)
	if writeFrame(c, resp) != nil {
		return
	}
	zxid := int64(1)
	for {
		req, err := readFrame(c)
		if err != nil || len(req) < 8 {
			return
		}
		xid := int32(binary.BigEndian.Uint32(req[0:4]))
		op := int32(binary.BigEndian.Uint32(req[4:8]))
		r := fakeReq{op: op}
		code := int32(-101) // NoNode
		switch op {
		case opPing:
			code = 0
		case opCloseSession:
			code = 0
		case opSetAuth:
			// type int32, scheme string, auth buffer
			if len(req) >= 12 {
				if s, rest, ok := juteString(req[12:]); ok {
					r.scheme = s
					r.auth, _, _ = juteString(rest)
				}
			}
			code = f.authErr
		}
		if op != opPing {
			f.mu.Lock()
			f.reqs[i] = append(f.reqs[i], r)
			f.mu.Unlock()
		}
		h := binary.BigEndian.AppendUint32(nil, uint32(xid))
		h = binary.BigEndian.AppendUint64(h, uint64(zxid))
		h = binary.BigEndian.AppendUint32(h, uint32(code))
		zxid++
		if writeFrame(c, h) != nil || op == opCloseSession {
			return
		}
	}
}
