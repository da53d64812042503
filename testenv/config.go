package testenv

import (
	"fmt"
	"log/slog"
	"os"
	"time"
)

// Backend names how the servers of an ensemble are run.
type Backend string

const (
	// BackendAuto picks BackendContainers when a Docker engine answers and
	// BackendProcesses otherwise.
	BackendAuto Backend = ""
	// BackendContainers runs one container per server through testcontainers-go.
	BackendContainers Backend = "containers"
	// BackendProcesses runs one local JVM per server on loopback ports.
	BackendProcesses Backend = "processes"
)

// DefaultImage is the image the container backend uses when Config.Image,
// ZKRECIPES_IMAGE, Config.Version and ZKRECIPES_ZK_VERSION are all empty:
// ZooKeeper 3.8.0 (DefaultVersion). EnsureImage builds it when it is missing.
const DefaultImage = "zkrecipes/zookeeper:3.8-debian"

// Environment variables read by Config.withDefaults.
const (
	EnvBackend       = "ZKRECIPES_BACKEND"
	EnvImage         = "ZKRECIPES_IMAGE"
	EnvVersion       = "ZKRECIPES_ZK_VERSION"
	EnvZooKeeperHome = "ZOOKEEPER_HOME"
)

// Config describes an ensemble. The zero value is a 3-server ensemble with a
// 200 ms tick (DefaultTickTime) on the backend the machine supports.
type Config struct {
	// Servers is the number of ZooKeeper servers: 1 (standalone) to 5.
	// Default 3.
	Servers int
	// TickTime is ZooKeeper's tickTime. The server accepts session timeouts
	// from 2 ticks to MaxSessionTimeout, so the default of 200 ms allows the
	// 2-4 s timeouts that tests use. Default 200 ms.
	TickTime time.Duration
	// MaxSessionTimeout caps what clients may negotiate. Default 60 s.
	MaxSessionTimeout time.Duration
	// Backend is how servers run. Default: ZKRECIPES_BACKEND, else auto.
	Backend Backend
	// Version is the ZooKeeper release the servers must run, one of
	// Versions ("3.8.0", "3.9.3", "3.9.6"). Default: ZKRECIPES_ZK_VERSION,
	// else none asked: the image's (DefaultImage runs DefaultVersion). On
	// the containers backend it picks the image (unless Image names one);
	// on every backend Start checks what the servers report (srvr) and
	// fails with ErrVersion when it differs, so the processes backend
	// needs a matching local installation (ZooKeeperHome). The release
	// the servers run is Ensemble.ServerVersion either way.
	Version string
	// Image is the container image (containers backend). Default:
	// ZKRECIPES_IMAGE, else the image of Version, else DefaultImage; an
	// image of Versions is built when missing.
	Image string
	// ZooKeeperHome is a ZooKeeper installation for the processes backend: its
	// lib/*.jar and the zookeeper jar are put on the class path. Default:
	// ZOOKEEPER_HOME, else Debian's /usr/share/java.
	ZooKeeperHome string
	// JavaHeap is each server's maximum heap (-Xmx). Default "128m".
	JavaHeap string
	// NoExtendedTypes turns off the servers' extended node types (TTL
	// nodes), which testenv turns on by default
	// (zookeeper.extendedTypesEnabled): ZooKeeper's own default, for tests
	// of a server without them.
	NoExtendedTypes bool
	// ContainerCheckInterval is how often each server deletes empty
	// container nodes and expired TTL nodes
	// (znode.container.checkIntervalMs). Default: ZooKeeper's, 1 minute.
	ContainerCheckInterval time.Duration
	// LocalSessions turns on ZooKeeper's local sessions
	// (localSessionsEnabled and localSessionsUpgradingEnabled in zoo.cfg):
	// a server creates a new session by itself, with no transaction
	// through the leader, and only that server knows it until it creates
	// an ephemeral node, which makes it global. So a follower cut off from
	// its leader still grants new sessions until it leaves the quorum
	// (SyncLimit ticks), and serves them what it has, however far behind.
	// Link.ExpireSession and AwaitExpiry wait until the leader no longer
	// lists the session, which a follower's local session never is: they
	// return at once for one, and do not expire it. ZooKeeper's default is
	// off (global sessions only), as is testenv's.
	LocalSessions bool
	// TLS makes the client port TLS-only: each server listens with
	// ZooKeeper's Netty connection factory on secureClientPort (the port
	// numbers are those of the plain port without TLS) and opens no plain
	// client port, so a client that does not speak TLS gets no session.
	// Servers present a certificate for TLSServerName signed by a CA made
	// for this process, and ask clients for no certificate
	// (ssl.clientAuth=none), so a connection carries no x509 identity:
	// ACLs see only what the client authenticates with (digest). Go
	// clients use ClientTLS or Dialer, Java clients TLSFiles. Four-letter
	// words go over TLS too (Ensemble.FourLetter; the package-level
	// FourLetter gets no answer). Toxiproxy forwards the TLS bytes, so
	// links and their faults work (Cut and ExpireSession are tested);
	// CutAfterNextFrame, which cannot see ZooKeeper's frames, cuts after
	// the next TLS record, which carries one. Cost: the first TLS ensemble of a process
	// runs the JDK's keytool five times (1 to 2 s; ErrTLS without
	// keytool).
	TLS bool
	// EnforceAuth makes the servers refuse every request but auth from a
	// connection that has not authenticated with the digest scheme
	// (zookeeper.enforce.auth.enabled=true,
	// zookeeper.enforce.auth.schemes=digest): the connect request
	// succeeds, the first other request (a ping included) is answered
	// with error code -124 (SESSIONCLOSEDREQUIRESASLAUTH, which
	// go-zookeeper 1.0.4 reports as "unknown error: -124") and the
	// connection is dropped; the session survives and the client gets it
	// back on reconnecting, to be refused again. Nothing refused is
	// applied. It also adds a superuser
	// (zookeeper.DigestAuthenticationProvider.superDigest) whose
	// credentials SuperAuth returns, for the harness's own sessions. No
	// cost beyond the system properties.
	EnforceAuth bool
	// StartTimeout bounds Start after the image is ready: servers running and
	// a quorum formed. Default 3 minutes.
	StartTimeout time.Duration
	// Logger receives progress lines (image build, servers started, faults).
	// Default: discard.
	Logger *slog.Logger
}

func (c Config) withDefaults() (Config, error) {
	if c.Servers == 0 {
		c.Servers = 3
	}
	if c.Servers < 1 || c.Servers > 5 {
		return c, fmt.Errorf("%w: %d servers (want 1 to 5)", ErrConfig, c.Servers)
	}
	if c.TickTime == 0 {
		c.TickTime = DefaultTickTime
	}
	if c.TickTime < 10*time.Millisecond {
		return c, fmt.Errorf("%w: tickTime %v is below 10ms", ErrConfig, c.TickTime)
	}
	if c.MaxSessionTimeout == 0 {
		c.MaxSessionTimeout = 60 * time.Second
	}
	if c.MaxSessionTimeout < 2*c.TickTime {
		return c, fmt.Errorf("%w: max session timeout %v is below 2 ticks", ErrConfig, c.MaxSessionTimeout)
	}
	if c.Backend == BackendAuto {
		c.Backend = Backend(os.Getenv(EnvBackend))
	}
	switch c.Backend {
	case BackendAuto, BackendContainers, BackendProcesses:
	default:
		return c, fmt.Errorf("%w: unknown backend %q (want %q or %q)", ErrConfig, c.Backend, BackendContainers, BackendProcesses)
	}
	if c.Version == "" {
		c.Version = os.Getenv(EnvVersion)
	}
	if c.Image == "" {
		c.Image = os.Getenv(EnvImage)
	}
	if c.Image == "" && c.Version != "" {
		z, err := LookupVersion(c.Version)
		if err != nil {
			return c, err
		}
		c.Image = z.Image
	}
	if c.Image == "" {
		c.Image = DefaultImage
	}
	if c.ZooKeeperHome == "" {
		c.ZooKeeperHome = os.Getenv(EnvZooKeeperHome)
	}
	if c.ContainerCheckInterval < 0 {
		return c, fmt.Errorf("%w: container check interval %v", ErrConfig, c.ContainerCheckInterval)
	}
	if c.JavaHeap == "" {
		c.JavaHeap = "128m"
	}
	if c.StartTimeout == 0 {
		c.StartTimeout = 3 * time.Minute
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c, nil
}

// serverProps are the Java system properties every server gets beyond its
// heap: no admin server, dated log lines, and the node types and container
// checks the Config asks for.
func (c Config) serverProps() []string {
	props := []string{"-Dzookeeper.admin.enableServer=false", "-Dorg.slf4j.simpleLogger.showDateTime=true"}
	if !c.NoExtendedTypes {
		props = append(props, "-Dzookeeper.extendedTypesEnabled=true")
	}
	if c.ContainerCheckInterval > 0 {
		props = append(props, fmt.Sprintf("-Dznode.container.checkIntervalMs=%d", c.ContainerCheckInterval.Milliseconds()))
	}
	return props
}

// DefaultTickTime is the tickTime of an ensemble whose Config sets none.
const DefaultTickTime = 200 * time.Millisecond
