package zkcount

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"reflect"
	"slices"
	"sync"
	"testing"
)

// frame builds one length-prefixed frame from big-endian int32 fields
// followed by pad filler bytes.
func frame(fields []int32, pad int) []byte {
	body := make([]byte, 0, 4*len(fields)+pad)
	for _, f := range fields {
		body = binary.BigEndian.AppendUint32(body, uint32(f))
	}
	body = append(body, make([]byte, pad)...)
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(body))), body...)
}

// reply builds a server frame: xid, zxid, err, then extra int32 fields.
func reply(xid int32, zxid int64, errc int32, extra ...int32) []byte {
	body := binary.BigEndian.AppendUint32(nil, uint32(xid))
	body = binary.BigEndian.AppendUint64(body, uint64(zxid))
	body = binary.BigEndian.AppendUint32(body, uint32(errc))
	for _, e := range extra {
		body = binary.BigEndian.AppendUint32(body, uint32(e))
	}
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(body))), body...)
}

func cat(bs ...[]byte) []byte {
	var out []byte
	for _, b := range bs {
		out = append(out, b...)
	}
	return out
}

func parseAll(t testing.TB, dir Direction, stream []byte, chunk int) ([]Frame, error) {
	t.Helper()
	p := NewParser(dir)
	var got []Frame
	var firstErr error
	for len(stream) > 0 {
		n := min(chunk, len(stream))
		if err := p.Feed(stream[:n], func(f Frame) { got = append(got, f) }); err != nil && firstErr == nil {
			firstErr = err
		}
		stream = stream[n:]
	}
	return got, firstErr
}

func TestParseFrames(t *testing.T) {
	connect := frame([]int32{0, 0, 0}, 28) // connect request: no header
	tests := []struct {
		name    string
		dir     Direction
		stream  []byte
		want    []Frame
		wantErr error
	}{
		{
			name:   "connect then create and getChildren2",
			dir:    ClientToServer,
			stream: cat(connect, frame([]int32{1, int32(OpCreate)}, 30), frame([]int32{2, int32(OpGetChildren2)}, 9)),
			want: []Frame{
				{Connect: true, Len: 40},
				{Len: 38, Xid: 1, Op: OpCreate},
				{Len: 17, Xid: 2, Op: OpGetChildren2},
			},
		},
		{
			name:   "ping",
			dir:    ClientToServer,
			stream: cat(connect, frame([]int32{-2, int32(OpPing)}, 0)),
			want:   []Frame{{Connect: true, Len: 40}, {Len: 8, Xid: -2, Op: OpPing}},
		},
		{
			name:   "reply, notification (3.8, 3.9), ping reply",
			dir:    ServerToClient,
			stream: cat(frame([]int32{0, 4000}, 28), reply(7, 99, -101), reply(-1, -1, 0, 2, 3, 0), reply(-1, 0x10000002a, 0, 3, 3, 0), reply(-2, 5, 0)),
			want: []Frame{
				{Connect: true, Len: 36},
				{Len: 16, Xid: 7, Err: -101, Zxid: 99},
				{Len: 28, Xid: -1, Event: 2, Zxid: -1},
				{Len: 28, Xid: -1, Event: 3, Zxid: 0x10000002a},
				{Len: 16, Xid: -2, Zxid: 5},
			},
		},
		{
			name:    "request too short for a header",
			dir:     ClientToServer,
			stream:  cat(connect, frame([]int32{1}, 0)),
			want:    []Frame{{Connect: true, Len: 40}},
			wantErr: ErrCorrupt,
		},
		{
			name:    "absurd length",
			dir:     ServerToClient,
			stream:  []byte{0x7f, 0xff, 0xff, 0xff, 1, 2, 3},
			wantErr: ErrCorrupt,
		},
		{
			name:   "empty connect frame",
			dir:    ClientToServer,
			stream: []byte{0, 0, 0, 0},
			want:   []Frame{{Connect: true}},
		},
		{
			name:   "incomplete frame is held back",
			dir:    ClientToServer,
			stream: cat(connect, frame([]int32{1, int32(OpDelete)}, 10)[:12]),
			want:   []Frame{{Connect: true, Len: 40}},
		},
	}
	for _, tt := range tests {
		for _, chunk := range []int{1, 3, 7, 1 << 20} {
			got, err := parseAll(t, tt.dir, tt.stream, chunk)
			if !errors.Is(err, tt.wantErr) {
				t.Errorf("%s (chunk %d): err = %v, want %v", tt.name, chunk, err, tt.wantErr)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("%s (chunk %d):\n got %+v\nwant %+v", tt.name, chunk, got, tt.want)
			}
		}
	}
}

func TestOpString(t *testing.T) {
	for op, want := range map[Op]string{OpCreate: "create", OpGetChildren2: "getChildren2", OpClose: "close", Op(77): "op(77)"} {
		if got := op.String(); got != want {
			t.Errorf("Op(%d).String() = %q, want %q", int32(op), got, want)
		}
	}
}

// FuzzParse checks that the parser never panics and that how the stream is
// split into reads never changes what it reports.
func FuzzParse(f *testing.F) {
	f.Add(cat(frame([]int32{0, 0}, 20), frame([]int32{1, 1}, 3)), uint8(1), false)
	f.Add(cat(frame([]int32{0}, 30), reply(-1, 0, 0, 1)), uint8(5), true)
	f.Add([]byte{0, 0, 0}, uint8(2), false)
	f.Add(cat(frame([]int32{0}, 30), []byte{0x7f, 0xff, 0xff, 0xff, 1, 2}), uint8(3), true)
	f.Add(cat(frame([]int32{0}, 30), frame([]int32{1}, 0)), uint8(4), false)
	f.Fuzz(func(t *testing.T, stream []byte, chunk uint8, server bool) {
		dir := ClientToServer
		if server {
			dir = ServerToClient
		}
		whole, werr := parseAll(t, dir, stream, len(stream)+1)
		split, serr := parseAll(t, dir, stream, int(chunk%16)+1)
		if !reflect.DeepEqual(whole, split) || fmt.Sprint(werr) != fmt.Sprint(serr) {
			t.Fatalf("split changed the result: %+v %v vs %+v %v", whole, werr, split, serr)
		}
		for _, fr := range whole[min(1, len(whole)):] {
			if fr.Connect {
				t.Fatalf("connect reported after the first frame: %+v", whole)
			}
		}
	})
}

func TestCounterWrap(t *testing.T) {
	client, server := net.Pipe()
	c := New()
	wrapped := c.Wrap(client)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		// The fake server reads everything and answers with a connect
		// response, two setAuth replies (go-zookeeper's xid, and the
		// Java client's -4), one reply, two notifications and a ping
		// reply.
		go func() { _, _ = io.Copy(io.Discard, server) }()
		_, _ = server.Write(cat(frame([]int32{0, 4000}, 28), reply(7, 1, 0), reply(-4, 1, 0), reply(1, 1, 0), reply(-1, -1, 0, 2), reply(-1, 42, 0, 3), reply(-2, 1, 0)))
	}()
	stream := cat(frame([]int32{0}, 40), frame([]int32{7, int32(OpSetAuth)}, 20), frame([]int32{-4, int32(OpSetAuth)}, 20), frame([]int32{1, int32(OpCreate)}, 5), frame([]int32{-2, int32(OpPing)}, 0), frame([]int32{2, int32(OpCreate)}, 1))
	for len(stream) > 0 { // write in uneven pieces
		n := min(5, len(stream))
		if _, err := wrapped.Write(stream[:n]); err != nil {
			t.Fatal(err)
		}
		stream = stream[n:]
	}
	buf := make([]byte, 3)
	want := len(cat(frame([]int32{0, 4000}, 28), reply(7, 1, 0), reply(-4, 1, 0), reply(1, 1, 0), reply(-1, -1, 0, 2), reply(-1, 42, 0, 3), reply(-2, 1, 0)))
	for read := 0; read < want; {
		n, err := wrapped.Read(buf)
		if err != nil {
			t.Fatal(err)
		}
		read += n
	}
	_ = wrapped.Close()
	_ = server.Close()
	wg.Wait()
	got := c.Snapshot()
	if got.Connects != 1 || got.Auths != 2 || got.Pings != 1 || got.Req(OpCreate) != 2 || got.Total() != 2 || got.Notifications != 2 || got.Replies != 1 || got.NotificationZxid != 42 {
		t.Fatalf("counts = %+v", got)
	}
	// Bytes: the two creates (length prefix, xid, op, padding), the reply
	// and the two notifications; not the connect frames, the setAuths and
	// their replies, nor the ping and its reply.
	wantOut := int64(len(frame([]int32{1, int32(OpCreate)}, 5)) + len(frame([]int32{2, int32(OpCreate)}, 1)))
	wantIn := int64(len(cat(reply(1, 1, 0), reply(-1, -1, 0, 2), reply(-1, -1, 0, 3))))
	if got.BytesOut != wantOut || got.BytesIn != wantIn {
		t.Fatalf("bytes out %d in %d, want %d and %d", got.BytesOut, got.BytesIn, wantOut, wantIn)
	}
	d := got.Sub(Counts{Requests: map[Op]int64{OpCreate: 1}, Notifications: 1, Replies: 1, BytesOut: 10, BytesIn: 20})
	if d.Req(OpCreate) != 1 || d.Notifications != 1 || d.Replies != 0 || d.BytesOut != wantOut-10 || d.BytesIn != wantIn-20 {
		t.Fatalf("Sub = %+v", d)
	}
}

// Reply sizes are credited to their request's op by xid, also when the
// reply is parsed before the request (a Counter fed by hand may see them in
// either order).
func TestCounterReplyBytes(t *testing.T) {
	client, server := net.Pipe()
	defer server.Close()
	c := New()
	wrapped := c.Wrap(client)
	defer wrapped.Close()
	go func() { _, _ = io.Copy(io.Discard, server) }()
	readN := func(n int) {
		t.Helper()
		buf := make([]byte, n)
		if _, err := io.ReadFull(wrapped, buf); err != nil {
			t.Fatal(err)
		}
	}
	write := func(b []byte) {
		t.Helper()
		if _, err := wrapped.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	serve := func(b []byte) {
		go func() { _, _ = server.Write(b) }()
		readN(len(b))
	}
	write(frame([]int32{0}, 40)) // connect request
	early := reply(5, 1, 0, make([]int32, 10)...)
	serve(cat(frame([]int32{0, 4000}, 28), early)) // connect response, then xid 5's reply
	write(cat(frame([]int32{5, int32(OpGetData)}, 8), frame([]int32{6, int32(OpGetChildren2)}, 8)))
	list := reply(6, 2, 0, make([]int32, 30)...)
	notif := reply(-1, -1, 0, 4)
	serve(cat(notif, list))
	got := c.Snapshot()
	if got.ReplyBytes[OpGetData] != int64(len(early)) || got.ReplyBytes[OpGetChildren2] != int64(len(list)) || len(got.ReplyBytes) != 2 {
		t.Fatalf("reply bytes %v, want getData %d, getChildren2 %d", got.ReplyBytes, len(early), len(list))
	}
	if want := int64(len(early) + len(list) + len(notif)); got.BytesIn != want {
		t.Fatalf("bytes in %d, want %d", got.BytesIn, want)
	}
	d := got.Sub(Counts{ReplyBytes: map[Op]int64{OpGetData: int64(len(early))}})
	if d.ReplyBytes[OpGetData] != 0 || d.ReplyBytes[OpGetChildren2] != int64(len(list)) {
		t.Fatalf("Sub: reply bytes %v", d.ReplyBytes)
	}
}

// spyConn is a net.Conn whose Write reports what the Counter had counted
// when the bytes reached it.
type spyConn struct {
	net.Conn
	c      *Counter
	atSend []int64
}

func (s *spyConn) Write(b []byte) (int, error) {
	s.atSend = append(s.atSend, s.c.Snapshot().Req(OpCreate))
	return len(b), nil
}

// A request is counted before its bytes leave: the server may answer, and
// the caller return and take a Snapshot, before the Write returns.
func TestCounterCountsBeforeSending(t *testing.T) {
	c := New()
	spy := &spyConn{c: c}
	wrapped := c.Wrap(spy)
	for _, b := range [][]byte{frame([]int32{0}, 40), frame([]int32{1, int32(OpCreate)}, 5), frame([]int32{2, int32(OpCreate)}, 1)} {
		if _, err := wrapped.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	if want := []int64{0, 1, 2}; !slices.Equal(spy.atSend, want) {
		t.Fatalf("creates counted when each write reached the connection: %v, want %v", spy.atSend, want)
	}
}
