package cluster

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/recipes"
	"github.com/zkrecipes/zkrecipes/testenv"
)

// Security is how a scenario's sessions reach the servers and who they
// are. The zero value is plain TCP and no authentication (world:anyone
// ACLs). With TLS set, every connection (clients', setup's, the runner's)
// runs TLS over the client's link; with User set, every session adds the
// digest credentials User:Password before its first other request, and
// every node the workloads and the runner make carries ACL(): all for
// that user, read for anyone (recipes.DefaultAuthACL for the same user).
// Invariant: the runner's own sessions use the same identity as the
// workloads', so they may delete whatever the workloads left.
type Security struct {
	TLS *tls.Config
	// CAPEM is the PEM of the CA that TLS trusts, for clients in worker
	// processes (which cannot be handed a *tls.Config); empty when not
	// known.
	CAPEM    []byte
	User     string
	Password string
}

// Secure reports whether s asks for TLS or authentication.
func (s Security) Secure() bool { return s.TLS != nil || s.User != "" }

// ACL is the ACL of the nodes the workloads and the runner make
// themselves: world:anyone all without a user, else digest all for the
// user and world read (what recipes.DefaultAuthACL gives a recipe
// Session authenticated as that user).
func (s Security) ACL() []zk.ACL {
	if s.User == "" {
		return zk.WorldACL(zk.PermAll)
	}
	return append(zk.DigestACL(zk.PermAll, s.User, s.Password), zk.WorldACL(zk.PermRead)...)
}

// RecipeOptions returns the recipes.Session options of a session with
// security s: WithTLS and WithDigestAuth as set (none for the zero value).
//
// They begin with the ensembles' timing (testenv's default tickTime and
// SyncLimit, which the chaos ensembles use), which every recipes.Session
// needs for its lease, so that every session of the suite, in process or in
// a worker process, carries it.
func (s Security) RecipeOptions() []recipes.Option {
	out := []recipes.Option{recipes.WithEnsembleTiming(testenv.DefaultTickTime, testenv.SyncLimit)}
	if s.TLS != nil {
		out = append(out, recipes.WithTLS(s.TLS))
	}
	if s.User != "" {
		out = append(out, recipes.WithDigestAuth(s.User, s.Password))
	}
	return out
}

// Dialer wraps base (net.DialTimeout when nil) with TLS when s.TLS is
// set: the TCP connection, then a handshake within the same timeout,
// checked against s.TLS.ServerName or else the dialed host. Without TLS it
// returns base.
func (s Security) Dialer(base func(network, address string, timeout time.Duration) (net.Conn, error)) func(network, address string, timeout time.Duration) (net.Conn, error) {
	if base == nil {
		base = net.DialTimeout
	}
	if s.TLS == nil {
		return base
	}
	return func(network, address string, timeout time.Duration) (net.Conn, error) {
		raw, err := base(network, address, timeout)
		if err != nil {
			return nil, err
		}
		cfg := s.TLS.Clone()
		if cfg.ServerName == "" {
			host, _, err := net.SplitHostPort(address)
			if err != nil {
				host = address
			}
			cfg.ServerName = host
		}
		tc := tls.Client(raw, cfg)
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		if err := tc.HandshakeContext(ctx); err != nil {
			_ = raw.Close()
			return nil, fmt.Errorf("chaos: tls handshake with %s: %w", address, err)
		}
		return tc, nil
	}
}

// Connect opens a raw go-zookeeper connection to addrs with security s,
// dialing through base (nil: direct), and adds the digest credentials
// (1 setAuth, queued ahead of every other request, and sent again by
// go-zookeeper on every new connection). The caller closes the
// connection.
func (s Security) Connect(addrs []string, st time.Duration, base func(network, address string, timeout time.Duration) (net.Conn, error)) (*zk.Conn, error) {
	conn, _, err := zk.Connect(addrs, st, zk.WithLogger(NopLogger{}), zk.WithDialer(s.Dialer(base)))
	if err != nil {
		return nil, err
	}
	if s.User != "" {
		// Queued now, it is sent right after the handshake, before any ping.
		if err := conn.AddAuth("digest", []byte(s.User+":"+s.Password)); err != nil {
			conn.Close()
			return nil, fmt.Errorf("digest auth as %q: %w", s.User, err)
		}
	}
	return conn, nil
}

// discard is the logger of the workloads' sessions.
var discard = slog.New(slog.DiscardHandler)

// SessionOptions returns the options of a workload client's
// recipes.Session: the scenario's session timeout, a silent logger, c's
// dialer (which records the server each connection reaches) and the
// scenario's security. A nil c means no dialer (the servers directly).
func (e *Env) SessionOptions(c *Client) []recipes.Option {
	opts := []recipes.Option{recipes.WithSessionTimeout(e.SessionTimeout), recipes.WithLogger(discard)}
	if c != nil {
		opts = append(opts, recipes.WithDialer(c.Dial))
	}
	return append(opts, e.Security.RecipeOptions()...)
}

// ACL is e.Security.ACL: the ACL of the nodes a workload makes itself.
func (e *Env) ACL() []zk.ACL { return e.Security.ACL() }
