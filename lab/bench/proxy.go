package bench

import (
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/zkrecipes/zkrecipes/lab/internal/zkcount"
)

// Proxy is a counting TCP proxy: one loopback listener per upstream
// ZooKeeper address, forwarding every connection byte for byte and parsing
// both directions with zkcount on the upstream side (what is written to the
// server are requests; what is read from it are replies and watch
// notifications). Every client of one implementation connects through the
// same Proxy, whatever its language, so all are counted the same way.
type Proxy struct {
	counter   *zkcount.Counter
	listeners []net.Listener
	dial      func(network, address string) (net.Conn, error)

	mu     sync.Mutex
	closed bool
	conns  map[net.Conn]struct{}
	wg     sync.WaitGroup
}

// NewProxy listens on 127.0.0.1 for each of upstreams and counts into c.
func NewProxy(upstreams []string, c *zkcount.Counter) (*Proxy, error) {
	p := &Proxy{counter: c, conns: map[net.Conn]struct{}{}, dial: (&net.Dialer{Timeout: 5 * time.Second}).Dial}
	for _, up := range upstreams {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			_ = p.Close()
			return nil, fmt.Errorf("bench: proxy listen: %w", err)
		}
		p.listeners = append(p.listeners, l)
		p.wg.Add(1)
		go p.accept(l, up)
	}
	return p, nil
}

// Counter returns the proxy's counter.
func (p *Proxy) Counter() *zkcount.Counter { return p.counter }

// Addrs returns the proxy's listening addresses, in upstream order.
func (p *Proxy) Addrs() []string {
	out := make([]string, len(p.listeners))
	for i, l := range p.listeners {
		out[i] = l.Addr().String()
	}
	return out
}

// ConnectString returns Addrs joined by commas.
func (p *Proxy) ConnectString() string { return strings.Join(p.Addrs(), ",") }

func (p *Proxy) accept(l net.Listener, upstream string) {
	defer p.wg.Done()
	for {
		down, err := l.Accept()
		if err != nil {
			return
		}
		if !p.track(down) {
			_ = down.Close()
			return
		}
		p.wg.Add(1)
		go p.serve(down, upstream)
	}
}

// track registers c to be closed by Close; false once closed.
func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *Proxy) untrack(c net.Conn) {
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
}

// serve forwards one client connection until either side closes.
func (p *Proxy) serve(down net.Conn, upstream string) {
	defer p.wg.Done()
	defer p.untrack(down)
	defer down.Close()
	raw, err := p.dial("tcp", upstream)
	if err != nil {
		return
	}
	if !p.track(raw) {
		_ = raw.Close()
		return
	}
	defer p.untrack(raw)
	up := p.counter.Wrap(raw)
	defer up.Close()
	done := make(chan struct{}, 2)
	go func() { pipe(up, down); done <- struct{}{} }() // requests: counted on write
	go func() { pipe(down, up); done <- struct{}{} }() // replies: counted on read
	<-done
	// One side ended: end the other, so that the client sees the
	// connection drop as it would without the proxy.
	_ = down.Close()
	_ = up.Close()
	<-done
}

// pipe copies src to dst without io.Copy's ReaderFrom/WriterTo shortcuts,
// so every byte passes through the counting conn's Read or Write.
func pipe(dst io.Writer, src io.Reader) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// Close stops the listeners, closes every proxied connection and waits for
// the proxy's goroutines to end. It is idempotent.
func (p *Proxy) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	var errs []error
	for _, l := range p.listeners {
		if err := l.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
			errs = append(errs, err)
		}
	}
	for c := range p.conns {
		_ = c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
	return errors.Join(errs...)
}
