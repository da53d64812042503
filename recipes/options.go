package recipes

import (
	"log/slog"
	"net"
	"time"

	"github.com/go-zookeeper/zk"
)

// LossPolicy says when a holding steps down (its context is cancelled).
type LossPolicy int

const (
	// StepDownOnSuspend (the default) cancels a holding as soon as the
	// connection is lost. go-zookeeper declares the connection dead after
	// 2/3 of the session timeout without a reply and the server expires the
	// session no earlier than 1x, so the holder stops about 1/3 of the
	// timeout before anyone else can acquire.
	StepDownOnSuspend LossPolicy = iota
	// StepDownOnLost cancels a holding only when the session is lost
	// (expired, replaced or closed). It keeps holdings through short
	// disconnects, but is unsafe under partitions: the server may expire
	// the session and hand the resource to another client before this one
	// notices.
	StepDownOnLost
)

func (p LossPolicy) String() string {
	if p == StepDownOnLost {
		return "step-down-on-lost"
	}
	return "step-down-on-suspend"
}

// DefaultSessionTimeout is the session timeout requested when none is set.
const DefaultSessionTimeout = 10 * time.Second

// Option configures Connect.
type Option func(*options)

type options struct {
	timeout time.Duration
	logger  *slog.Logger
	dialer  func(network, address string, timeout time.Duration) (net.Conn, error)
	acl     []zk.ACL
	policy  LossPolicy
	maxData int
}

func defaultOptions() options {
	return options{
		timeout: DefaultSessionTimeout,
		logger:  slog.Default(),
		acl:     zk.WorldACL(zk.PermAll),
		maxData: DefaultMaxData,
	}
}

// WithSessionTimeout requests a session timeout (the server clamps it to its
// min/max; values <= 0 keep the default of 10s).
func WithSessionTimeout(d time.Duration) Option {
	return func(o *options) {
		if d > 0 {
			o.timeout = d
		}
	}
}

// WithLogger sets the logger for state changes, background work and
// go-zookeeper's own messages (logged at debug level). nil keeps
// slog.Default().
func WithLogger(l *slog.Logger) Option {
	return func(o *options) {
		if l != nil {
			o.logger = l
		}
	}
}

// WithDialer sets the function that opens TCP connections to servers, with
// go-zookeeper's zk.Dialer signature (for proxies and request counting).
func WithDialer(d func(network, address string, timeout time.Duration) (net.Conn, error)) Option {
	return func(o *options) { o.dialer = d }
}

// WithACL sets the ACL of every node the recipes create (default: world,
// all permissions).
func WithACL(acl []zk.ACL) Option {
	return func(o *options) {
		if len(acl) > 0 {
			o.acl = acl
		}
	}
}

// WithLossPolicy sets the session's default loss policy for holdings; a
// recipe option can override it per holding.
func WithLossPolicy(p LossPolicy) Option {
	return func(o *options) { o.policy = p }
}

// WithMaxData sets the largest node data sent, to match a server configured
// with a jute.maxbuffer other than the default.
func WithMaxData(n int) Option {
	return func(o *options) {
		if n > 0 {
			o.maxData = n
		}
	}
}
