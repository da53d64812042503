package inspect

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// Usage is the command's help text (printed by -h, help, and after a
// usage error).
const Usage = `usage: zkrecipes COMMAND PATH [NODE] [flags]     (flags may also come first)

Commands:
  show PATH           recognise the recipe at PATH and show it once
  watch PATH          show it again whenever it changes (and every -interval), until Ctrl-C
  revoke PATH [NODE]  ask the holders of the lock or rwlock at PATH to release: Curator's
                      revocation protocol, "__REVOKE__" written over the node's data
                      (lock.Revoke). NODE (a child name, the short name show prints, or
                      a path) picks one contender; one that does not hold is refused
                      unless -force, since the marker replaces its data (its identity)
  version             print the version (also -version)
  help                print this help (also -h)

The servers come from -servers or $ZKRECIPES_SERVERS; each connection flag can be set
in the environment as ZKRECIPES_<FLAG> (-tls-ca as $ZKRECIPES_TLS_CA); a flag given on
the command line wins.

Recognised: locks (Curator InterProcessMutex and LeaderSelector, lock.Mutex, kazoo Lock and
Election), read/write locks (Curator, kazoo), Curator LeaderLatch elections (leader.Election),
semaphores (Curator InterProcessSemaphoreV2 / lock.Semaphore, kazoo), double barriers (Curator,
kazoo), queues ("qn-" items: ZooKeeper's recipe, Curator, queue.Queue; kazoo "entry-" items;
claims under "taken"), twophase roots, ZooKeeper's own WriteLock ("x-<session>-<seq>") and
LeaderElectionSupport ("n_<seq>").

Owners: each ephemeral node's owner session is "connected" when a server lists it ("cons"),
"disconnected" when every member of the ensemble (learned from /zookeeper/config or "conf",
whichever servers -servers names) was asked twice and none lists it, else "unknown".

Exit status: 0 done; 1 failed (the path does not exist, no server answered, a refusal);
2 bad usage.

Flags:
`

// envFlags are the flags that ZKRECIPES_<FLAG> can set (the connection's,
// as etcdctl's ETCDCTL_<FLAG>).
var envFlags = []string{"servers", "timeout", "digest", "tls-ca", "tls-cert", "tls-key", "tls-server-name"}

// envName is the environment variable for flag name.
func envName(flag string) string {
	return "ZKRECIPES_" + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
}

// errVersion asks Main to print the version.
var errVersion = errors.New("version")

// version is the command's version when the build sets it
// (-ldflags "-X github.com/zkrecipes/zkrecipes/cmd/zkrecipes/inspect.version=v1.2.3");
// otherwise the module's version from the build information ("(devel)"
// in a checkout).
var version = ""

// Version returns the command's version text: its version, the commit it
// was built from when known, and the versions of go-zookeeper and Go.
func Version() string {
	v := version
	bi, ok := debug.ReadBuildInfo()
	if v == "" && ok {
		v = bi.Main.Version
	}
	if v == "" {
		v = "(devel)"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "zkrecipes %s\n", v)
	if !ok {
		return b.String()
	}
	var rev, at, modified string
	for _, kv := range bi.Settings {
		switch kv.Key {
		case "vcs.revision":
			rev = kv.Value
		case "vcs.time":
			at = kv.Value
		case "vcs.modified":
			if kv.Value == "true" {
				modified = ", modified"
			}
		}
	}
	if rev != "" {
		fmt.Fprintf(&b, "commit: %s (%s%s)\n", rev, at, modified)
	}
	for _, d := range bi.Deps {
		if d.Path == "github.com/go-zookeeper/zk" {
			fmt.Fprintf(&b, "go-zookeeper/zk: %s\n", d.Version)
		}
	}
	fmt.Fprintf(&b, "go: %s\n", bi.GoVersion)
	return b.String()
}

// Main runs the command with args (without the program name), writing to
// stdout and stderr, and returns the exit status: 0 done, 1 failed, 2 bad
// usage. Help (-h, help) and the version (-version, version) go to stdout.
// It stops when ctx is done (watch returns 0 then).
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c, fs, err := parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		printUsage(stdout, fs)
		return 0
	case errors.Is(err, errVersion):
		fmt.Fprint(stdout, Version())
		return 0
	case err != nil:
		fmt.Fprintln(stderr, "zkrecipes:", err)
		fmt.Fprintln(stderr, "zkrecipes: run 'zkrecipes -h' for help")
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

func printUsage(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprint(w, Usage)
	fs.SetOutput(w)
	fs.PrintDefaults()
}

// authHint says what an operator should do about a refusal for missing
// or insufficient credentials (err wraps zk.ErrNoAuth, or is
// go-zookeeper's report of error code -124 from a server that enforces
// authentication), "" for any other err.
func (c *cli) authHint(err error) string {
	if !errors.Is(recipes.Answer(err), zk.ErrNoAuth) {
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
	output   string // "text", "wide" or "json"
	max      int
	cons     bool
	interval time.Duration
	count    int
	clear    bool
	force    bool
	verb     string
	path     string
	node     string
}

// json reports whether the output is JSON.
func (c *cli) json() bool { return c.output == "json" }

// parse parses args: flags may come before, between and after the
// command's words (a "--" ends the flags). It returns the flag set for
// the help text; flag.ErrHelp for -h or help, errVersion for -version or
// version.
func parse(args []string) (*cli, *flag.FlagSet, error) {
	fs := flag.NewFlagSet("zkrecipes", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	var c cli
	servers := fs.String("servers", "", "ZooKeeper servers, comma-separated host:port (or $ZKRECIPES_SERVERS)")
	fs.DurationVar(&c.timeout, "timeout", 10*time.Second, "session timeout, and the bound on connecting")
	fs.StringVar(&c.digest, "digest", "", "authenticate as user:password (digest scheme)")
	ca := fs.String("tls-ca", "", "PEM file of the CA that signed the servers' certificates: connect over TLS")
	cert := fs.String("tls-cert", "", "PEM client certificate for TLS (with -tls-key)")
	key := fs.String("tls-key", "", "PEM private key of -tls-cert")
	serverName := fs.String("tls-server-name", "", "name to verify in the servers' certificates (default: the host of each address)")
	fs.StringVar(&c.output, "o", "text", "output: text (short node names), wide (full names and more data) or json")
	asJSON := fs.Bool("json", false, "print JSON (one document per view): -o json")
	wide := fs.Bool("wide", false, "full node names and paths, more of each node's data: -o wide")
	fs.IntVar(&c.max, "max", 100, "read at most this many nodes per list")
	fs.BoolVar(&c.cons, "cons", true, "ask the ensemble's servers for \"cons\" to tell connected owners from disconnected ones")
	fs.DurationVar(&c.interval, "interval", 2*time.Second, "watch: redraw at least this often (ages move)")
	fs.IntVar(&c.count, "count", 0, "watch: stop after this many views (0: until interrupted)")
	fs.BoolVar(&c.clear, "clear", true, "watch: clear the terminal before each text view")
	fs.BoolVar(&c.force, "force", false, "revoke: revoke NODE even though it does not hold")
	showVersion := fs.Bool("version", false, "print the version and exit")

	var words []string
	for rest := args; ; {
		if err := fs.Parse(rest); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, fs, err
			}
			return nil, fs, fmt.Errorf("%w: %w", ErrUsage, err)
		}
		left := fs.Args()
		if len(left) == 0 {
			break
		}
		if consumed := rest[:len(rest)-len(left)]; len(consumed) > 0 && consumed[len(consumed)-1] == "--" {
			words = append(words, left...)
			break
		}
		words, rest = append(words, left[0]), left[1:]
	}
	if *showVersion || (len(words) > 0 && words[0] == "version") {
		return nil, fs, errVersion
	}
	if len(words) > 0 && words[0] == "help" {
		return nil, fs, flag.ErrHelp
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	for _, name := range envFlags {
		v := os.Getenv(envName(name))
		if set[name] || v == "" {
			continue
		}
		if err := fs.Set(name, v); err != nil {
			return nil, fs, fmt.Errorf("%w: $%s: %w", ErrUsage, envName(name), err)
		}
	}
	if len(words) == 0 {
		return nil, fs, fmt.Errorf("%w: want a command: show PATH, watch PATH, revoke PATH [NODE]", ErrUsage)
	}
	c.verb = words[0]
	switch {
	case c.verb != "show" && c.verb != "watch" && c.verb != "revoke":
		return nil, fs, fmt.Errorf("%w: unknown command %q (show, watch, revoke, version, help)", ErrUsage, c.verb)
	case len(words) < 2:
		return nil, fs, fmt.Errorf("%w: %s needs a PATH", ErrUsage, c.verb)
	case c.verb == "revoke" && len(words) > 3, c.verb != "revoke" && len(words) > 2:
		return nil, fs, fmt.Errorf("%w: %s with %d arguments (show PATH, watch PATH, revoke PATH [NODE])", ErrUsage, c.verb, len(words)-1)
	}
	c.path = words[1]
	if len(words) == 3 {
		c.node = words[2]
	}
	for _, s := range strings.Split(*servers, ",") {
		if s = strings.TrimSpace(s); s != "" {
			c.servers = append(c.servers, s)
		}
	}
	switch {
	case len(c.servers) == 0:
		return nil, fs, fmt.Errorf("%w: no servers: give -servers host:port[,host:port...] or set $ZKRECIPES_SERVERS", ErrUsage)
	case c.max < 1 || c.interval <= 0 || c.count < 0 || c.timeout <= 0:
		return nil, fs, fmt.Errorf("%w: -max, -interval and -timeout must be positive, -count not negative", ErrUsage)
	case c.force && c.verb != "revoke":
		return nil, fs, fmt.Errorf("%w: -force is for revoke", ErrUsage)
	}
	switch {
	case c.output != "text" && c.output != "wide" && c.output != "json":
		return nil, fs, fmt.Errorf("%w: -o %q (want text, wide or json)", ErrUsage, c.output)
	case *asJSON && *wide, *asJSON && set["o"] && c.output != "json", *wide && set["o"] && c.output != "wide":
		return nil, fs, fmt.Errorf("%w: -json, -wide and -o disagree", ErrUsage)
	case *asJSON:
		c.output = "json"
	case *wide:
		c.output = "wide"
	}
	if err := recipes.ValidatePath(c.path); err != nil {
		return nil, fs, fmt.Errorf("%w: %w", ErrBadPath, err)
	}
	if *ca != "" || *cert != "" {
		cfg, err := tlsConfig(*ca, *cert, *key, *serverName)
		if err != nil {
			return nil, fs, err
		}
		c.tlsCfg = cfg
	}
	return &c, fs, nil
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

// connect opens the command's session. When it fails it names the
// servers and what went wrong; when every server refused the TCP
// connection twice it gives up at once instead of waiting for -timeout.
func (c *cli) connect(ctx context.Context) (*recipes.Session, error) {
	cctx, cancel := context.WithTimeoutCause(ctx, c.timeout, errNoSession)
	defer cancel()
	dctx, dcancel := context.WithCancelCause(cctx)
	defer dcancel(nil)
	notes := &connectNotes{tries: map[string]int{}, errs: map[string]error{}, cancel: dcancel}
	opts := []recipes.Option{recipes.WithSessionTimeout(c.timeout), recipes.WithDialer(notes.dial),
		recipes.WithLogger(slog.New(notes))}
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
	// When the connect is given up, close what it dialed: go-zookeeper
	// would otherwise wait for a silent server's handshake answer (ten
	// receive timeouts) before the failed Session is closed.
	stop := context.AfterFunc(dctx, notes.abort)
	s, err := recipes.Connect(dctx, c.servers, opts...)
	if !stop() && err == nil {
		// Given up just as it succeeded: its connection was closed.
		s.Close()
		err = context.Cause(dctx)
	}
	notes.connected()
	if err == nil {
		return s, nil
	}
	if ctx.Err() != nil {
		return nil, fmt.Errorf("connect: %w", ctx.Err())
	}
	servers := strings.Join(c.servers, ",")
	switch cause := context.Cause(dctx); {
	case errors.Is(cause, errUnreachable):
		return nil, fmt.Errorf("%w to %s: %s", ErrConnect, servers, notes.dialErrors())
	case errors.Is(cause, errNoSession):
		return nil, fmt.Errorf("%w to %s: no session within %v (-timeout): %s", ErrConnect, servers, c.timeout, notes.why())
	default:
		return nil, fmt.Errorf("%w to %s: %w", ErrConnect, servers, err)
	}
}

var (
	// errUnreachable: every server refused the TCP connection, twice.
	errUnreachable = errors.New("no server accepted a connection")
	// errNoSession: -timeout passed without a session.
	errNoSession = errors.New("no session within -timeout")
	// errConnectOver: a dial after the connect was given up.
	errConnectOver = errors.New("connect given up")
)

// connectNotes records the Session's dials and go-zookeeper's complaints,
// to say why a connect failed. It is the Session's dialer and the
// handler of its logger: it keeps go-zookeeper's last complaint and prints
// nothing (the command reports its errors itself, and the Session's
// warnings are about holdings, which the command never keeps).
type connectNotes struct {
	mu      sync.Mutex
	tries   map[string]int
	errs    map[string]error
	order   []string
	ok      bool   // some TCP connection was accepted
	last    string // go-zookeeper's last complaint
	cancel  context.CancelCauseFunc
	conns   []net.Conn // dialed while connecting
	aborted bool       // the connect was given up
	done    bool       // the connect phase is over
}

func (n *connectNotes) dial(network, address string, timeout time.Duration) (net.Conn, error) {
	n.mu.Lock()
	aborted := n.aborted
	n.mu.Unlock()
	if aborted {
		return nil, errConnectOver
	}
	conn, err := net.DialTimeout(network, address, timeout)
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.done {
		return conn, err // the Session's own reconnects
	}
	if _, seen := n.tries[address]; !seen {
		n.order = append(n.order, address)
	}
	n.tries[address]++
	if err == nil {
		n.ok = true
		if n.aborted {
			conn.Close()
			return nil, errConnectOver
		}
		n.conns = append(n.conns, conn)
		return conn, nil
	}
	n.errs[address] = err
	if !n.ok {
		// go-zookeeper tries the servers in turn: once each was tried
		// twice, all of them were, and none answered.
		all := true
		for _, t := range n.tries {
			all = all && t >= 2
		}
		if all {
			n.cancel(errUnreachable)
		}
	}
	return nil, err
}

// abort closes the connections dialed so far and refuses new dials.
func (n *connectNotes) abort() {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.aborted = true
	for _, c := range n.conns {
		_ = c.Close()
	}
	n.conns = nil
}

// connected ends the connect phase: later dials are the Session's.
func (n *connectNotes) connected() {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.done, n.conns = true, nil
}

// dialErrors lists each address dialed with its last error.
func (n *connectNotes) dialErrors() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	var parts []string
	for _, a := range n.order {
		if err := n.errs[a]; err != nil {
			parts = append(parts, err.Error())
		}
	}
	return strings.Join(parts, "; ")
}

// why says what is known of a connect that timed out.
func (n *connectNotes) why() string {
	n.mu.Lock()
	ok, last, dialed := n.ok, n.last, len(n.order)
	n.mu.Unlock()
	const hint = "a server without a quorum does this, and so does a TLS port spoken to without -tls-ca (or a plain one with it)"
	switch {
	case strings.HasPrefix(last, "authentication failed: "):
		// go-zookeeper's name for the connect handshake, not credentials.
		return fmt.Sprintf("the servers broke off the session handshake (%s): %s", strings.TrimPrefix(last, "authentication failed: "), hint)
	case last != "":
		return "the last attempt: " + last
	case !ok && dialed > 0:
		return n.dialErrors()
	case ok:
		return "the servers accepted TCP connections but sent no session: " + hint
	default:
		return "nothing was dialed"
	}
}

func (n *connectNotes) Enabled(context.Context, slog.Level) bool { return true }

func (n *connectNotes) Handle(_ context.Context, r slog.Record) error {
	if m := r.Message; strings.HasPrefix(m, "failed to connect") || strings.HasPrefix(m, "authentication failed") ||
		strings.HasPrefix(m, "recv loop terminated") {
		n.mu.Lock()
		if !n.aborted { // not the complaint about our own closing
			n.last = m
		}
		n.mu.Unlock()
	}
	return nil
}

func (n *connectNotes) WithAttrs([]slog.Attr) slog.Handler { return n }
func (n *connectNotes) WithGroup(string) slog.Handler      { return n }

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

// inspect runs Inspect on the command's path and learns its owners'
// liveness (unless -cons=false). A path that does not exist is an error
// wrapping ErrNoPath, except for watch, which waits for it.
func (c *cli) inspect(ctx context.Context, s *recipes.Session) (*Report, error) {
	rep, err := Inspect(ctx, s.Conn(), c.path, Options{MaxNodes: c.max})
	if err != nil {
		return nil, err
	}
	if rep.Kind == KindAbsent && c.verb != "watch" {
		return nil, fmt.Errorf("%w: %s", ErrNoPath, c.path)
	}
	if rep.Kind != KindAbsent {
		c.liveness(ctx, s.Conn(), rep)
	}
	return rep, nil
}

func (c *cli) write(out io.Writer, rep *Report) error {
	if c.json() {
		return WriteJSON(out, rep)
	}
	return WriteText(out, rep, TextOptions{Wide: c.output == "wide"})
}
