package tap

import (
	"encoding/binary"
	"net"
	"testing"
	"time"
)

func frame(body []byte) []byte {
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(body))), body...)
}

func createRequest(xid int32, path string) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(xid))
	b = binary.BigEndian.AppendUint32(b, opCreate)
	b = binary.BigEndian.AppendUint32(b, uint32(len(path)))
	b = append(b, path...)
	b = append(b, 0, 0, 0, 0) // data, acl, flags follow in a real request
	return frame(b)
}

func reply(xid int32, zxid int64, errc int32) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(xid))
	b = binary.BigEndian.AppendUint64(b, uint64(zxid))
	b = binary.BigEndian.AppendUint32(b, uint32(errc))
	return frame(append(b, 1, 2, 3))
}

// TestCreateTap: the zxid of a wanted create's successful reply is
// recorded, whatever the read and write chunking; others are ignored.
func TestCreateTap(t *testing.T) {
	for _, chunk := range []int{1, 5, 1 << 20} {
		tap := New(Sinks{})
		tap.Expect("/a/_c_x-lock-")
		tap.Expect("/a/_c_y-lock-")
		client, server := net.Pipe()
		dial := tap.Dialer(func(string, string, time.Duration) (net.Conn, error) { return client, nil })
		c, err := dial("tcp", "x", time.Second)
		if err != nil {
			t.Fatal(err)
		}
		requests := append(frame(make([]byte, 40)), createRequest(7, "/a/_c_x-lock-")...) // connect, then create
		requests = append(requests, createRequest(8, "/a/_c_y-lock-")...)
		requests = append(requests, createRequest(9, "/other")...)
		replies := append(frame(make([]byte, 36)), reply(7, 0x1234, 0)...)
		replies = append(replies, reply(8, 0x99, -110)...) // node exists: no zxid
		replies = append(replies, reply(9, 0x77, 0)...)
		go func() {
			buf := make([]byte, len(requests))
			for n := 0; n < len(requests); {
				k, err := server.Read(buf[n:])
				if err != nil {
					return
				}
				n += k
			}
			_, _ = server.Write(replies)
		}()
		for b := requests; len(b) > 0; {
			n := min(chunk, len(b))
			if _, err := c.Write(b[:n]); err != nil {
				t.Fatal(err)
			}
			b = b[n:]
		}
		buf := make([]byte, chunk)
		for n := 0; n < len(replies); {
			k, err := c.Read(buf)
			if err != nil {
				t.Fatal(err)
			}
			n += k
		}
		_ = c.Close()
		_ = server.Close()
		if z, ok := tap.Take("/a/_c_x-lock-"); !ok || z != 0x1234 {
			t.Errorf("chunk %d: take x = %x, %v", chunk, z, ok)
		}
		if _, ok := tap.Take("/a/_c_y-lock-"); ok {
			t.Errorf("chunk %d: failed create recorded", chunk)
		}
		if _, ok := tap.Take("/other"); ok {
			t.Errorf("chunk %d: unwanted create recorded", chunk)
		}
		if len(tap.want) != 0 || len(tap.done) != 0 {
			t.Errorf("chunk %d: tap not empty: %v %v", chunk, tap.want, tap.done)
		}
	}
}
