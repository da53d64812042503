package testutil

// The secured mode of the integration suite. With ZKRECIPES_SECURE=1 in
// the environment, every ensemble the harness starts (Shared, NewEnsemble)
// has a TLS-only client port and enforced digest authentication
// (testenv.Config.TLS and EnforceAuth), and every session the harness
// opens (Connect, ConnectWrapped, CountedSession, SessionOptions) dials
// over TLS and authenticates as User, so the recipes create their nodes
// with recipes.DefaultAuthACL (User all, anyone read).
//
// Invariants:
//   - Secure() is read from the environment once per process, so an
//     ensemble and the sessions of one binary agree on the mode.
//   - In secured mode, a connection a test wraps (ConnectWrapped, a
//     zkcount.Counter) is wrapped above TLS: the wrapper sees ZooKeeper's
//     frames in plaintext, as in the plain mode.
//   - Sessions of Connect go through recipes.WithTLS (the library's own
//     TLS layer); wrapped sessions do TLS in their dialer (testenv's
//     Dialer), since WithTLS would put TLS above any WithDialer.

import (
	"crypto/tls"
	"net"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/lab/internal/zkcount"
	"github.com/zkrecipes/zkrecipes/recipes"
	"github.com/zkrecipes/zkrecipes/testenv"
)

// SecureEnv is the environment variable that turns the secured mode on
// when set to "1".
const SecureEnv = "ZKRECIPES_SECURE"

// User and Password are the digest credentials of every session the
// harness opens in secured mode. Tests that need a second principal use
// other credentials (OtherUser).
const (
	User      = "zkrecipes-test"
	Password  = "zkrecipes-test-secret"
	OtherUser = "zkrecipes-other"
)

var secure = sync.OnceValue(func() bool { return os.Getenv(SecureEnv) == "1" })

// Secure reports whether the suite runs in secured mode.
func Secure() bool { return secure() }

// clientTLS is the TLS configuration of the last secured ensemble started
// by this process. testenv makes one CA per process, so it is good for
// every secured ensemble of the process.
var clientTLS struct {
	mu  sync.Mutex
	cfg *tls.Config
}

// SecureConfig returns cfg with TLS and EnforceAuth set in secured mode,
// cfg itself otherwise.
func SecureConfig(cfg testenv.Config) testenv.Config {
	if Secure() {
		cfg.TLS, cfg.EnforceAuth = true, true
	}
	return cfg
}

// noteEnsemble records e's client TLS configuration for the sessions the
// harness opens (nothing for a plain ensemble).
func noteEnsemble(e *testenv.Ensemble) {
	if cfg := e.ClientTLS(); cfg != nil {
		clientTLS.mu.Lock()
		clientTLS.cfg = cfg
		clientTLS.mu.Unlock()
	}
}

// UseClientTLS makes cfg the TLS configuration of the sessions the harness
// opens in secured mode, in a process that started no ensemble itself: a
// test's child process, given the ensemble's CA by its parent.
func UseClientTLS(cfg *tls.Config) {
	clientTLS.mu.Lock()
	clientTLS.cfg = cfg
	clientTLS.mu.Unlock()
}

func tlsConfig() *tls.Config {
	clientTLS.mu.Lock()
	defer clientTLS.mu.Unlock()
	return clientTLS.cfg.Clone() // nil when no secured ensemble started
}

// NewEnsemble is testenv.New with SecureConfig: an ensemble of the test
// alone, closed at its end.
func NewEnsemble(tb testing.TB, cfg testenv.Config) *testenv.Ensemble {
	tb.Helper()
	e := testenv.New(tb, SecureConfig(cfg))
	noteEnsemble(e)
	return e
}

// SessionOptions returns the options that make a session a secured one:
// in secured mode recipes.WithTLS (with the ensembles' CA) and
// recipes.WithDigestAuth(User, Password), nothing in plain mode. Before
// any secured ensemble started, WithTLS gets a nil configuration, which
// makes recipes.Connect fail with ErrBadArgument.
//
// Either way they begin with Timing.
func SessionOptions() []recipes.Option {
	if !Secure() {
		return []recipes.Option{Timing()}
	}
	return []recipes.Option{Timing(), recipes.WithTLS(tlsConfig()), recipes.WithDigestAuth(User, Password)}
}

// Timing is recipes.WithEnsembleTiming for the harness's ensembles
// (testenv's default tickTime and SyncLimit), which every session the
// harness opens carries: the lease must know how long a follower cut off
// from its leader goes on answering. On a single-server ensemble it only
// makes the lease more cautious than it needs to be.
func Timing() recipes.Option {
	return recipes.WithEnsembleTiming(testenv.DefaultTickTime, testenv.SyncLimit)
}

// WrappedOptions returns the options of a session whose connections pass
// through wrap, which sees ZooKeeper's frames in plaintext: in plain mode
// a dialer of TCP connections that wraps them; in secured mode a dialer
// of TLS connections (handshake done in the dial, within its timeout)
// that wraps them, and digest authentication as User.
func WrappedOptions(wrap func(net.Conn) net.Conn) []recipes.Option {
	base := func(network, address string, timeout time.Duration) (net.Conn, error) {
		return net.DialTimeout(network, address, timeout)
	}
	var opts []recipes.Option
	if Secure() {
		cfg := tlsConfig()
		base = func(network, address string, timeout time.Duration) (net.Conn, error) {
			if cfg == nil {
				return nil, errNoSecuredEnsemble
			}
			return (&tls.Dialer{NetDialer: &net.Dialer{Timeout: timeout}, Config: cfg}).Dial(network, address)
		}
		opts = append(opts, recipes.WithDigestAuth(User, Password))
	}
	dial := func(network, address string, timeout time.Duration) (net.Conn, error) {
		c, err := base(network, address, timeout)
		if err != nil {
			return nil, err
		}
		return wrap(c), nil
	}
	return append(opts, recipes.WithDialer(dial))
}

// ConnectAs is Connect for a second principal: the session authenticates
// as user with password instead of User (TLS as Connect in secured mode;
// in plain mode the digest credentials alone), so its nodes get
// DefaultAuthACL for user, and nodes of User's sessions refuse it every
// change. For tests of outsiders: with enforced authentication (secured
// mode), an outsider must still authenticate to be served at all.
func ConnectAs(tb testing.TB, addrs []string, user, password string, opts ...recipes.Option) *recipes.Session {
	tb.Helper()
	var base []recipes.Option
	if Secure() {
		base = append(base, recipes.WithTLS(tlsConfig()))
	}
	base = append(base, recipes.WithDigestAuth(user, password))
	return connect(tb, addrs, append(base, opts...))
}

// ACL is the ACL a test gives the nodes it creates with raw requests, as
// the recipes' own Sessions would: recipes.DefaultAuthACL (User all,
// anyone read) in secured mode, world:anyone all in plain mode. A parent
// a test makes world-open in secured mode would be refused by the
// recipes (recipes.ErrOpenParent), as it should be.
func ACL() []zk.ACL {
	if Secure() {
		return recipes.DefaultAuthACL()
	}
	return zk.WorldACL(zk.PermAll)
}

// FirstCreateUnder returns want with the requests an authenticated Session
// adds to its first create under a parent in secured mode: the recipes'
// open-parent check reads the parent's ACL once per parent and Session
// (recipes.ErrOpenParent), nothing in plain mode. parents counts the
// getACL requests that check sends for the measured operation: 1 for each
// existing parent it creates under for the first time in its Session, 2
// for a parent it must create first (read: no node; created with the
// Session's ACL; read again before the create under it). want is not
// changed.
func FirstCreateUnder(parents int, want map[zkcount.Op]int64) map[zkcount.Op]int64 {
	out := make(map[zkcount.Op]int64, len(want)+1)
	for op, n := range want {
		out[op] = n
	}
	if Secure() && parents > 0 {
		out[zkcount.OpGetACL] += int64(parents)
	}
	return out
}
