// Package peers runs zkrecipes' counterparts written against the real
// libraries — Apache Curator (Java) and kazoo (Python) — so that tests and
// benchmarks can put Go and foreign clients on the same ZooKeeper paths.
//
// Each peer is one process speaking a line protocol (see java/Peer.java and
// python/peer.py): it prints "READY <session id>", then runs one command per
// line. The Java programs are compiled together with javac against Debian's
// libcurator-recipes-java and libcurator-discovery-java once per machine
// and release (cached in the temporary directory by a hash of their
// sources); the Python ones run with Debian's /usr/bin/python3 and
// python3-kazoo.
//
// The libraries come in releases (Releases): Debian 12's (Curator 5.4,
// kazoo 2.8), installed on this machine, which Start and the other
// package-level functions use, and Debian testing's (Curator 5.7.1, kazoo
// 2.11), which run in a container of an image built from that suite
// (Release.EnsureImage).
package peers

import (
	"bufio"
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// sources holds every peer program: java/*.java (compiled together; each
// class with a main is a program) and python/*.py (each a program).
//
//go:embed java/*.java python/*.py
var sources embed.FS

// Kind names a peer library.
type Kind string

const (
	// Curator is Apache Curator (Debian's libcurator-recipes-java and
	// libcurator-discovery-java): 5.4 on this machine (Debian 12).
	Curator Kind = "curator"
	// Kazoo is kazoo (Debian's python3-kazoo): 2.8 on this machine
	// (Debian 12).
	Kazoo Kind = "kazoo"
)

// Errors of the package; match with errors.Is.
var (
	// ErrMissing reports that a peer's runtime or library is not installed.
	ErrMissing = errors.New("peers: runtime or library missing")
	// ErrPeer reports a command the peer answered with ERR.
	ErrPeer = errors.New("peers: peer reported an error")
	// ErrExited reports that the peer process is gone.
	ErrExited = errors.New("peers: peer exited")
)

const (
	curatorJar = "/usr/share/java/curator-recipes.jar" // its manifest names the rest
	// discoveryJar is curator-x-discovery (libcurator-discovery-java); its
	// manifest names Jackson.
	discoveryJar = "/usr/share/java/curator-x-discovery.jar"
	// zkQueueJar is ZooKeeper's own queue recipe (libzookeeper-java).
	zkQueueJar = "/usr/share/java/zookeeper-recipes-queue.jar"
	slf4jNop   = "/usr/share/java/slf4j-nop.jar"
	python     = "/usr/bin/python3"
	kazooDir   = "/usr/lib/python3/dist-packages/kazoo"
)

// Available returns nil when kind can run on this machine (of the release
// installed here, Debian 12's), else an error wrapping ErrMissing that says
// what to install.
func Available(kind Kind) error { return Debian12.Available(kind) }

// available is Available for the libraries installed on this machine.
func available(kind Kind) error {
	switch kind {
	case Curator:
		for _, tool := range []string{"java", "javac"} {
			if _, err := exec.LookPath(tool); err != nil {
				return fmt.Errorf("%w: no %s (apt-get install default-jdk-headless)", ErrMissing, tool)
			}
		}
		if _, err := os.Stat(curatorJar); err != nil {
			return fmt.Errorf("%w: no %s (apt-get install libcurator-recipes-java)", ErrMissing, curatorJar)
		}
		if _, err := os.Stat(zkQueueJar); err != nil {
			return fmt.Errorf("%w: no %s (apt-get install libzookeeper-java)", ErrMissing, zkQueueJar)
		}
		if _, err := os.Stat(discoveryJar); err != nil {
			return fmt.Errorf("%w: no %s (apt-get install libcurator-discovery-java)", ErrMissing, discoveryJar)
		}
	case Kazoo:
		if _, err := os.Stat(python); err != nil {
			return fmt.Errorf("%w: no %s (apt-get install python3)", ErrMissing, python)
		}
		if _, err := os.Stat(kazooDir); err != nil {
			return fmt.Errorf("%w: no kazoo (apt-get install python3-kazoo)", ErrMissing)
		}
	default:
		return fmt.Errorf("%w: unknown peer kind %q", ErrMissing, kind)
	}
	return nil
}

type builtKey struct {
	release string
	kind    Kind
}

var (
	buildMu  sync.Mutex
	builtDir = map[builtKey]string{}
)

// prepare writes (and for Java compiles, with r's javac and jars) the kind's
// programs into a directory named by r and a hash of their sources, reused
// across runs and processes.
func prepare(ctx context.Context, r Release, kind Kind) (string, error) {
	buildMu.Lock()
	defer buildMu.Unlock()
	if d, ok := builtDir[builtKey{r.Name, kind}]; ok {
		return d, nil
	}
	sub := "java"
	if kind == Kazoo {
		sub = "python"
	}
	entries, err := sources.ReadDir(sub)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	files := map[string][]byte{}
	for _, e := range entries {
		b, err := sources.ReadFile(sub + "/" + e.Name())
		if err != nil {
			return "", err
		}
		files[e.Name()] = b
		fmt.Fprintf(h, "%s\x00%d\x00", e.Name(), len(b))
		h.Write(b)
	}
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("zkrecipes-peer-%s-%s-%s", r.Name, kind, hex.EncodeToString(h.Sum(nil)[:6])))
	marker := filepath.Join(dir, "ready")
	if _, err := os.Stat(marker); err != nil {
		tmp, err := os.MkdirTemp(os.TempDir(), "zkrecipes-peer-build-")
		if err != nil {
			return "", err
		}
		defer os.RemoveAll(tmp)
		var javaFiles []string
		for name, b := range files {
			if err := os.WriteFile(filepath.Join(tmp, name), b, 0o644); err != nil {
				return "", err
			}
			javaFiles = append(javaFiles, filepath.Join(tmp, name))
		}
		if kind == Curator {
			sort.Strings(javaFiles)
			args := append([]string{"javac", "-nowarn", "-cp", classPath(""), "-d", tmp}, javaFiles...)
			if out, err := r.command(ctx, args...).CombinedOutput(); err != nil {
				return "", fmt.Errorf("peers: javac (%s): %v\n%s", r.Name, err, out)
			}
		}
		if err := os.WriteFile(filepath.Join(tmp, "ready"), nil, 0o644); err != nil {
			return "", err
		}
		// Another process may have won the race; either copy is complete.
		if err := os.Rename(tmp, dir); err != nil {
			if _, serr := os.Stat(marker); serr != nil {
				return "", err
			}
		}
	}
	builtDir[builtKey{r.Name, kind}] = dir
	return dir, nil
}

// classPath is the Java peers' class path: dir (the compiled peers; none
// when empty) and the Curator jars.
func classPath(dir string) string {
	cp := curatorJar + ":" + zkQueueJar + ":" + discoveryJar
	if dir != "" {
		cp = dir + ":" + cp
	}
	return cp
}

// Hold is one holding a peer reported: its kind (lock, read, write,
// selector, election), CLOCK_MONOTONIC nanoseconds at its start and end, and
// the counter value it wrote (or read).
type Hold struct {
	Kind   string
	T0, T1 int64
	Value  int64
}

// Event is an asynchronous event a peer reported (leader, notleader,
// entered, left) with its CLOCK_MONOTONIC time and any further fields.
type Event struct {
	Name string
	T    int64
	Rest []string
}

// Peer is one running peer process. Do is serial: one command at a time.
type Peer struct {
	Kind      Kind
	Release   Release
	SessionID int64

	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr *strings.Builder
	result chan string
	exited chan struct{}
	// container is the peer's container (a release with an image), removed
	// by Close if the peer does not quit.
	container string

	mu     sync.Mutex
	holds  []Hold
	events []Event
	notify chan struct{} // closed and replaced on every event
}

// Start runs the interop peer of kind (java/Peer.java or python/peer.py)
// of the release installed on this machine (Debian12) connected to connect
// (a ZooKeeper connect string) with the given session timeout, and waits
// until it is connected. Close must be called.
func Start(ctx context.Context, kind Kind, connect string, sessionTimeout time.Duration) (*Peer, error) {
	return Debian12.Start(ctx, kind, connect, sessionTimeout)
}

// StartProgram is Start for another program of the same kind: a Java class
// with a main method in java/, or a script in python/. It must speak the
// same line protocol (READY, then OK/ERR per command).
func StartProgram(ctx context.Context, kind Kind, program, connect string, sessionTimeout time.Duration) (*Peer, error) {
	return Debian12.StartProgramWith(ctx, kind, program, connect, sessionTimeout, JavaOptions{})
}

// JavaOptions are what a Java peer's JVM gets beyond the defaults: system
// properties (-Dname=value, for the ZooKeeper client's TLS settings or a
// program's own) and jars appended to the class path (Debian's
// zookeeper.jar needs netty-codec.jar and netty-resolver.jar for TLS).
type JavaOptions struct {
	Properties map[string]string
	ClassPath  []string
}

// StartProgramWith is StartProgram with JavaOptions; a Kazoo peer with
// options fails with ErrPeer (they are for a JVM).
func StartProgramWith(ctx context.Context, kind Kind, program, connect string, sessionTimeout time.Duration, jo JavaOptions) (*Peer, error) {
	return Debian12.StartProgramWith(ctx, kind, program, connect, sessionTimeout, jo)
}

// Start is the package's Start with r's libraries.
func (r Release) Start(ctx context.Context, kind Kind, connect string, sessionTimeout time.Duration) (*Peer, error) {
	program := "Peer"
	if kind == Kazoo {
		program = "peer.py"
	}
	return r.StartProgramWith(ctx, kind, program, connect, sessionTimeout, JavaOptions{})
}

// StartProgramWith is the package's StartProgramWith with r's libraries.
// In a container, the peer shares this machine's network (connect's
// loopback addresses reach the same servers), its CLOCK_MONOTONIC (hold
// times compare with the Go side's) and its temporary directory (files that
// JavaOptions name there, such as TLS stores, are found at the same path).
func (r Release) StartProgramWith(ctx context.Context, kind Kind, program, connect string, sessionTimeout time.Duration, jo JavaOptions) (*Peer, error) {
	if kind != Curator && (len(jo.Properties) > 0 || len(jo.ClassPath) > 0) {
		return nil, fmt.Errorf("%w: Java options for a %s peer", ErrPeer, kind)
	}
	if err := r.Available(kind); err != nil {
		return nil, err
	}
	dir, err := prepare(ctx, r, kind)
	if err != nil {
		return nil, err
	}
	ms := strconv.FormatInt(sessionTimeout.Milliseconds(), 10)
	var cmd *exec.Cmd
	var container string
	if kind == Curator {
		cp := classPath(dir)
		if _, err := os.Stat(slf4jNop); err == nil {
			cp += ":" + slf4jNop
		}
		for _, jar := range jo.ClassPath {
			cp += ":" + jar
		}
		args := []string{"-Xmx64m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"}
		names := make([]string, 0, len(jo.Properties))
		for name := range jo.Properties {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			args = append(args, "-D"+name+"="+jo.Properties[name])
		}
		cmd, container = r.peerCommand(append(append([]string{"java"}, args...), "-cp", cp, program, connect, ms)...)
	} else {
		cmd, container = r.peerCommand(python, "-u", filepath.Join(dir, program), connect, ms)
	}
	p := &Peer{Kind: kind, Release: r, cmd: cmd, stderr: &strings.Builder{}, result: make(chan string, 1),
		exited: make(chan struct{}), notify: make(chan struct{})}
	cmd.Stderr = &lockedWriter{w: p.stderr}
	p.stdin, err = cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p.container = container
	ready := make(chan string, 1)
	go p.read(stdout, ready)
	select {
	case line := <-ready:
		id, err := strconv.ParseUint(strings.TrimPrefix(line, "READY "), 16, 64)
		if err != nil {
			p.Close()
			return nil, fmt.Errorf("peers: %s said %q", kind, line)
		}
		p.SessionID = int64(id)
		return p, nil
	case <-p.exited:
		return nil, fmt.Errorf("%w: %s before READY: %s", ErrExited, kind, p.Stderr())
	case <-ctx.Done():
		p.Close()
		return nil, fmt.Errorf("peers: %s not ready: %w", kind, context.Cause(ctx))
	}
}

// read parses the peer's stdout until it ends.
func (p *Peer) read(r io.Reader, ready chan<- string) {
	defer func() {
		_ = p.cmd.Wait()
		close(p.exited)
	}()
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		switch f[0] {
		case "READY":
			ready <- line
		case "HOLD":
			if h, ok := parseHold(f); ok {
				p.mu.Lock()
				p.holds = append(p.holds, h)
				p.mu.Unlock()
			}
		case "EVENT":
			if len(f) >= 3 {
				t, _ := strconv.ParseInt(f[2], 10, 64)
				p.mu.Lock()
				p.events = append(p.events, Event{Name: f[1], T: t, Rest: f[3:]})
				close(p.notify)
				p.notify = make(chan struct{})
				p.mu.Unlock()
			}
		case "OK", "ERR":
			p.result <- line
		}
	}
}

// parseHold parses "HOLD kind t0 t1 value".
func parseHold(f []string) (Hold, bool) {
	if len(f) != 5 || f[0] != "HOLD" {
		return Hold{}, false
	}
	t0, e0 := strconv.ParseInt(f[2], 10, 64)
	t1, e1 := strconv.ParseInt(f[3], 10, 64)
	v, e2 := strconv.ParseInt(f[4], 10, 64)
	if e0 != nil || e1 != nil || e2 != nil || t1 < t0 {
		return Hold{}, false
	}
	return Hold{Kind: f[1], T0: t0, T1: t1, Value: v}, true
}

// Do sends one command and waits for its OK (returning the rest of the
// line) or ERR (an error wrapping ErrPeer).
func (p *Peer) Do(ctx context.Context, command string) (string, error) {
	if _, err := io.WriteString(p.stdin, command+"\n"); err != nil {
		return "", fmt.Errorf("%w: %v", ErrExited, err)
	}
	select {
	case line := <-p.result:
		if rest, ok := strings.CutPrefix(line, "OK"); ok {
			return strings.TrimSpace(rest), nil
		}
		return "", fmt.Errorf("%w: %s: %s", ErrPeer, command, strings.TrimPrefix(line, "ERR "))
	case <-p.exited:
		return "", fmt.Errorf("%w: during %q: %s", ErrExited, command, p.Stderr())
	case <-ctx.Done():
		return "", fmt.Errorf("peers: %q: %w", command, context.Cause(ctx))
	}
}

// Holds returns the holdings reported so far.
func (p *Peer) Holds() []Hold {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Hold(nil), p.holds...)
}

// Events returns the events reported so far.
func (p *Peer) Events() []Event {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Event(nil), p.events...)
}

// WaitEvent waits until an event satisfying match has been reported (also
// one reported before the call) and returns it.
func (p *Peer) WaitEvent(ctx context.Context, match func(Event) bool) (Event, error) {
	for {
		p.mu.Lock()
		for _, e := range p.events {
			if match(e) {
				p.mu.Unlock()
				return e, nil
			}
		}
		ch := p.notify
		p.mu.Unlock()
		select {
		case <-ch:
		case <-p.exited:
			return Event{}, fmt.Errorf("%w: %s", ErrExited, p.Stderr())
		case <-ctx.Done():
			return Event{}, context.Cause(ctx)
		}
	}
}

// Stderr returns what the peer wrote to stderr so far.
func (p *Peer) Stderr() string {
	lw := p.cmd.Stderr.(*lockedWriter)
	lw.mu.Lock()
	defer lw.mu.Unlock()
	return strings.TrimSpace(p.stderr.String())
}

// Close asks the peer to quit, and kills it if it has not within 10 s.
func (p *Peer) Close() error {
	_, _ = io.WriteString(p.stdin, "quit\n")
	_ = p.stdin.Close()
	select {
	case <-p.exited:
	case <-time.After(10 * time.Second):
		if p.container != "" {
			_ = exec.Command("docker", "rm", "-f", p.container).Run()
		}
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
	return nil
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}
