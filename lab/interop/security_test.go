package interop

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/chaos/history"
	"github.com/zkrecipes/zkrecipes/lab/internal/peers"
	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"github.com/zkrecipes/zkrecipes/lock"
	"github.com/zkrecipes/zkrecipes/recipes"
	"github.com/zkrecipes/zkrecipes/testenv"
)

// The digest principals of the security interop test: the application's,
// which Go and Curator share, and an outsider's.
const (
	appUser, appPass   = "app", "app-secret"
	evilUser, evilPass = "intruder", "intruder-secret"
)

// securePeer starts a SecPeer (Curator with digest user:password and a
// creator-all, world-read ACLProvider) on e, over TLS, and closes it at
// cleanup.
func securePeer(t *testing.T, rel peers.Release, e *testenv.Ensemble, user, password string) *peers.Peer {
	t.Helper()
	peerReady(t, rel, peers.Curator)
	files, ok := e.TLSFiles()
	if !ok {
		t.Fatal("the ensemble has no TLS")
	}
	jo := peers.JavaOptions{
		Properties: map[string]string{
			"zkpeer.digest":                     user + ":" + password,
			"zookeeper.client.secure":           "true",
			"zookeeper.clientCnxnSocket":        "org.apache.zookeeper.ClientCnxnSocketNetty",
			"zookeeper.ssl.trustStore.location": files.TrustStore,
			"zookeeper.ssl.trustStore.password": files.Password,
			// ZooKeeper 3.8's client offers only TLSv1.2 by default; the
			// 3.9.3 server (Debian 13, JRE 21) answers that with a
			// protocol_version alert (ZOOKEEPER-5053). Offer both, as a
			// deployment with 3.8 clients and 3.9.3 servers must.
			"zookeeper.ssl.protocol":         "TLSv1.3",
			"zookeeper.ssl.enabledProtocols": "TLSv1.3,TLSv1.2",
		},
		ClassPath: []string{"/usr/share/java/netty-codec.jar", "/usr/share/java/netty-resolver.jar"},
	}
	p, err := rel.StartProgramWith(ctxFor(t, 2*time.Minute), peers.Curator, "SecPeer", e.ConnectString(), sessionTimeout, jo)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// secureSession connects a Go Session to e over TLS with digest
// user:password (and so DefaultAuthACL) and closes it at cleanup.
func secureSession(t *testing.T, e *testenv.Ensemble, user, password string) *recipes.Session {
	t.Helper()
	s, err := recipes.Connect(ctxFor(t, time.Minute), e.Addrs(), recipes.WithSessionTimeout(sessionTimeout),
		recipes.WithTLS(e.ClientTLS()), recipes.WithDigestAuth(user, password), recipes.WithEnsembleTiming(testenv.DefaultTickTime, testenv.SyncLimit))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := s.CloseContext(ctx); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return s
}

// wantAppACL fails the test unless the node at path carries the
// restrictive ACL both sides give their nodes: all for digest app, read
// for anyone (Go's DefaultAuthACL, Curator's creator-all + world-read).
func wantAppACL(t *testing.T, s *recipes.Session, path string) {
	t.Helper()
	acl, _, err := s.Conn().GetACL(path)
	if err != nil {
		t.Fatalf("getACL %s: %v", path, err)
	}
	want := []zk.ACL{
		{Perms: zk.PermAll, Scheme: "digest", ID: zk.DigestACL(zk.PermAll, appUser, appPass)[0].ID},
		{Perms: zk.PermRead, Scheme: "world", ID: "anyone"},
	}
	if fmt.Sprint(acl) != fmt.Sprint(want) {
		t.Fatalf("ACL of %s = %v, want %v", path, acl, want)
	}
}

// peerTime parses the CLOCK_MONOTONIC time a SecPeer answered with.
func peerTime(t *testing.T, answer string) int64 {
	t.Helper()
	v, err := strconv.ParseInt(answer, 10, 64)
	if err != nil {
		t.Fatalf("peer answered %q, want a time", answer)
	}
	return v
}

// otherChild waits until path has two children, one of them mine, and
// returns the other one's full path: the waiter's node.
func otherChild(t *testing.T, s *recipes.Session, path, mine string) string {
	t.Helper()
	var other string
	testutil.WaitFor(t, 30*time.Second, "a second contender under "+path, func() bool {
		children, _, err := s.Conn().Children(path)
		if err != nil {
			t.Fatalf("list %s: %v", path, err)
		}
		if len(children) != 2 {
			return false
		}
		for _, c := range children {
			if path+"/"+c != mine {
				other = path + "/" + c
			}
		}
		return other != ""
	})
	return other
}

// TestMutexWithCuratorDigestTLS: on a TLS-only ensemble that enforces
// digest authentication, a Curator InterProcessMutex and a Go lock.Mutex
// authenticated as the same digest user share one lock path. Each waits
// for the other's release and acquires after it; every node either side
// creates (the lock's parent and both contenders) carries the restrictive
// ACL; a Curator client with other credentials can delete neither holder's
// node (NoAuth), and nothing is left behind.
func TestMutexWithCuratorDigestTLS(t *testing.T) {
	forEachRelease(t, func(t *testing.T, rel peers.Release) {
		if testing.Short() {
			t.Skip("needs a real ZooKeeper ensemble")
		}
		e := testenv.New(t, testenv.Config{Servers: 1, TLS: true, EnforceAuth: true})
		testutil.NoLeakedGoroutines(t, testutil.Running("recipes", "lock"))
		ctx := ctxFor(t, 5*time.Minute)
		app := securePeer(t, rel, e, appUser, appPass)
		evil := securePeer(t, rel, e, evilUser, evilPass)
		s := secureSession(t, e, appUser, appPass)

		for _, first := range []string{"go", "curator"} {
			t.Run(first+" first", func(t *testing.T) {
				path := fmt.Sprintf("/interop-sec/%s-first-%d/lock", first, time.Now().UnixNano())
				m, err := lock.New(s, path)
				if err != nil {
					t.Fatal(err)
				}
				if first == "go" {
					goThenCurator(t, ctx, s, m, app, evil, path)
				} else {
					curatorThenGo(t, ctx, s, m, app, evil, path)
				}
				children, _, err := s.Conn().Children(path)
				if err != nil || len(children) != 0 {
					t.Fatalf("left under %s: %v, %v", path, children, err)
				}
			})
		}
	})
}

// goThenCurator: Go holds, Curator waits, the outsider cannot delete the
// Go holder's node, Go releases and Curator acquires after that.
func goThenCurator(t *testing.T, ctx context.Context, s *recipes.Session, m *lock.Mutex, app, evil *peers.Peer, path string) {
	if err := m.Lock(ctx); err != nil {
		t.Fatalf("Go Lock: %v", err)
	}
	mine := m.Node()
	wantAppACL(t, s, zkParent(path))
	wantAppACL(t, s, path)
	wantAppACL(t, s, mine)
	acquired := make(chan string, 1)
	go func() {
		ans, err := app.Do(ctx, "acquire "+path)
		if err != nil {
			ans = "error: " + err.Error()
		}
		acquired <- ans
	}()
	theirs := otherChild(t, s, path, mine)
	wantAppACL(t, s, theirs)
	_, err := evil.Do(ctx, "delete "+mine)
	if !errors.Is(err, peers.ErrPeer) || !strings.Contains(err.Error(), "NoAuth") {
		t.Fatalf("outsider deleting the Go holder's node: %v, want NoAuth", err)
	}
	select {
	case ans := <-acquired:
		t.Fatalf("Curator acquired while Go held: %s", ans)
	default:
	}
	released := history.Now()
	if err := m.Unlock(ctx); err != nil {
		t.Fatalf("Go Unlock: %v", err)
	}
	var ans string
	select {
	case ans = <-acquired:
	case <-time.After(30 * time.Second):
		t.Fatal("Curator did not acquire within 30 s of Go's release")
	}
	if at := peerTime(t, ans); at < released {
		t.Fatalf("Curator acquired at %d, before Go's release began at %d", at, released)
	}
	if ok, _, err := s.Conn().Exists(mine); err != nil || ok {
		t.Fatalf("Go's node after Unlock: exists %v, %v", ok, err)
	}
	if _, err := app.Do(ctx, "release "+path); err != nil {
		t.Fatal(err)
	}
}

// curatorThenGo: Curator holds (and so created the lock's parents), Go
// waits, the outsider cannot delete the Curator holder's node, Curator
// releases and Go acquires after that.
func curatorThenGo(t *testing.T, ctx context.Context, s *recipes.Session, m *lock.Mutex, app, evil *peers.Peer, path string) {
	if _, err := app.Do(ctx, "acquire "+path); err != nil {
		t.Fatalf("Curator acquire: %v", err)
	}
	wantAppACL(t, s, zkParent(path))
	wantAppACL(t, s, path)
	children, _, err := s.Conn().Children(path)
	if err != nil || len(children) != 1 {
		t.Fatalf("children of %s with Curator holding: %v, %v", path, children, err)
	}
	theirs := path + "/" + children[0]
	wantAppACL(t, s, theirs)
	locked := make(chan error, 1)
	var lockedAt int64
	go func() {
		err := m.Lock(ctx)
		lockedAt = history.Now()
		locked <- err
	}()
	testutil.WaitFor(t, 30*time.Second, "Go's contender node", func() bool {
		children, _, err := s.Conn().Children(path)
		return err == nil && len(children) == 2
	})
	children, _, _ = s.Conn().Children(path)
	for _, c := range children {
		if path+"/"+c != theirs {
			wantAppACL(t, s, path+"/"+c)
		}
	}
	_, err = evil.Do(ctx, "delete "+theirs)
	if !errors.Is(err, peers.ErrPeer) || !strings.Contains(err.Error(), "NoAuth") {
		t.Fatalf("outsider deleting the Curator holder's node: %v, want NoAuth", err)
	}
	select {
	case err := <-locked:
		t.Fatalf("Go locked while Curator held: %v", err)
	default:
	}
	ans, err := app.Do(ctx, "release "+path)
	if err != nil {
		t.Fatal(err)
	}
	released := peerTime(t, ans)
	select {
	case err := <-locked:
		if err != nil {
			t.Fatalf("Go Lock: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Go did not lock within 30 s of Curator's release")
	}
	if lockedAt < released {
		t.Fatalf("Go locked at %d, before Curator's release began at %d", lockedAt, released)
	}
	if m.Node() == "" {
		t.Fatal("Go holds no node")
	}
	if err := m.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

// zkParent is the parent of p.
func zkParent(p string) string { return p[:strings.LastIndex(p, "/")] }
