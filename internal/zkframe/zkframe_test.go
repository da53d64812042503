package zkframe

import (
	"bytes"
	"encoding/binary"
	"errors"
	"reflect"
	"testing"
)

// frame returns payload with its 4-byte big-endian length prefix.
func frame(payload []byte) []byte {
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(payload))), payload...)
}

func cat(bs ...[]byte) []byte {
	var out []byte
	for _, b := range bs {
		out = append(out, b...)
	}
	return out
}

// got is a Frame with its head copied out of the callback.
type got struct {
	First bool
	Len   int
	Head  string
}

// split feeds stream to a Splitter keeping keep bytes, in pieces of chunk
// bytes, and returns the frames and the first error.
func split(stream []byte, keep, chunk int) ([]got, error) {
	s := New(keep)
	var out []got
	var first error
	for len(stream) > 0 {
		n := min(chunk, len(stream))
		err := s.Feed(stream[:n], func(f Frame) error {
			out = append(out, got{f.First, f.Len, string(f.Head)})
			return nil
		})
		if err != nil && first == nil {
			first = err
		}
		stream = stream[n:]
	}
	return out, first
}

// model is the obvious parser of a whole stream, the reference the
// incremental Splitter must agree with.
func model(stream []byte, keep int) ([]got, error) {
	var out []got
	for len(stream) >= 4 {
		l := binary.BigEndian.Uint32(stream)
		if l > MaxFrame {
			return out, ErrCorrupt
		}
		if uint64(len(stream)-4) < uint64(l) {
			break
		}
		payload := stream[4 : 4+int(l)]
		out = append(out, got{len(out) == 0, int(l), string(payload[:min(max(keep, 0), len(payload))])})
		stream = stream[4+int(l):]
	}
	return out, nil
}

func TestSplitter(t *testing.T) {
	connect := frame(bytes.Repeat([]byte{7}, 20))
	tests := []struct {
		name    string
		stream  []byte
		keep    int
		want    []got
		wantErr error
	}{
		{"empty stream", nil, 8, nil, nil},
		{"connect then two frames", cat(connect, frame([]byte("abcdefgh-rest")), frame([]byte("xy"))), 8,
			[]got{{true, 20, "\x07\x07\x07\x07\x07\x07\x07\x07"}, {false, 13, "abcdefgh"}, {false, 2, "xy"}}, nil},
		{"keep nothing", cat(connect, frame([]byte("abc"))), 0, []got{{true, 20, ""}, {false, 3, ""}}, nil},
		{"negative keep", cat(frame([]byte("abc"))), -5, []got{{true, 3, ""}}, nil},
		{"empty frames", cat(frame(nil), frame(nil), frame([]byte("z"))), 4, []got{{true, 0, ""}, {false, 0, ""}, {false, 1, "z"}}, nil},
		{"incomplete length held back", cat(connect, []byte{0, 0}), 4, []got{{true, 20, "\x07\x07\x07\x07"}}, nil},
		{"incomplete payload held back", cat(connect, frame([]byte("abcdef"))[:7]), 4, []got{{true, 20, "\x07\x07\x07\x07"}}, nil},
		{"length beyond MaxFrame", cat(connect, []byte{0x04, 0, 0, 1}, frame([]byte("never"))), 4, []got{{true, 20, "\x07\x07\x07\x07"}}, ErrCorrupt},
		{"negative length", cat([]byte{0xff, 0xff, 0xff, 0xfe}, frame([]byte("never"))), 4, nil, ErrCorrupt},
		{"MaxFrame itself is a length", binary.BigEndian.AppendUint32(nil, MaxFrame), 4, nil, nil},
	}
	for _, tt := range tests {
		for _, chunk := range []int{1, 2, 3, 5, 7, 1 << 20} {
			out, err := split(tt.stream, tt.keep, chunk)
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil && err != nil) {
				t.Errorf("%s (chunk %d): err = %v, want %v", tt.name, chunk, err, tt.wantErr)
			}
			if !reflect.DeepEqual(out, tt.want) {
				t.Errorf("%s (chunk %d):\n got %+v\nwant %+v", tt.name, chunk, out, tt.want)
			}
		}
	}
}

// TestSplitterStopsOnCallbackError: an error from the callback stops the
// Splitter: Feed returns it, later frames are not reported, and later
// calls ignore their input.
func TestSplitterStopsOnCallbackError(t *testing.T) {
	errStop := errors.New("stop here")
	s := New(4)
	var n int
	emit := func(Frame) error {
		n++
		if n == 2 {
			return errStop
		}
		return nil
	}
	stream := cat(frame([]byte("a")), frame([]byte("b")), frame([]byte("c")))
	if err := s.Feed(stream, emit); !errors.Is(err, errStop) {
		t.Fatalf("Feed = %v, want the callback's error", err)
	}
	if err := s.Feed(frame([]byte("d")), emit); err != nil || n != 2 {
		t.Fatalf("Feed after stop = %v with %d frames reported, want nil and 2", err, n)
	}
}

// TestSplitterHeadIsReused: Head is only valid during the callback (the
// Splitter reuses its buffer), as documented.
func TestSplitterHeadIsReused(t *testing.T) {
	s := New(4)
	var heads [][]byte
	if err := s.Feed(cat(frame([]byte("aaaa")), frame([]byte("bbbb"))), func(f Frame) error {
		heads = append(heads, f.Head)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(heads) != 2 || &heads[0][0] != &heads[1][0] {
		t.Fatalf("heads %q do not share the buffer", heads)
	}
}

// FuzzSplit: however the stream is cut into pieces, the Splitter reports
// exactly what the whole-stream model finds: the same frames (first flag,
// length, head) and the same verdict on corrupt framing. It never panics.
func FuzzSplit(f *testing.F) {
	f.Add(cat(frame(make([]byte, 40)), frame([]byte{0, 0, 0, 1, 0, 0, 0, 1}), frame([]byte("xyz"))), uint8(3), uint8(16))
	f.Add(cat(frame(nil), frame(nil)), uint8(1), uint8(0))
	f.Add([]byte{0, 0, 0}, uint8(2), uint8(4))
	f.Add([]byte{0x7f, 0xff, 0xff, 0xff, 1, 2, 3}, uint8(1), uint8(4))
	f.Add(cat(frame([]byte("hello")), []byte{0x80, 0, 0, 0}), uint8(4), uint8(2))
	f.Fuzz(func(t *testing.T, stream []byte, chunk, keep uint8) {
		k := int(keep % 24)
		want, werr := model(stream, k)
		out, err := split(stream, k, int(chunk%16)+1)
		if !reflect.DeepEqual(out, want) || !errors.Is(err, werr) || (werr == nil && err != nil) {
			t.Fatalf("chunk %d keep %d:\n got %+v, %v\nwant %+v, %v", chunk%16+1, k, out, err, want, werr)
		}
	})
}

// TestAtBoundary: true only between frames after the first, false inside
// a length prefix or a payload, before the first frame, and once stopped.
func TestAtBoundary(t *testing.T) {
	s := New(4)
	emit := func(Frame) error { return nil }
	steps := []struct {
		feed []byte
		want bool
	}{
		{nil, false},                            // before the first frame
		{frame([]byte("connect")), true},        // the first frame is done
		{[]byte{0, 0}, false},                   // half a length prefix
		{[]byte{0, 3, 'a'}, false},              // inside the payload
		{[]byte{'b', 'c'}, true},                // frame done
		{frame(nil), true},                      // an empty frame
		{[]byte{0xff, 0xff, 0xff, 0xff}, false}, // beyond MaxFrame: stopped
	}
	for i, st := range steps {
		_ = s.Feed(st.feed, emit)
		if got := s.AtBoundary(); got != st.want {
			t.Errorf("step %d: AtBoundary = %v, want %v", i, got, st.want)
		}
	}
}
