package tap

import (
	"net"
	"sync"
	"testing"
	"time"
)

// codeLog is an authSink that keeps the codes it is told.
type codeLog struct {
	mu    sync.Mutex
	codes []int32
}

func (l *codeLog) authReply(code int32) {
	l.mu.Lock()
	l.codes = append(l.codes, code)
	l.mu.Unlock()
}

// codeAuthRequired is ZooKeeper's SESSIONCLOSEDREQUIRESASLAUTH.
const codeAuthRequired = -124

// TestTapReportsAuthRefusal: the tap reports the error code of the last
// reply to a request of each read, skipping the connect response and
// watch events; one read at a time here.
func TestTapReportsAuthRefusal(t *testing.T) {
	sink := &codeLog{}
	tap := New(Sinks{Auth: sink.authReply})
	client, server := net.Pipe()
	dial := tap.Dialer(func(string, string, time.Duration) (net.Conn, error) { return client, nil })
	c, err := dial("tcp", "x", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	defer server.Close()
	replies := [][]byte{
		frame(make([]byte, 36)),       // connect response: not reported
		reply(xidWatchEvent, 0, 0),    // watch event: not reported
		reply(3, 5, 0),                // served
		reply(4, 0, codeAuthRequired), // refused
	}
	go func() {
		for _, r := range replies {
			if _, err := server.Write(r); err != nil {
				return
			}
		}
	}()
	buf := make([]byte, 64)
	for range replies {
		if _, err := c.Read(buf); err != nil {
			t.Fatal(err)
		}
	}
	sink.mu.Lock()
	defer sink.mu.Unlock()
	if len(sink.codes) != 2 || sink.codes[0] != 0 || sink.codes[1] != codeAuthRequired {
		t.Fatalf("codes reported %v, want [0 %d]", sink.codes, codeAuthRequired)
	}
}
