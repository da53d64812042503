package testenv

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
)

// A Link is a set of in-process Toxiproxy proxies, one per server, between
// clients and the servers' client ports. Faults injected on a link affect
// only the clients connected through it. Methods that take servers apply to
// those 0-based server indexes, or to every server when none is given.
//
// A Link is safe for concurrent use.
type Link struct {
	name    string
	e       *Ensemble
	mu      sync.Mutex
	proxies []*toxiproxy.Proxy
	closed  bool
	gates   []string // of CutAfterNextFrame faults, until Heal
}

func newLink(e *Ensemble, name string, upstreams []string) (*Link, error) {
	l := &Link{name: name, e: e}
	for i, up := range upstreams {
		p := toxiproxy.NewProxy(e.tp, fmt.Sprintf("%s-zk%d", name, i+1), "127.0.0.1:0", up)
		if err := p.Start(); err != nil {
			l.Close()
			return nil, fmt.Errorf("testenv: proxy for server %d: %w", i, err)
		}
		l.proxies = append(l.proxies, p)
	}
	return l, nil
}

// Name returns the name the link was made with.
func (l *Link) Name() string { return l.name }

// Addrs returns the proxies' addresses, one per server, in server order.
func (l *Link) Addrs() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]string, len(l.proxies))
	for i, p := range l.proxies {
		out[i] = p.Listen
	}
	return out
}

// ConnectString returns Addrs joined with commas, as ZooKeeper clients
// (Curator, kazoo, zkCli) take it.
func (l *Link) ConnectString() string { return strings.Join(l.Addrs(), ",") }

// each runs fn on the proxies of the given servers (all when none).
func (l *Link) each(servers []int, fn func(p *toxiproxy.Proxy) error) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return ErrClosed
	}
	idx, err := pick(len(l.proxies), servers)
	if err != nil {
		return err
	}
	for _, i := range idx {
		if err := fn(l.proxies[i]); err != nil {
			return fmt.Errorf("testenv: link %s, server %d: %w", l.name, i, err)
		}
	}
	return nil
}

// pick validates server indexes; none means all n.
func pick(n int, servers []int) ([]int, error) {
	if len(servers) == 0 {
		all := make([]int, n)
		for i := range all {
			all[i] = i
		}
		return all, nil
	}
	for _, i := range servers {
		if i < 0 || i >= n {
			return nil, fmt.Errorf("%w: %d (have %d)", ErrServer, i, n)
		}
	}
	return servers, nil
}

// Cut closes every connection through the link to the given servers and
// refuses new ones (the client sees its connection drop and connects fail
// with "connection refused") until Restore. Sessions survive a cut shorter
// than their timeout.
func (l *Link) Cut(servers ...int) error {
	return l.each(servers, func(p *toxiproxy.Proxy) error { p.Stop(); return nil })
}

// Restore accepts connections again after Cut. Restoring a link that is not
// cut does nothing.
func (l *Link) Restore(servers ...int) error {
	return l.each(servers, func(p *toxiproxy.Proxy) error {
		if err := p.Start(); err != nil && err != toxiproxy.ErrProxyAlreadyStarted {
			return err
		}
		return nil
	})
}

// toxic adds (or replaces) a named toxic on the given servers' proxies.
func (l *Link) toxic(servers []int, name, typ, stream string, attrs map[string]any) error {
	body, err := json.Marshal(map[string]any{
		"name": name, "type": typ, "stream": stream, "toxicity": 1.0, "attributes": attrs,
	})
	if err != nil {
		return err
	}
	return l.each(servers, func(p *toxiproxy.Proxy) error {
		if p.Toxics.GetToxic(name) != nil {
			if err := p.Toxics.RemoveToxic(context.Background(), name); err != nil {
				return err
			}
		}
		_, err := p.Toxics.AddToxicJson(bytes.NewReader(body))
		return err
	})
}

// Heal removes every toxic (blackhole, half-open, latency, ...) from the
// given servers' proxies; traffic held back by them flows again. It does not
// undo Cut.
func (l *Link) Heal(servers ...int) error {
	err := l.each(servers, func(p *toxiproxy.Proxy) error {
		p.Toxics.ResetToxics(context.Background())
		return nil
	})
	if err == nil && len(servers) == 0 {
		l.mu.Lock()
		l.forgetGatesLocked()
		l.mu.Unlock()
	}
	return err
}

// Blackhole silences both directions while keeping TCP connections open:
// bytes are read and dropped, nothing is reset, and new connections are
// accepted but hear nothing. Clients notice only by their own timeouts.
// Heal ends it; a connection opened during the blackhole lost its connect
// request, so a go-zookeeper client may sit in its handshake until its own
// timeout unless the link is also reset (Cut, then Restore).
func (l *Link) Blackhole(servers ...int) error {
	if err := l.toxic(servers, "blackhole-up", "timeout", "upstream", map[string]any{"timeout": 0}); err != nil {
		return err
	}
	return l.toxic(servers, "blackhole-down", "timeout", "downstream", map[string]any{"timeout": 0})
}

// HalfOpen drops everything the servers send while still delivering what
// clients send: requests are applied by ZooKeeper but their responses (and
// watch events) are lost, as when a link fails right after a request left.
// Heal ends it.
func (l *Link) HalfOpen(servers ...int) error {
	return l.toxic(servers, "half-open", "timeout", "downstream", map[string]any{"timeout": 0})
}

// Latency delays every chunk the servers send by d, plus or minus jitter.
// Heal ends it.
func (l *Link) Latency(d, jitter time.Duration, servers ...int) error {
	return l.toxic(servers, "latency", "latency", "downstream",
		map[string]any{"latency": d.Milliseconds(), "jitter": jitter.Milliseconds()})
}

// Bandwidth limits what the servers send to kbps kilobytes per second.
// Heal ends it.
func (l *Link) Bandwidth(kbps int64, servers ...int) error {
	return l.toxic(servers, "bandwidth", "bandwidth", "downstream", map[string]any{"rate": kbps})
}

// Slicer cuts what the servers send into pieces of about avg bytes (plus or
// minus variation), each sent delay apart, so responses arrive split across
// many reads. Heal ends it.
func (l *Link) Slicer(avg, variation int, delay time.Duration, servers ...int) error {
	return l.toxic(servers, "slicer", "slicer", "downstream",
		map[string]any{"average_size": avg, "size_variation": variation, "delay": delay.Microseconds()})
}

// LimitData closes each connection once the servers have sent it n bytes,
// typically in the middle of a response. It counts per connection from the
// moment it is set; Heal ends it.
func (l *Link) LimitData(n int64, servers ...int) error {
	return l.toxic(servers, "limit-data", "limit_data", "downstream", map[string]any{"bytes": n})
}

// LimitDataEach closes each connection once the servers have sent it a
// number of bytes drawn for that connection, in [min, min+spread), from
// seed and the connection's order on the proxy (the same seed gives the
// same numbers in the same order): unlike LimitData, a client whose
// traffic repeats after each reconnection is not cut at the same kind of
// frame every time. It counts per connection from the moment it is set;
// Heal ends it.
func (l *Link) LimitDataEach(min, spread int64, seed uint64, servers ...int) error {
	return l.toxic(servers, "limit-data", limitEachToxic, "downstream", map[string]any{"min": min, "spread": spread, "seed": seed})
}

// ResetPeer resets every connection (TCP RST) after timeout, and new
// connections likewise, until Heal.
func (l *Link) ResetPeer(timeout time.Duration, servers ...int) error {
	return l.toxic(servers, "reset-peer", "reset_peer", "upstream", map[string]any{"timeout": timeout.Milliseconds()})
}

// SlowClose delays the close of each connection by delay after the server
// closed it. Heal ends it.
func (l *Link) SlowClose(delay time.Duration, servers ...int) error {
	return l.toxic(servers, "slow-close", "slow_close", "downstream", map[string]any{"delay": delay.Milliseconds()})
}

// ExpireSession forces a real expiry of sessionID: it blackholes this link to
// every server, waits until the ZooKeeper leader no longer lists the session
// (so the server has expired it and deleted its ephemeral nodes), then heals
// the link and resets its connections (Cut, then Restore), so that the
// client reconnects at once and learns of the expiry. (A connection opened
// during the blackhole had its connect request dropped; go-zookeeper would
// wait out its handshake timeout, about ten receive timeouts, on it.) Other
// links are untouched, so the client must be the only one on this link
// whose session should die. It returns ctx's error if the session outlives
// ctx, healing the link first.
func (l *Link) ExpireSession(ctx context.Context, sessionID int64) error {
	if err := l.Blackhole(); err != nil {
		return err
	}
	return l.AwaitExpiry(ctx, sessionID)
}

// AwaitExpiry is ExpireSession's second half, for a link that the caller
// has already silenced with Blackhole (to look at its client first): it
// waits until the ZooKeeper leader no longer lists sessionID, then heals
// the link and resets its connections. It heals the link in any case,
// returning ctx's error if the session outlives ctx.
func (l *Link) AwaitExpiry(ctx context.Context, sessionID int64) error {
	defer l.Heal() //nolint:errcheck // best effort: a closed link has nothing to heal
	for {
		known, err := l.e.sessionKnown(ctx, sessionID)
		if err == nil && !known {
			return l.Reset()
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("testenv: session 0x%x not expired: %w", sessionID, context.Cause(ctx))
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Reset heals the link and closes every connection through it (Cut, then
// Restore): its clients reconnect at once, their sessions intact. Use it to
// end a Blackhole or HalfOpen whose dropped bytes would leave a connection
// mid-frame.
func (l *Link) Reset() error {
	if err := l.Heal(); err != nil {
		return err
	}
	if err := l.Cut(); err != nil {
		return err
	}
	return l.Restore()
}

// Close stops the link's proxies and closes every connection through them.
// It is idempotent. The ensemble's default link is closed by Ensemble.Close.
func (l *Link) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	l.closed = true
	l.forgetGatesLocked()
	for _, p := range l.proxies {
		p.Toxics.ResetToxics(context.Background())
		p.Stop()
	}
	return nil
}
