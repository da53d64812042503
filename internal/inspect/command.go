package inspect

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/internal/zkcall"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// Usage is the command's help text (printed by -h and on a usage error).
const Usage = `usage: zkrecipes -servers host:port[,host:port...] [flags] COMMAND PATH

Commands:
  show PATH           recognise the recipe at PATH and show it once
  watch PATH          show it again whenever it changes (and every -interval), until Ctrl-C
  revoke PATH [NODE]  ask the holder of the lock or rwlock at PATH (or the contender NODE,
                      a child name of PATH) to release: Curator's revocation protocol,
                      "__REVOKE__" written into the node's data (lock.Revoke)

Recognised: locks (Curator InterProcessMutex and LeaderSelector, lock.Mutex, kazoo Lock and
Election), read/write locks (Curator, kazoo), Curator LeaderLatch elections (leader.Election),
semaphores (Curator InterProcessSemaphoreV2 / lock.Semaphore, kazoo), double barriers (Curator,
kazoo), queues ("qn-" items: ZooKeeper's recipe, Curator, queue.Queue; kazoo "entry-" items;
claims under "taken"), twophase roots, ZooKeeper's own WriteLock ("x-<session>-<seq>") and
LeaderElectionSupport ("n_<seq>"). Ephemeral nodes whose owner session is connected to no
server are flagged (needs the "cons" four-letter word on every server listed).

Flags:
`

// Main runs the command with args (without the program name), writing to
// stdout and stderr, and returns the exit status: 0 done, 1 failed, 2 bad
// usage. It stops when ctx is done (watch returns 0 then).
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c, err := parse(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "zkrecipes:", err)
		return 2
	}
	if err := c.run(ctx, stdout); err != nil {
		fmt.Fprintln(stderr, "zkrecipes:", err)
		if errors.Is(err, ErrUsage) {
			return 2
		}
		if hint := c.authHint(err); hint != "" {
			fmt.Fprintln(stderr, "zkrecipes:", hint)
		}
		return 1
	}
	return 0
}

// authHint says what an operator should do about a refusal for missing
// or insufficient credentials (err wraps zk.ErrNoAuth, or is
// go-zookeeper's report of error code -124 from a server that enforces
// authentication), "" for any other err.
func (c *cli) authHint(err error) string {
	if !errors.Is(zkcall.Answer(err), zk.ErrNoAuth) {
		return ""
	}
	if c.digest == "" {
		return "the server refused the request: it requires authentication, or the path's ACL lets only some principals read it; give -digest user:password (or $ZKRECIPES_DIGEST)"
	}
	return "the server refused the request: the path's ACL does not grant this permission to the -digest user"
}

// cli is a parsed command line.
type cli struct {
	servers  []string
	timeout  time.Duration
	digest   string
	tlsCfg   *tls.Config
	json     bool
	max      int
	cons     bool
	interval time.Duration
	count    int
	clear    bool
	verb     string
	path     string
	node     string
}

func parse(args []string, stderr io.Writer) (*cli, error) {
	fs := flag.NewFlagSet("zkrecipes", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, Usage)
		fs.PrintDefaults()
	}
	var c cli
	servers := fs.String("servers", "", "ZooKeeper servers, comma-separated host:port (required)")
	fs.DurationVar(&c.timeout, "timeout", 10*time.Second, "session timeout, and the bound on connecting")
	fs.StringVar(&c.digest, "digest", "", "authenticate as user:password (digest scheme); also $ZKRECIPES_DIGEST")
	ca := fs.String("tls-ca", "", "PEM file of the CA that signed the servers' certificates: connect over TLS")
	cert := fs.String("tls-cert", "", "PEM client certificate for TLS (with -tls-key)")
	key := fs.String("tls-key", "", "PEM private key of -tls-cert")
	serverName := fs.String("tls-server-name", "", "name to verify in the servers' certificates (default: the host of each address)")
	fs.BoolVar(&c.json, "json", false, "print JSON (one document per view) instead of text")
	fs.IntVar(&c.max, "max", 100, "read at most this many nodes per list")
	fs.BoolVar(&c.cons, "cons", true, "ask every server for \"cons\" to flag owners connected to no server")
	fs.DurationVar(&c.interval, "interval", 2*time.Second, "watch: redraw at least this often (ages move)")
	fs.IntVar(&c.count, "count", 0, "watch: stop after this many views (0: until interrupted)")
	fs.BoolVar(&c.clear, "clear", true, "watch: clear the terminal before each text view")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if c.digest == "" {
		c.digest = os.Getenv("ZKRECIPES_DIGEST")
	}
	for _, s := range strings.Split(*servers, ",") {
		if s = strings.TrimSpace(s); s != "" {
			c.servers = append(c.servers, s)
		}
	}
	rest := fs.Args()
	switch {
	case len(c.servers) == 0:
		return nil, fmt.Errorf("%w: -servers is required", ErrUsage)
	case len(rest) < 2:
		return nil, fmt.Errorf("%w: want COMMAND PATH (show, watch, revoke)", ErrUsage)
	case c.max < 1 || c.interval <= 0 || c.count < 0 || c.timeout <= 0:
		return nil, fmt.Errorf("%w: -max, -interval and -timeout must be positive, -count not negative", ErrUsage)
	}
	c.verb, c.path = rest[0], rest[1]
	switch {
	case c.verb == "revoke" && len(rest) <= 3:
		if len(rest) == 3 {
			c.node = rest[2]
		}
	case (c.verb == "show" || c.verb == "watch") && len(rest) == 2:
	default:
		return nil, fmt.Errorf("%w: %q with %d arguments (show PATH, watch PATH, revoke PATH [NODE])", ErrUsage, c.verb, len(rest)-1)
	}
	if err := recipes.ValidatePath(c.path); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadPath, err)
	}
	if *ca != "" || *cert != "" {
		cfg, err := tlsConfig(*ca, *cert, *key, *serverName)
		if err != nil {
			return nil, err
		}
		c.tlsCfg = cfg
	}
	return &c, nil
}

// tlsConfig builds the client's TLS configuration from PEM files.
func tlsConfig(caFile, certFile, keyFile, serverName string) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: serverName}
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, fmt.Errorf("%w: -tls-ca: %w", ErrUsage, err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%w: -tls-ca: no certificate in %s", ErrUsage, caFile)
		}
		cfg.RootCAs = pool
	}
	if certFile != "" || keyFile != "" {
		pair, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return nil, fmt.Errorf("%w: -tls-cert/-tls-key: %w", ErrUsage, err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg, nil
}

// connect opens the command's session.
func (c *cli) connect(ctx context.Context) (*recipes.Session, error) {
	opts := []recipes.Option{recipes.WithSessionTimeout(c.timeout)}
	if c.digest != "" {
		user, password, ok := strings.Cut(c.digest, ":")
		if !ok {
			return nil, fmt.Errorf("%w: -digest wants user:password", ErrUsage)
		}
		opts = append(opts, recipes.WithDigestAuth(user, password))
	}
	if c.tlsCfg != nil {
		opts = append(opts, recipes.WithTLS(c.tlsCfg))
	}
	cctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	s, err := recipes.Connect(cctx, c.servers, opts...)
	if err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	return s, nil
}

func (c *cli) run(ctx context.Context, out io.Writer) error {
	s, err := c.connect(ctx)
	if err != nil {
		return err
	}
	defer s.Close()
	switch c.verb {
	case "show":
		rep, err := c.inspect(ctx, s)
		if err != nil {
			return err
		}
		return c.write(out, rep)
	case "watch":
		return c.watch(ctx, s, out)
	default:
		return c.revoke(ctx, s, out)
	}
}

// inspect runs Inspect on the command's path with the servers' sessions.
func (c *cli) inspect(ctx context.Context, s *recipes.Session) (*Report, error) {
	o := Options{MaxNodes: c.max, SessionsWhy: "-cons=false"}
	if c.cons {
		live, err := ConnectedSessions(ctx, c.servers, c.tlsCfg)
		if err != nil {
			o.SessionsWhy = err.Error()
		} else {
			o.Connected = live
		}
	}
	return Inspect(ctx, s.Conn(), c.path, o)
}

func (c *cli) write(out io.Writer, rep *Report) error {
	if c.json {
		return WriteJSON(out, rep)
	}
	return WriteText(out, rep)
}
