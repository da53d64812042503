package chaos

import (
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/zkrecipes/zkrecipes/chaos/faults"
	"github.com/zkrecipes/zkrecipes/chaos/workloads"
)

// Config describes a run of the matrix. The zero value is a quick run with
// a random seed.
type Config struct {
	// Tier is quick (every fault once per scenario) or full. Default quick.
	Tier faults.Tier
	// Duration is the least time a scenario runs. Default 4 session
	// timeouts in the quick tier, 60 s in the full tier.
	Duration time.Duration
	// Seed seeds every schedule. Default: random (Run reports it).
	Seed uint64
	// SessionTimeout is what clients ask for. Default 3 s.
	SessionTimeout time.Duration
	// Clients is how many clients each workload runs. Default 4.
	Clients int
	// LivenessBound is how soon after a heal the workload must progress.
	// Default 2 session timeouts plus 5 s.
	LivenessBound time.Duration
	// CheckTimeout bounds each linearizability search. Default 60 s.
	CheckTimeout time.Duration
	// MinRate is the least rate of operations (progress events per
	// second) a scenario must reach before its first fault
	// (checkers.Throughput).
	// Default 5.
	MinRate float64
	// Secure runs every session with TLS and digest credentials: the
	// ensemble must have a TLS client port (testenv Config.TLS, or TLSCA
	// with Servers); started by zkchaos it also enforces digest
	// authentication (Config.EnforceAuth). The credentials are Digest's,
	// else a user "zkchaos" with a password made for the run. Every node
	// the workloads make then carries an ACL that grants all to that user
	// and read to anyone (recipes.DefaultAuthACL).
	Secure bool
	// Digest is "user:password": every session (the runner's own too)
	// authenticates with the digest scheme as that user, with or without
	// Secure. Empty: none, unless Secure.
	Digest string
	// Servers are the client addresses ("host:port") of an ensemble the
	// suite did not start (AttachServers): client faults run through
	// Toxiproxy proxies in front of them, server faults are not
	// applicable.
	Servers []string
	// TLSCA is a PEM file of the CA that signed the certificates of
	// Servers; set, every connection to them speaks TLS. Only with Servers
	// (an ensemble testenv starts has its own CA).
	TLSCA string
	// Root is the znode under which every scenario keeps its nodes (a
	// child per scenario). It must not exist or be empty when the run
	// starts; the run deletes everything under it at the end (and the
	// root itself when the run made it) and reports a final listing
	// (report.Summary.RootLeft). Default "/chaos", or, with Servers,
	// "/zkchaos-<8 random hex digits>".
	Root string
	// Out is the report directory; empty writes no report.
	Out string
	// Command is the command line, shown in the report.
	Command string
	// Replay is the command that replays a scenario of the run, less its
	// -seed and -scenarios flags, which the report adds (see
	// report.Summary.ReplayCommand); default: go run ./lab/cmd/zkchaos
	// with the flags that shape the schedules (DefaultReplay). Select is
	// the -scenarios filter the run was given, for the run's own replay.
	Replay string
	Select string
	// AllHistories keeps every scenario's history in the report, not only
	// those report.Summary.KeepsHistory names.
	AllHistories bool
	// Progress receives a line per scenario; default: discard.
	Progress io.Writer
	// Logger receives details; default: discard.
	Logger *slog.Logger
}

// WithDefaults returns c with every zero field set to its default.
func (c Config) WithDefaults() (Config, error) {
	if c.Tier == "" {
		c.Tier = faults.TierQuick
	}
	if c.Tier != faults.TierQuick && c.Tier != faults.TierFull {
		return c, fmt.Errorf("%w: tier %q (want quick or full)", ErrConfig, c.Tier)
	}
	if c.SessionTimeout == 0 {
		c.SessionTimeout = 3 * time.Second
	}
	if c.SessionTimeout < time.Second {
		return c, fmt.Errorf("%w: session timeout %v is below 1s", ErrConfig, c.SessionTimeout)
	}
	if c.Duration == 0 {
		c.Duration = 4 * c.SessionTimeout
		if c.Tier == faults.TierFull {
			c.Duration = time.Minute
		}
	}
	if c.Duration < 0 {
		return c, fmt.Errorf("%w: duration %v", ErrConfig, c.Duration)
	}
	if c.Seed == 0 {
		c.Seed = rand.Uint64()
	}
	if c.Clients == 0 {
		c.Clients = 4
	}
	if c.Clients < 1 {
		return c, fmt.Errorf("%w: %d clients", ErrConfig, c.Clients)
	}
	if c.LivenessBound == 0 {
		c.LivenessBound = 2*c.SessionTimeout + 5*time.Second
	}
	if c.MinRate == 0 {
		c.MinRate = 5
	}
	if c.MinRate < 0 {
		return c, fmt.Errorf("%w: minimum rate %v", ErrConfig, c.MinRate)
	}
	if c.CheckTimeout == 0 {
		c.CheckTimeout = time.Minute
	}
	if c.Root == "" {
		c.Root = "/chaos"
		if len(c.Servers) > 0 {
			c.Root = fmt.Sprintf("/zkchaos-%08x", rand.Uint32())
		}
	}
	if err := validRoot(c.Root); err != nil {
		return c, err
	}
	if c.Digest != "" {
		if user, _, ok := strings.Cut(c.Digest, ":"); !ok || user == "" {
			return c, fmt.Errorf("%w: digest credentials must be user:password", ErrConfig)
		}
	}
	if c.TLSCA != "" && len(c.Servers) == 0 {
		return c, fmt.Errorf("%w: a TLS CA file is for external servers; an ensemble the suite starts has its own CA", ErrConfig)
	}
	if c.Secure && len(c.Servers) > 0 && (c.TLSCA == "" || c.Digest == "") {
		return c, fmt.Errorf("%w: a secure run against external servers needs their TLS CA file and digest credentials", ErrConfig)
	}
	if c.Replay == "" {
		c.Replay = c.DefaultReplay()
	}
	if c.Progress == nil {
		c.Progress = io.Discard
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c, nil
}

// DefaultReplay is the replay command of a run that set none: zkchaos
// with the flags that shape its schedules and sessions (tier, duration,
// session timeout, clients) and those that say where and how it connects
// (-secure, -servers, -tls-ca, -digest with the password redacted).
func (c Config) DefaultReplay() string {
	args := []string{"go", "run", "./lab/cmd/zkchaos", "-tier", string(c.Tier), "-duration", c.Duration.String(),
		"-session-timeout", c.SessionTimeout.String(), "-clients", strconv.Itoa(c.Clients)}
	if c.Secure {
		args = append(args, "-secure")
	}
	if len(c.Servers) > 0 {
		args = append(args, "-servers", strings.Join(c.Servers, ","))
	}
	if c.TLSCA != "" {
		args = append(args, "-tls-ca", shellQuote(c.TLSCA))
	}
	if user, _, ok := strings.Cut(c.Digest, ":"); ok {
		args = append(args, "-digest", shellQuote(user+":[REDACTED]"))
	}
	return strings.Join(args, " ")
}

// validRoot reports whether root can hold a run's nodes: an absolute
// ZooKeeper path, not "/" itself nor under /zookeeper, without empty, "."
// or ".." components.
func validRoot(root string) error {
	bad := !strings.HasPrefix(root, "/") || root == "/" || strings.HasSuffix(root, "/") ||
		root == "/zookeeper" || strings.HasPrefix(root, "/zookeeper/")
	for _, part := range strings.Split(strings.TrimPrefix(root, "/"), "/") {
		if part == "" || part == "." || part == ".." {
			bad = true
		}
	}
	if bad {
		return fmt.Errorf("%w: root %q (want an absolute path below /, outside /zookeeper)", ErrConfig, root)
	}
	return nil
}

// credentials returns the digest user and password of the run: Digest's,
// else, for a secure run, "zkchaos" with a password made now, else none.
func (c Config) credentials() (user, password string) {
	if u, p, ok := strings.Cut(c.Digest, ":"); ok {
		return u, p
	}
	if c.Secure {
		return "zkchaos", fmt.Sprintf("%016x%016x", rand.Uint64(), rand.Uint64())
	}
	return "", ""
}

// checkConfig is what the workloads' checkers take of c.
func (c Config) checkConfig() workloads.CheckConfig {
	return workloads.CheckConfig{Clients: c.Clients, LivenessBound: c.LivenessBound, CheckTimeout: c.CheckTimeout}
}
