package recipes

import (
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/go-zookeeper/zk"
)

// LossPolicy says when a holding steps down (its context is cancelled).
type LossPolicy int

const (
	// DefaultLossPolicy, the zero value, stands for the Session's policy
	// (WithLossPolicy; StepDownOnSuspend unless set): a Spec, or a
	// recipe's WithLossPolicy option, with it takes the Session's.
	DefaultLossPolicy LossPolicy = iota
	// StepDownOnSuspend (the Session's default) cancels a holding as soon as the
	// connection is lost (go-zookeeper declares it dead 2/3 of the session
	// timeout after the last frame it received), and in any case at the
	// session's lease deadline (see Session.LeaseDeadline). go-zookeeper's
	// disconnect alone is no safe bound: after a late reply or a watch
	// event just before a partition it can come as late as the server's
	// expiry; the lease is what bounds it.
	StepDownOnSuspend
	// StepDownOnLost keeps a holding through disconnects and cancels it
	// when the session is lost (expired, replaced or closed) or, at the
	// latest, at the session's lease deadline: a partitioned holder stops
	// on its own clock, the lease margin before the server can expire its
	// session, without waiting to reconnect.
	StepDownOnLost
)

func (p LossPolicy) String() string {
	switch p {
	case StepDownOnLost:
		return "step-down-on-lost"
	case DefaultLossPolicy:
		return "session-default"
	}
	return "step-down-on-suspend"
}

// DefaultSessionTimeout is the session timeout requested when none is set.
// It is the shortest round figure whose lease survives an ensemble with
// ZooKeeper's shipped timing (DefaultTickTime, DefaultSyncLimit): there the
// lease must allow for a server cut off from its leader answering for up to
// 11.3 s (S + Q + R, see Session.LeaseDeadline), which a 10 s timeout
// cannot.
const DefaultSessionTimeout = 20 * time.Second

// DefaultTickTime and DefaultSyncLimit are the ensemble timing the lease
// assumes unless WithEnsembleTiming says otherwise: those of the sample
// configuration ZooKeeper ships (conf/zoo_sample.cfg, and Debian's
// /etc/zookeeper/conf/zoo.cfg).
const (
	DefaultTickTime  = 2 * time.Second
	DefaultSyncLimit = 5
)

// DefaultQuorumRetransmit is the leader's retransmission allowance (R) the
// lease assumes unless WithQuorumRetransmit says otherwise: how long after
// the first ping the leader sends to a follower that no longer answers the
// leader's pings may still reach it. TCP stops sending new data on a
// connection when its first retransmission timeout fires, and Linux sets
// that timeout to srtt + max(4 x rttvar, TCP_RTO_MIN), TCP_RTO_MIN being
// 200ms (net/ipv4/tcp_input.c, tcp_rtt_estimator; include/net/tcp.h,
// __tcp_set_rto), rounded up to the timer's granularity (a few ms). On a
// LAN the round trip is well under a millisecond and its variation is
// far below 50ms, so the timeout is 200 to 210ms; 300ms leaves 90ms for a
// loaded network or host.
const DefaultQuorumRetransmit = 300 * time.Millisecond

// Option configures Connect.
type Option func(*options)

type options struct {
	timeout time.Duration
	logger  *slog.Logger
	dialer  func(network, address string, timeout time.Duration) (net.Conn, error)
	acl     []zk.ACL
	aclSet  bool // acl came from WithACL
	aclProv ACLProvider
	tls     *tls.Config   // a clone of WithTLS's config
	auth    []*digestAuth // pointers: fmt never prints what they point to
	policy  LossPolicy
	maxData int

	observer         Observer // observe.go; nil: none
	allowOpenParents bool     // WithAllowOpenParents (squat.go)

	// err is the first invalid option, reported by Connect.
	err error

	leaseMargin    time.Duration
	leaseMarginSet bool

	tick       time.Duration // the ensemble's tickTime (WithEnsembleTiming)
	syncLimit  int           // the ensemble's syncLimit; 0: a standalone server
	retransmit time.Duration // the leader's retransmission allowance (WithQuorumRetransmit)
}

func defaultOptions() options {
	return options{
		timeout: DefaultSessionTimeout,
		policy:  StepDownOnSuspend,
		logger:  slog.Default(),
		acl:     zk.WorldACL(zk.PermAll),
		maxData: DefaultMaxData,

		tick:       DefaultTickTime,
		syncLimit:  DefaultSyncLimit,
		retransmit: DefaultQuorumRetransmit,
	}
}

// WithSessionTimeout requests a session timeout (the server clamps it to its
// min/max; values <= 0 keep the default, DefaultSessionTimeout). Holdings
// need a timeout long enough for the lease (see Session.LeaseDeadline and
// LeaseBudget): on an ensemble, more than syncLimit x tickTime plus half a
// tick plus the retransmission allowance (WithQuorumRetransmit) plus the
// margin, with room for the Session's own pings.
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
// With WithTLS, it opens the TCP connection that TLS then runs over (see
// WithTLS for the order of the layers).
func WithDialer(d func(network, address string, timeout time.Duration) (net.Conn, error)) Option {
	return func(o *options) { o.dialer = d }
}

// WithACL sets the default ACL: that of every node the recipes create,
// unless an ACLProvider (WithACLProvider) answers for its path. An empty
// or nil acl keeps the default, which is world:anyone with all
// permissions, or, on a Session with WithDigestAuth, DefaultAuthACL
// (creator all, anyone read). The slice is copied.
func WithACL(acl []zk.ACL) Option {
	acl = append([]zk.ACL(nil), acl...)
	return func(o *options) {
		if len(acl) > 0 {
			o.acl, o.aclSet = acl, true
		}
	}
}

// WithLossPolicy sets the session's default loss policy for holdings
// (StepDownOnSuspend unless set; DefaultLossPolicy keeps it); a Spec's
// Policy or a recipe option can override it per holding.
func WithLossPolicy(p LossPolicy) Option {
	return func(o *options) {
		if p != DefaultLossPolicy {
			o.policy = p
		}
	}
}

// WithMaxData sets the server's request limit the session assumes (its
// jute.maxbuffer; DefaultMaxData by default; n <= 0 keeps it): no write
// whose whole encoding (RequestSize, MultiSize) is larger is sent. Match a
// server configured with another jute.maxbuffer. ValidatePath's MaxPathLen
// does not grow with it.
func WithMaxData(n int) Option {
	return func(o *options) {
		if n > 0 {
			o.maxData = n
		}
	}
}

// WithLeaseMargin sets how long before the earliest moment the server can
// expire the session every holding ends (see Session.LeaseDeadline).
// Negative values keep the default, DefaultLeaseMargin of the negotiated
// timeout. A margin of the whole timeout or more ends every holding as soon
// as it is acquired.
func WithLeaseMargin(d time.Duration) Option {
	return func(o *options) {
		if d >= 0 {
			o.leaseMargin, o.leaseMarginSet = d, true
		}
	}
}

// WithEnsembleTiming tells the Session the tickTime and syncLimit of the
// ensemble it connects to (zoo.cfg's tickTime and syncLimit), which the
// lease needs (see Session.LeaseDeadline): a server cut off from its leader
// goes on answering its clients for up to syncLimit x tickTime, while the
// leader, which alone expires sessions, hears of our requests only through
// that server. The default is ZooKeeper's shipped timing, DefaultTickTime
// and DefaultSyncLimit. A syncLimit of 0 declares a standalone server,
// which expires its sessions itself. A tickTime of 0 or less, or a
// negative syncLimit, makes Connect fail with ErrBadArgument. Telling the
// Session less than the ensemble's real timing voids the lease's guarantee.
func WithEnsembleTiming(tickTime time.Duration, syncLimit int) Option {
	return func(o *options) {
		if tickTime <= 0 || syncLimit < 0 {
			o.fail(fmt.Errorf("%w: ensemble timing: tickTime %v, syncLimit %d", ErrBadArgument, tickTime, syncLimit))
			return
		}
		o.tick, o.syncLimit = tickTime, syncLimit
	}
}

// WithQuorumRetransmit tells the Session how long the ensemble's leader
// may go on reaching a follower with its pings after the follower's own
// traffic to the leader was cut (R; DefaultQuorumRetransmit by default):
// the leader's TCP retransmission timeout toward its followers, which the
// lease needs (see Session.LeaseDeadline). A follower whose traffic to the
// leader alone is cut goes on hearing the leader, and so answering its
// clients, until that timeout stops the leader's new data, while the
// leader no longer hears of our requests. Raise it for a network whose
// round trips vary by tens of milliseconds, or whose servers set a larger
// minimum retransmission timeout (ip route's rto_min,
// net.ipv4.tcp_rto_min_us). It is ignored on a standalone server
// (WithEnsembleTiming with syncLimit 0). A negative d makes Connect fail
// with ErrBadArgument. Telling the Session less than the leader's real
// retransmission timeout voids the lease's guarantee.
func WithQuorumRetransmit(d time.Duration) Option {
	return func(o *options) {
		if d < 0 {
			o.fail(fmt.Errorf("%w: quorum retransmission allowance %v", ErrBadArgument, d))
			return
		}
		o.retransmit = d
	}
}
