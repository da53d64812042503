package recipes

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
)

// ACLProvider chooses the ACL of the nodes the recipes create, path by
// path, as Curator's ACLProvider does: ACLForPath answers for one path, and
// an empty answer means the Session's default ACL (WithACL, or the default
// described there). The path is the one the create request names: for a
// sequential node, the prefix without the sequence the server appends; for
// the missing parents created on the way (container nodes), each parent.
// ACLForPath is called before every create and must be safe for concurrent
// use; it must not block.
type ACLProvider interface {
	ACLForPath(path string) []zk.ACL
}

// ACLProviderFunc is a function used as an ACLProvider.
type ACLProviderFunc func(path string) []zk.ACL

// ACLForPath calls f(path).
func (f ACLProviderFunc) ACLForPath(path string) []zk.ACL { return f(path) }

// DefaultAuthACL returns the default ACL of a Session with WithDigestAuth
// and neither WithACL nor an ACLProvider's answer: all permissions for the
// Session's own principals (the "auth" scheme: whoever authenticated as
// one of the users the Session added when the node was created) and read
// for anyone. Another client with the same credentials may do everything
// on the node; any other client may read it and list its children (waiters
// and observers need that), and gets zk.ErrNoAuth for every create, delete,
// setData or setACL on it or under it.
func DefaultAuthACL() []zk.ACL {
	return append(zk.AuthACL(zk.PermAll), zk.WorldACL(zk.PermRead)...)
}

// WithDigestAuth authenticates the Session with ZooKeeper's digest scheme
// as user, with password: Connect adds the credentials once the session is
// established (1 setAuth request), before it returns, and fails if the
// server refuses them (an error wrapping ErrAuthFailed and the server's
// answer, usually zk.ErrAuthFailed). go-zookeeper (v1.0.4, Conn.AddAuth and
// resendZkAuth) keeps the credentials it was given and sends them again on
// every new connection, before any other request queued for it, so the
// Session keeps its identity across reconnections and new sessions. Call
// it more than once to add several identities.
//
// Unless WithACL sets the default ACL, a Session with digest
// authentication creates its nodes with DefaultAuthACL (creator all,
// anyone read) instead of world:anyone all.
//
// An empty user, or one containing ':' (the server splits "user:password"
// at the first colon), makes Connect fail with ErrBadArgument; a user and
// password whose setAuth request is larger than the session's request
// limit (WithMaxData) make it fail with an error wrapping ErrDataTooLarge
// and ErrBadArgument, before anything is dialed. The password
// is never logged nor printed by the Session (see Session.LogValue).
func WithDigestAuth(user, password string) Option {
	return func(o *options) {
		if user == "" || strings.Contains(user, ":") {
			o.fail(fmt.Errorf("%w: WithDigestAuth: user %q is empty or contains ':'", ErrBadArgument, user))
			return
		}
		o.auth = append(o.auth, &digestAuth{user: user, password: password})
	}
}

// WithTLS dials the servers over TLS, with a clone of cfg taken when
// WithTLS is called (later changes to cfg do not reach the Session). The layers of a connection, from the
// socket up: the TCP connection (WithDialer's function, or net.DialTimeout),
// TLS, the Session's own tap (which reads ZooKeeper's frames and must see
// them in plaintext), go-zookeeper. The TLS handshake is done in the dial,
// bounded by the timeout go-zookeeper gives the dial (1 s in v1.0.4), after
// the TCP connection, which has the same bound.
//
// Server name: when cfg.ServerName is empty, each server's certificate is
// checked against the host of its entry in Connect's server list, as
// tls.Dial checks against the host it dials (an IP address entry against
// the certificate's IP addresses). For that, a Session with WithTLS hands
// go-zookeeper the entries as written, and each dial resolves its entry's
// name; without WithTLS go-zookeeper resolves every name to its IP
// addresses once, at Connect (the Java client's StaticHostProvider also
// resolves at each connection). Set cfg.ServerName to check every server
// against that one name, say when the servers are reached through a proxy
// at another address.
//
// A nil cfg makes Connect fail with ErrBadArgument: an option meant to
// encrypt must not be dropped silently.
func WithTLS(cfg *tls.Config) Option {
	cfg = cfg.Clone() // nil for nil
	return func(o *options) {
		if cfg == nil {
			o.fail(fmt.Errorf("%w: WithTLS: nil *tls.Config", ErrBadArgument))
			return
		}
		o.tls = cfg.Clone()
	}
}

// WithACLProvider sets the provider of the ACL of each node the recipes
// create (see ACLProvider and Session.ACLFor). Where p answers nothing, the
// default ACL applies (see WithACL). A nil p sets no provider.
func WithACLProvider(p ACLProvider) Option {
	return func(o *options) { o.aclProv = p }
}

// fail records the first invalid option.
func (o *options) fail(err error) {
	if o.err == nil {
		o.err = err
	}
}

// buildOptions applies opts (nil ones skipped) to the defaults and then
// the secure default ACL for an authenticated Session; it fails with the
// first invalid option's error (ErrBadArgument). Pure.
func buildOptions(opts []Option) (options, error) {
	o := defaultOptions()
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	if o.err != nil {
		return options{}, o.err
	}
	for _, a := range o.auth {
		// The server drops the connection on a setAuth over its limit, and
		// go-zookeeper sends it again on every new connection.
		if n := authRequestSize("digest", len(a.user)+1+len(a.password)); n > o.maxData {
			return options{}, fmt.Errorf("%w (%w): WithDigestAuth: a user of %d bytes and a password of %d make a setAuth of %d bytes on the wire, server limit %d",
				ErrDataTooLarge, ErrBadArgument, len(a.user), len(a.password), n, o.maxData)
		}
	}
	if len(o.auth) > 0 && !o.aclSet {
		o.acl = DefaultAuthACL()
	}
	return o, nil
}

// ACLFor returns the ACL of a node the recipes create at path: the
// ACLProvider's answer when there is one and it is not empty, else the
// default ACL (ACL). Every create of every zkrecipes package, the missing
// parents created on the way included, takes its ACL from ACLFor. Nil for
// a nil Session.
func (s *Session) ACLFor(path string) []zk.ACL {
	if s == nil {
		return nil
	}
	if p := s.opts.aclProv; p != nil {
		if acl := p.ACLForPath(path); len(acl) > 0 {
			return acl
		}
	}
	return s.opts.acl
}

// digestAuth is one identity of WithDigestAuth. options holds it by
// pointer, which fmt prints as an address inside a struct; its own
// formatting hides the password.
type digestAuth struct{ user, password string }

func (a *digestAuth) String() string   { return "digest:" + a.user + ":" + redacted }
func (a *digestAuth) GoString() string { return a.String() }

// Format prints String for every verb.
func (a *digestAuth) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, a.String()) }

// LogValue is String.
func (a *digestAuth) LogValue() slog.Value { return slog.StringValue(a.String()) }

const redacted = "[REDACTED]"

// LogValue describes the options for a log line with nothing secret in
// it: no password, and digest ACL ids without their hash.
func (o options) LogValue() slog.Value {
	attrs := []slog.Attr{
		slog.Duration("session_timeout", o.timeout),
		slog.String("loss_policy", o.policy.String()),
		slog.Int("max_data", o.maxData),
		slog.Bool("dialer", o.dialer != nil),
		slog.Bool("tls", o.tls != nil),
	}
	if o.tls != nil && o.tls.ServerName != "" {
		attrs = append(attrs, slog.String("tls_server_name", o.tls.ServerName))
	}
	if len(o.auth) > 0 {
		auth := make([]string, len(o.auth))
		for i, a := range o.auth {
			auth[i] = a.String()
		}
		attrs = append(attrs, slog.String("auth", strings.Join(auth, ",")))
	}
	attrs = append(attrs, slog.String("acl", formatACL(o.acl)), slog.Bool("acl_provider", o.aclProv != nil))
	if o.allowOpenParents {
		attrs = append(attrs, slog.Bool("allow_open_parents", true))
	}
	if o.leaseMarginSet {
		attrs = append(attrs, slog.Duration("lease_margin", o.leaseMargin))
	}
	return slog.GroupValue(attrs...)
}

// GoString is String: %#v shows no secret either.
func (o options) GoString() string { return o.String() }

// String is LogValue on one line.
func (o options) String() string {
	var b strings.Builder
	for i, a := range o.LogValue().Group() {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s=%s", a.Key, a.Value)
	}
	return b.String()
}

// formatACL writes acl as scheme:id:perms entries, digest ids without
// their hash (user:[REDACTED]). Pure.
func formatACL(acl []zk.ACL) string {
	out := make([]string, len(acl))
	for i, a := range acl {
		id := a.ID
		if a.Scheme == "digest" {
			user, _, _ := strings.Cut(id, ":")
			id = user + ":" + redacted
		}
		out[i] = a.Scheme + ":" + id + ":" + formatPerms(a.Perms)
	}
	return strings.Join(out, ",")
}

// formatPerms writes perms as ZooKeeper's shell does: cdrwa. Pure.
func formatPerms(p int32) string {
	var b []byte
	for _, f := range []struct {
		bit int32
		c   byte
	}{{zk.PermCreate, 'c'}, {zk.PermDelete, 'd'}, {zk.PermRead, 'r'}, {zk.PermWrite, 'w'}, {zk.PermAdmin, 'a'}} {
		if p&f.bit != 0 {
			b = append(b, f.c)
		}
	}
	return string(b)
}

// String describes the Session on one line, as LogValue does.
func (s *Session) String() string {
	if s == nil {
		return "<nil session>"
	}
	s.mu.Lock()
	state, id := s.state, s.id
	s.mu.Unlock()
	return fmt.Sprintf("recipes.Session{state=%s session=0x%x %s}", state, id, s.opts)
}

// GoString is String: %#v shows no secret either.
func (s *Session) GoString() string { return s.String() }

// LogValue describes the Session for a log line: its state, session id and
// options, with nothing secret (see WithDigestAuth): logging a Session, or
// printing it with fmt, never shows a password nor a digest ACL's hash.
func (s *Session) LogValue() slog.Value {
	if s == nil {
		return slog.StringValue("<nil session>")
	}
	s.mu.Lock()
	state, id := s.state, s.id
	s.mu.Unlock()
	return slog.GroupValue(
		slog.String("state", state.String()),
		slog.String("session", fmt.Sprintf("0x%x", id)),
		slog.Any("options", s.opts),
	)
}

// addAuth adds the digest credentials to the connection (1 setAuth each),
// once the session is usable; go-zookeeper then stores them and sends them
// again on every new connection. A setAuth lost with its connection is
// sent again (the server keeps credentials per connection, and go-zookeeper
// stores only those the server accepted), as is one answered for an
// expired session (the next session needs them as much). It fails with ctx's error, or
// with ErrAuthFailed and the server's answer.
func (s *Session) addAuth(ctx context.Context) error {
	for _, a := range s.opts.auth {
		for {
			if _, err := s.waitUsable(ctx); err != nil {
				return err
			}
			done := make(chan error, 1)
			go func() { done <- s.conn.AddAuth("digest", []byte(a.user+":"+a.password)) }()
			var err error
			select {
			case err = <-done:
			case <-ctx.Done():
				// Connect closes the connection, which ends the request.
				return ContextError(ctx)
			}
			if err == nil {
				break
			}
			if !isConnErr(err) {
				return fmt.Errorf("%w: user %q: %w", ErrAuthFailed, a.user, err)
			}
			// Not retryPause: a request refused for missing authentication
			// before the credentials went out must not end their sending.
			if !pause(ctx, s.changes()) {
				return ContextError(ctx)
			}
		}
	}
	return nil
}

// tlsDialer wraps base (net.DialTimeout when nil) with a TLS client using
// cfg; see WithTLS.
func tlsDialer(base func(network, address string, timeout time.Duration) (net.Conn, error), cfg *tls.Config) func(network, address string, timeout time.Duration) (net.Conn, error) {
	if base == nil {
		base = net.DialTimeout
	}
	return func(network, address string, timeout time.Duration) (net.Conn, error) {
		raw, err := base(network, address, timeout)
		if err != nil {
			return nil, err
		}
		c := cfg
		if c.ServerName == "" {
			host, _, err := net.SplitHostPort(address)
			if err != nil {
				host = address
			}
			c = c.Clone()
			c.ServerName = host
		}
		tc := tls.Client(raw, c)
		ctx := context.Background()
		if timeout > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, timeout)
			defer cancel()
		}
		if err := tc.HandshakeContext(ctx); err != nil {
			_ = raw.Close()
			return nil, fmt.Errorf("recipes: tls handshake with %s: %w", address, err)
		}
		return tc, nil
	}
}

// nameProvider is go-zookeeper's HostProvider for a Session with WithTLS:
// it hands out the server entries as written (go-zookeeper's
// DNSHostProvider resolves them to IP addresses at Init), so that the dial
// checks the certificate against the name. Same rotation as
// DNSHostProvider; zk.Connect shuffles the entries before Init.
type nameProvider struct {
	mu         sync.Mutex
	servers    []string
	curr, last int
}

func (p *nameProvider) Init(servers []string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(servers) == 0 {
		return fmt.Errorf("%w: no servers", ErrBadArgument)
	}
	p.servers = append([]string(nil), servers...)
	p.curr, p.last = -1, -1
	return nil
}

func (p *nameProvider) Len() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.servers)
}

// Next returns the next entry; retryStart reports a whole round without a
// connection.
func (p *nameProvider) Next() (server string, retryStart bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.curr = (p.curr + 1) % len(p.servers)
	retryStart = p.curr == p.last
	if p.last == -1 {
		p.last = 0
	}
	return p.servers[p.curr], retryStart
}

func (p *nameProvider) Connected() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.last = p.curr
}
