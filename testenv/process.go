package testenv

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
)

const processDirPrefix = "zkrecipes-testenv-"

// processBackend runs each server as a local JVM on loopback ports. Quorum
// and election traffic between servers goes through in-process proxies, one
// per direction and pair, so that Isolate can cut a server off: server i's
// zoo.cfg names itself by its real ports and every other server j by the
// proxy i->j.
//
// ZooKeeper's leader election may open a connection back to a peer's real
// election port (the address the peer announced), bypassing the proxies;
// Isolate stops every proxy to and from the server, which breaks its
// quorum links (so it loses or leaves the quorum) even if such an election
// connection survives.
type processBackend struct {
	e       *Ensemble
	java    string
	cp      string
	dir     string
	client  []int
	procs   []*serverProc
	peerPxy [][]*toxiproxy.Proxy // peerPxy[i] holds the proxies from and to server i
}

type serverProc struct {
	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
}

func newProcessBackend(e *Ensemble) (*processBackend, error) {
	java, err := exec.LookPath("java")
	if jh := os.Getenv("JAVA_HOME"); err != nil && jh != "" {
		java, err = filepath.Join(jh, "bin", "java"), nil
	}
	if err != nil {
		return nil, fmt.Errorf("%w: no java on PATH (apt-get install default-jre-headless)", ErrNoZooKeeper)
	}
	cp, err := classPath(e.cfg.ZooKeeperHome)
	if err != nil {
		return nil, err
	}
	// Debian's zookeeper.jar leaves netty-codec, which TLS needs, off its
	// class path.
	const codec = "/usr/share/java/netty-codec.jar"
	if _, err := os.Stat(codec); err == nil && e.cfg.TLS && e.cfg.ZooKeeperHome == "" {
		cp += ":" + codec
	}
	return &processBackend{e: e, java: java, cp: cp}, nil
}

// classPath finds ZooKeeper's jars: an Apache distribution's lib/ when home
// is set, else Debian's libzookeeper-java.
func classPath(home string) (string, error) {
	if home != "" {
		jars, _ := filepath.Glob(filepath.Join(home, "lib", "*.jar"))
		if len(jars) == 0 {
			return "", fmt.Errorf("%w: no jars in %s/lib", ErrNoZooKeeper, home)
		}
		return filepath.Join(home, "lib", "*") + ":" + filepath.Join(home, "conf"), nil
	}
	const deb = "/usr/share/java/zookeeper.jar"
	if _, err := os.Stat(deb); err != nil {
		return "", fmt.Errorf("%w: %s missing (apt-get install libzookeeper-java, or set %s)", ErrNoZooKeeper, deb, EnvZooKeeperHome)
	}
	cp := deb
	if _, err := os.Stat("/usr/share/java/slf4j-simple.jar"); err == nil {
		cp += ":/usr/share/java/slf4j-simple.jar"
	}
	return cp, nil
}

func (p *processBackend) start(ctx context.Context) error {
	n := p.e.cfg.Servers
	dir, err := os.MkdirTemp("", processDirPrefix+p.e.id+"-")
	if err != nil {
		return err
	}
	p.dir = dir
	if err := os.WriteFile(filepath.Join(dir, "owner"), []byte(ownerLabel()), 0o644); err != nil {
		return err
	}
	ports := func() ([]int, error) {
		out := make([]int, n)
		for i := range out {
			if out[i], err = freePort(); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	var quorum, election []int
	if p.client, err = ports(); err != nil {
		return err
	}
	if quorum, err = ports(); err != nil {
		return err
	}
	if election, err = ports(); err != nil {
		return err
	}
	p.peerPxy = make([][]*toxiproxy.Proxy, n)
	p.procs = make([]*serverProc, n)
	for i := range n {
		peers := make([]peer, n)
		for j := range n {
			peers[j] = peer{host: "127.0.0.1", quorum: quorum[j], election: election[j]}
			if j == i || n == 1 {
				continue
			}
			qp, err := p.peerProxy(i, j, "q", quorum[j])
			if err != nil {
				return err
			}
			ep, err := p.peerProxy(i, j, "e", election[j])
			if err != nil {
				return err
			}
			peers[j].quorum, peers[j].election = qp, ep
		}
		zc := zooCfg{tick: p.e.cfg.TickTime, maxSession: p.e.cfg.MaxSessionTimeout,
			dataDir: filepath.Join(p.sdir(i), "data"), clientAddr: "127.0.0.1",
			clientPort: p.client[i], secure: p.e.cfg.TLS, peers: peers, localSessions: p.e.cfg.LocalSessions}
		if err := os.MkdirAll(filepath.Join(p.sdir(i), "data"), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(p.sdir(i), "data", "myid"), []byte(strconv.Itoa(i+1)+"\n"), 0o644); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(p.sdir(i), "zoo.cfg"), []byte(zc.render()), 0o644); err != nil {
			return err
		}
		p.procs[i] = &serverProc{}
	}
	for i := range n {
		if err := p.startServer(ctx, i); err != nil {
			return err
		}
	}
	return nil
}

// peerProxy starts the proxy that server from uses to reach port of server
// to, and returns its port.
func (p *processBackend) peerProxy(from, to int, kind string, port int) (int, error) {
	px := toxiproxy.NewProxy(p.e.tp, fmt.Sprintf("peer-%s-%d-%d", kind, from+1, to+1), "127.0.0.1:0",
		net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err := px.Start(); err != nil {
		return 0, err
	}
	p.peerPxy[from] = append(p.peerPxy[from], px)
	p.peerPxy[to] = append(p.peerPxy[to], px)
	_, ps, _ := net.SplitHostPort(px.Listen)
	return strconv.Atoi(ps)
}

func (p *processBackend) sdir(i int) string { return filepath.Join(p.dir, fmt.Sprintf("zk%d", i+1)) }

func (p *processBackend) clientAddr(i int) string {
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(p.client[i]))
}

func (p *processBackend) startServer(ctx context.Context, i int) error {
	sp := p.procs[i]
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if sp.cmd != nil {
		return fmt.Errorf("already running")
	}
	logf, err := os.OpenFile(filepath.Join(p.sdir(i), "server.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	args := append([]string{"-Xmx" + p.e.cfg.JavaHeap, "-Xms32m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"}, p.e.cfg.serverProps()...)
	args = append(args, p.e.securityProps(p.e.tlsDir)...)
	args = append(args, "-cp", p.cp, "org.apache.zookeeper.server.quorum.QuorumPeerMain", filepath.Join(p.sdir(i), "zoo.cfg"))
	cmd := exec.Command(p.java, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	// Its own process group (so a terminal's ^C reaches it only through us),
	// and killed with this process if we die without cleaning up.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return err
	}
	_ = os.WriteFile(filepath.Join(p.sdir(i), "pid"), []byte(strconv.Itoa(cmd.Process.Pid)), 0o644)
	done := make(chan struct{})
	sp.cmd, sp.done = cmd, done
	go func() {
		_ = cmd.Wait()
		logf.Close()
		sp.mu.Lock()
		if sp.cmd == cmd {
			sp.cmd = nil
		}
		sp.mu.Unlock()
		close(done)
	}()
	return nil
}

// signal sends sig to server i and, with wait, waits for it to exit.
func (p *processBackend) signal(ctx context.Context, i int, sig syscall.Signal, wait time.Duration) error {
	sp := p.procs[i]
	sp.mu.Lock()
	cmd, done := sp.cmd, sp.done
	sp.mu.Unlock()
	if cmd == nil {
		return errNotRunning
	}
	if err := cmd.Process.Signal(sig); err != nil {
		return err
	}
	if wait == 0 {
		return nil
	}
	select {
	case <-done:
		return nil
	case <-time.After(wait):
		_ = cmd.Process.Kill()
		<-done
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

func (p *processBackend) kill(ctx context.Context, i int) error {
	return p.signal(ctx, i, syscall.SIGKILL, time.Minute)
}

func (p *processBackend) stop(ctx context.Context, i int) error {
	_ = p.signal(ctx, i, syscall.SIGCONT, 0) // a paused JVM cannot act on SIGTERM
	return p.signal(ctx, i, syscall.SIGTERM, 10*time.Second)
}

func (p *processBackend) pause(ctx context.Context, i int) error {
	return p.signal(ctx, i, syscall.SIGSTOP, 0)
}

func (p *processBackend) resume(ctx context.Context, i int) error {
	return p.signal(ctx, i, syscall.SIGCONT, 0)
}

func (p *processBackend) isolate(_ context.Context, i int, dir Direction) error {
	if dir == Both {
		for _, px := range p.peerPxy[i] {
			px.Stop()
		}
		return nil
	}
	// One way: a blackhole toxic on the stream that carries what server i
	// receives (Inbound) or sends (Outbound). A proxy named
	// peer-<kind>-<from>-<to> is dialled by from: its upstream carries
	// from's bytes to to.
	for _, px := range p.peerPxy[i] {
		var kind string
		var from, to int
		if _, err := fmt.Sscanf(strings.ReplaceAll(px.Name, "-", " "), "peer %s %d %d", &kind, &from, &to); err != nil {
			return fmt.Errorf("proxy %s: %w", px.Name, err)
		}
		stream := "upstream" // what from sends
		if (from-1 == i) == (dir == Inbound) {
			stream = "downstream"
		}
		body := fmt.Sprintf(`{"name":"isolate-%s","type":"timeout","stream":%q,"toxicity":1,"attributes":{"timeout":0}}`, dir, stream)
		if _, err := px.Toxics.AddToxicJson(strings.NewReader(body)); err != nil {
			return fmt.Errorf("proxy %s: %w", px.Name, err)
		}
	}
	return nil
}

func (p *processBackend) rejoin(_ context.Context, i int) error {
	for _, px := range p.peerPxy[i] {
		px.Toxics.ResetToxics(context.Background())
		if err := px.Start(); err != nil && err != toxiproxy.ErrProxyAlreadyStarted {
			return err
		}
	}
	return nil
}

func (p *processBackend) exited(_ context.Context, i int) bool {
	sp := p.procs[i]
	sp.mu.Lock()
	defer sp.mu.Unlock()
	return sp.cmd == nil
}

func (p *processBackend) logs(_ context.Context, i int) string {
	b, err := os.ReadFile(filepath.Join(p.sdir(i), "server.log"))
	if err != nil {
		return err.Error()
	}
	return tail(string(b), 40)
}

func (p *processBackend) close(ctx context.Context) error {
	for i, sp := range p.procs {
		if sp != nil {
			_ = p.signal(ctx, i, syscall.SIGKILL, time.Minute)
		}
	}
	for _, pxs := range p.peerPxy {
		for _, px := range pxs {
			px.Stop()
		}
	}
	if p.dir == "" || strings.TrimSpace(p.dir) == "/" {
		return nil
	}
	return os.RemoveAll(p.dir)
}
