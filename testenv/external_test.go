package testenv

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"
)

// Attach refuses what cannot name a server, and a server that does not
// answer srvr; the backend it uses refuses every server fault with
// ErrUnsupported.
func TestAttachRefuses(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, servers := range [][]string{nil, {"no-port"}, {"127.0.0.1:2181", "host"}} {
		if _, err := Attach(ctx, servers, nil, nil); !errors.Is(err, ErrConfig) {
			t.Errorf("Attach(%q): %v, want ErrConfig", servers, err)
		}
	}
	// A listener that closes every connection at once: no srvr answer.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	if _, err := Attach(ctx, []string{l.Addr().String()}, nil, nil); !errors.Is(err, ErrConfig) {
		t.Errorf("Attach to a server that does not answer srvr: %v, want ErrConfig", err)
	}
	b := externalBackend{"127.0.0.1:1"}
	for name, fault := range map[string]func(context.Context, int) error{
		"kill": b.kill, "stop": b.stop, "start": b.startServer, "pause": b.pause, "resume": b.resume, "isolate": func(ctx context.Context, i int) error { return b.isolate(ctx, i, Both) }, "rejoin": b.rejoin,
	} {
		if err := fault(ctx, 0); !errors.Is(err, ErrUnsupported) {
			t.Errorf("%s on an external server: %v, want ErrUnsupported", name, err)
		}
	}
	if b.clientAddr(0) != "127.0.0.1:1" || b.exited(ctx, 0) {
		t.Errorf("external backend: addr %q, exited %v", b.clientAddr(0), b.exited(ctx, 0))
	}
}
