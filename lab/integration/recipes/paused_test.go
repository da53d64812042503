package recipes_test

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"github.com/zkrecipes/zkrecipes/recipes"
	"github.com/zkrecipes/zkrecipes/testenv"
)

// pausedHolderEnv turns this test binary, run with -test.run
// '^TestLeasePausedHolder$', into the paused holder's process: the value
// is the servers, the lock's path and the fenced node's path, separated by
// '|'.
const pausedHolderEnv = "ZKRECIPES_PAUSED_HOLDER"

// pausedHolderCAEnv gives the paused holder's process, in the secured pass,
// the file of the ensemble's CA (PEM): it started no ensemble, so the
// harness has no TLS configuration of its own there.
const pausedHolderCAEnv = "ZKRECIPES_PAUSED_HOLDER_CA"

// TestLeasePausedHolder: a holder in its own process checks its Context
// (live), and is stopped (SIGSTOP) before it acts, for longer than its
// session's timeout. The ensemble expires the session and another client
// acquires the lock while the stopped holder's Context, which it checked,
// said it held: a Context cannot protect a process that is not running.
// Resumed (SIGCONT), the holder issues the write it had decided on, fenced
// (FencedMulti), without checking again: it is refused (ErrFenced; the
// first tries may fail with the connection, as go-zookeeper learns of the
// expiry, and are retried as a caller would), and the node keeps the new
// holder's data. The server refuses the stale fence as well (sent by
// another session, so that it reaches the server).
func TestLeasePausedHolder(t *testing.T) {
	if spec := os.Getenv(pausedHolderEnv); spec != "" {
		pausedHolderChild(t, spec)
		return
	}
	e := ensemble(t)
	ctx := testutil.Ctx(t, 2*time.Minute)
	path := testPath(t)
	target := path + "-data"
	admin := connect(t, e.Addrs())
	ensurePath(t, admin, target)

	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run", "^TestLeasePausedHolder$", "-test.count=1")
	cmd.Env = append(os.Environ(), pausedHolderEnv+"="+strings.Join([]string{strings.Join(e.Addrs(), ","), path, target}, "|"))
	if files, ok := e.TLSFiles(); ok {
		cmd.Env = append(cmd.Env, pausedHolderCAEnv+"="+files.CA)
	}
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	defer func() {
		_ = syscall.Kill(pid, syscall.SIGCONT)
		_ = stdin.Close()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	}()
	lines := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if l, ok := strings.CutPrefix(sc.Text(), "CHILD "); ok {
				lines <- l
			}
		}
		close(lines)
	}()
	next := func(what string) string {
		t.Helper()
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("the holder's process ended before %s", what)
			}
			return l
		case <-ctx.Done():
			t.Fatalf("no %s from the holder's process", what)
		}
		return ""
	}
	say := func(cmd string) {
		t.Helper()
		if _, err := io.WriteString(stdin, cmd+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	var fence recipes.Fence
	if l := next("holding"); !strings.HasPrefix(l, "held ") {
		t.Fatalf("holder: %s", l)
	} else if _, err := fmt.Sscanf(l, "held %d %s %d", &fence.Token, &fence.Path, &fence.Version); err != nil {
		t.Fatalf("holder: %q: %v", l, err)
	}

	type result struct {
		h   *recipes.Holding
		at  time.Time
		err error
	}
	acquired := make(chan result, 1)
	waiter := connect(t, e.Addrs())
	go func() {
		h2, err := recipes.Acquire(ctx, waiter, recipes.Spec{Path: path})
		acquired <- result{h2, time.Now(), err}
	}()
	waitFor(t, 10*time.Second, "the waiter to wait", func() bool { return len(rawChildren(t, waiter, path)) == 2 })

	say("check")
	if l := next("check"); l != "live" {
		t.Fatalf("holder's Context before the pause: %s, want live", l)
	}
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	var got result
	select {
	case got = <-acquired:
	case <-ctx.Done():
		t.Fatal("the waiter never acquired while the holder was stopped")
	}
	if got.err != nil {
		t.Fatalf("waiter: %v", got.err)
	}
	defer got.h.Release(context.Background())
	t.Logf("the waiter acquired %v after the holder's process was stopped (its Context checked live just before)", got.at.Sub(stopped).Round(time.Millisecond))
	if _, err := got.h.FencedMulti(ctx, &zk.SetDataRequest{Path: target, Data: []byte("new"), Version: -1}); err != nil {
		t.Fatalf("the new holder's fenced write: %v", err)
	}

	if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	say("write")
	l := next("the write's outcome")
	t.Logf("resumed holder's fenced write: %s", l)
	if !strings.HasPrefix(l, "fenced ") {
		t.Errorf("the resumed holder's fenced write: %s, want ErrFenced", l)
	}
	// The server refuses the stale holder's fence too, whoever sends it: a
	// write of the resumed holder that reached it would fail its check.
	set := &zk.SetDataRequest{Path: target, Data: []byte("stale"), Version: -1}
	if _, err := recipes.FencedMulti(ctx, admin, recipes.Fence{Path: fence.Path, SessionID: admin.ID(), Version: fence.Version}, set); !errors.Is(err, recipes.ErrFenced) || !errors.Is(err, zk.ErrNoNode) {
		t.Errorf("the stale fence sent to the server: %v, want ErrFenced and zk.ErrNoNode", err)
	}
	say("check")
	if l := next("check"); !strings.HasPrefix(l, "done ") {
		t.Errorf("holder's Context after resuming: %s, want done", l)
	} else {
		t.Logf("holder's Context after resuming: %s", l)
	}
	if data, _, err := admin.Conn().Get(target); err != nil || string(data) != "new" {
		t.Fatalf("%s holds %q (%v), want the new holder's %q", target, data, err, "new")
	}
}

// ensurePath creates path (and its parents) with no data if missing.
func ensurePath(t *testing.T, s *recipes.Session, path string) {
	t.Helper()
	p := ""
	for _, part := range strings.Split(strings.TrimPrefix(path, "/"), "/") {
		p += "/" + part
		if _, err := s.Conn().Create(p, nil, 0, testutil.ACL()); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			t.Fatalf("create %s: %v", p, err)
		}
	}
}

// pausedHolderChild is the holder's process: it acquires the lock, then
// answers the parent's commands on stdin, one line each on stdout
// (prefixed "CHILD "): check (its Context: "live" or "done <cause>"),
// write (a fenced setData of the target, retried up to 20 times while it
// fails otherwise than fenced, as a caller would with an unknown outcome:
// "fenced <err> ...", "ok" or "error <err>").
func pausedHolderChild(t *testing.T, spec string) {
	parts := strings.Split(spec, "|")
	if len(parts) != 3 {
		t.Fatalf("%s=%q", pausedHolderEnv, spec)
	}
	addrs, path, target := strings.Split(parts[0], ","), parts[1], parts[2]
	if ca := os.Getenv(pausedHolderCAEnv); ca != "" {
		pem, err := os.ReadFile(ca)
		if err != nil {
			t.Fatal(err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			t.Fatalf("%s: no certificate", ca)
		}
		testutil.UseClientTLS(&tls.Config{RootCAs: pool, ServerName: testenv.TLSServerName, MinVersion: tls.VersionTLS12})
	}
	s := testutil.Connect(t, addrs)
	ctx := testutil.Ctx(t, 2*time.Minute)
	h, err := recipes.Acquire(ctx, s, recipes.Spec{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	hctx := h.Context()
	f := h.Fence()
	fmt.Printf("CHILD held %d %s %d\n", f.Token, f.Path, f.Version)
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		switch in.Text() {
		case "check":
			if err := hctx.Err(); err != nil {
				fmt.Printf("CHILD done %v\n", context.Cause(hctx))
			} else {
				fmt.Println("CHILD live")
			}
		case "write":
			set := &zk.SetDataRequest{Path: target, Data: []byte("stale"), Version: -1}
			var err error
			var tries []string
			for {
				_, err = h.FencedMulti(ctx, set)
				// Any other error is the connection's (zk.ErrConnectionClosed,
				// zk.ErrNoServer, or the write's own error, e.g. a broken
				// pipe): the outcome is unknown, try again.
				if err == nil || errors.Is(err, recipes.ErrFenced) || ctx.Err() != nil || len(tries) == 20 {
					break
				}
				tries = append(tries, err.Error())
			}
			switch {
			case err == nil:
				fmt.Println("CHILD ok")
			case errors.Is(err, recipes.ErrFenced):
				fmt.Printf("CHILD fenced %v (after %d lost-connection tries: %q)\n", err, len(tries), tries)
			default:
				fmt.Printf("CHILD error %v\n", err)
			}
		}
	}
	_ = h.Release(context.Background())
}
