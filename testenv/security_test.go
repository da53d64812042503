package testenv

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

// secClient is a go-zookeeper connection through a dialer, with digest
// credentials when auth is set, that records its session states.
type secClient struct {
	conn   *zk.Conn
	mu     sync.Mutex
	states []zk.State
}

// dialClient connects to addrs with dialer and, when auth is not nil,
// sends digest credentials before any other request. It does not wait for
// a session.
func dialClient(t *testing.T, addrs []string, dialer zk.Dialer, auth []byte) *secClient {
	t.Helper()
	c := &secClient{}
	conn, _, err := zk.Connect(addrs, 3*time.Second, zk.WithLogger(quiet{}), zk.WithDialer(dialer),
		zk.WithEventCallback(func(ev zk.Event) {
			if ev.Type == zk.EventSession {
				c.mu.Lock()
				c.states = append(c.states, ev.State)
				c.mu.Unlock()
			}
		}))
	if err != nil {
		t.Fatal(err)
	}
	c.conn = conn
	t.Cleanup(conn.Close)
	if auth != nil {
		if err := conn.AddAuth("digest", auth); err != nil {
			t.Fatalf("add auth: %v", err)
		}
	}
	return c
}

// count returns how often the client entered state s.
func (c *secClient) count(s zk.State) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, x := range c.states {
		if x == s {
			n++
		}
	}
	return n
}

func (c *secClient) waitSession(t *testing.T) {
	t.Helper()
	waitFor(t, 30*time.Second, "a session", func() bool { return c.conn.State() == zk.StateHasSession })
}

// authRequired reports the error go-zookeeper returns for a request the
// server refuses because the connection has not authenticated: ZooKeeper
// answers code -124 (SESSIONCLOSEDREQUIRESASLAUTH), which go-zookeeper
// 1.0.4 does not name.
func authRequired(err error) bool {
	return err != nil && strings.Contains(err.Error(), "-124")
}

// TestSecureEnsemble runs a 1-server ensemble with TLS and EnforceAuth and
// shows what each kind of client gets from it.
func TestSecureEnsemble(t *testing.T) {
	var tlsDir string
	t.Cleanup(func() { // after New's cleanup has closed the ensemble
		if tlsDir == "" {
			return
		}
		if _, err := os.Stat(tlsDir); !os.IsNotExist(err) {
			t.Errorf("TLS directory %s left after Close (%v)", tlsDir, err)
		}
	})
	forEachBackend(t, Config{Servers: 1, TLS: true, EnforceAuth: true, JavaHeap: "64m"}, func(t *testing.T, e *Ensemble) {
		ctx := ctxT(t, 2*time.Minute)
		files, ok := e.TLSFiles()
		if !ok {
			t.Fatal("TLSFiles of a TLS ensemble: none")
		}
		tlsDir = files.Dir
		for _, f := range []string{files.TrustStore, files.KeyStore, files.CA} {
			if st, err := os.Stat(f); err != nil || st.Size() == 0 {
				t.Fatalf("%s: %v", f, err)
			}
		}
		admin := dialClient(t, e.DirectAddrs(), e.Dialer(), e.SuperAuth())
		admin.waitSession(t)

		t.Run("four-letter words go over TLS", func(t *testing.T) {
			out, err := e.FourLetter(ctx, 0, "srvr")
			if err != nil || !strings.Contains(out, "Mode: standalone") {
				t.Fatalf("srvr over TLS: %q, %v", out, err)
			}
			short, cancel := context.WithTimeout(ctx, time.Second)
			defer cancel()
			out, err = FourLetter(short, e.DirectAddrs()[0], "srvr")
			if err == nil && strings.Contains(out, "Mode:") {
				t.Fatalf("plain srvr answered on the TLS port: %q", out)
			}
		})

		t.Run("TLS client with credentials creates and reads", func(t *testing.T) {
			c := dialClient(t, e.Addrs(), e.Dialer(), []byte("u:p"))
			c.waitSession(t)
			if _, err := c.conn.Create("/tls", []byte("v"), 0, zk.WorldACL(zk.PermAll)); err != nil {
				t.Fatal(err)
			}
			if b, _, err := c.conn.Get("/tls"); err != nil || string(b) != "v" {
				t.Fatalf("get: %q, %v", b, err)
			}
		})

		t.Run("TLS through a private link survives a cut", func(t *testing.T) {
			l, err := e.NewLink("tls")
			if err != nil {
				t.Fatal(err)
			}
			c := dialClient(t, l.Addrs(), e.Dialer(), []byte("u:p"))
			c.waitSession(t)
			id := c.conn.SessionID()
			if _, err := c.conn.Create("/tls-link", nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
				t.Fatal(err)
			}
			if err := l.Cut(); err != nil {
				t.Fatal(err)
			}
			waitFor(t, 10*time.Second, "the cut to drop the connection", func() bool { return c.count(zk.StateDisconnected) > 0 })
			if err := l.Restore(); err != nil {
				t.Fatal(err)
			}
			c.waitSession(t)
			if ok, _, err := c.conn.Exists("/tls-link"); err != nil || !ok {
				t.Fatalf("exists after the cut: %v, %v", ok, err)
			}
			if c.conn.SessionID() != id {
				t.Fatalf("session 0x%x became 0x%x", id, c.conn.SessionID())
			}
			// ExpireSession asks the leader over TLS whether the session
			// is gone; the client's credentials come back with its new
			// session.
			if err := l.ExpireSession(ctx, id); err != nil {
				t.Fatal(err)
			}
			waitFor(t, 30*time.Second, "the client to see the expiry", func() bool { return c.count(zk.StateExpired) > 0 })
			c.waitSession(t)
			if ok, _, err := c.conn.Exists("/tls-link"); err != nil || !ok {
				t.Fatalf("exists in the new session: %v, %v", ok, err)
			}
		})

		t.Run("TLS cut after the next frame delivers that frame, then nothing", func(t *testing.T) {
			l, err := e.NewLink("tls-cut-frame")
			if err != nil {
				t.Fatal(err)
			}
			c := dialClient(t, l.Addrs(), e.Dialer(), []byte("u:p"))
			c.waitSession(t)
			_, _, ch, err := c.conn.ExistsW("/tls-cut-frame")
			if err != nil {
				t.Fatal(err)
			}
			if err := l.CutAfterNextFrame(); err != nil {
				t.Fatal(err)
			}
			if _, err := admin.conn.Create("/tls-cut-frame", nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
				t.Fatal(err)
			}
			select {
			case ev := <-ch:
				if ev.Type != zk.EventNodeCreated {
					t.Fatalf("watch event %v, want node created", ev.Type)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the frame after the fault was set was not delivered")
			}
			if _, err := c.conn.Create("/tls-cut-frame-after", nil, 0, zk.WorldACL(zk.PermAll)); err == nil {
				t.Fatal("create answered after the cut")
			}
			if ok, _, err := admin.conn.Exists("/tls-cut-frame-after"); err != nil || ok {
				t.Fatalf("a create sent after the cut reached the server: %v, %v", ok, err)
			}
			if err := l.Heal(); err != nil {
				t.Fatal(err)
			}
		})

		t.Run("plain client gets no session", func(t *testing.T) {
			c := dialClient(t, e.Addrs(), net.DialTimeout, nil)
			// Each attempt connects, fails the handshake and drops.
			waitFor(t, 30*time.Second, "three failed attempts", func() bool { return c.count(zk.StateDisconnected) >= 3 })
			if n := c.count(zk.StateHasSession); n != 0 {
				t.Fatalf("plain client got a session %d times", n)
			}
		})

		t.Run("client trusting another CA fails the handshake", func(t *testing.T) {
			d := tls.Dialer{Config: &tls.Config{RootCAs: x509.NewCertPool(), ServerName: TLSServerName}}
			conn, err := d.DialContext(ctx, "tcp", e.Addrs()[0])
			if err == nil {
				conn.Close()
				t.Fatal("handshake succeeded without the ensemble's CA")
			}
			var ua x509.UnknownAuthorityError
			if !errors.As(err, &ua) {
				t.Fatalf("handshake error %v, want an unknown authority", err)
			}
		})

		t.Run("client without credentials is refused", func(t *testing.T) {
			c := dialClient(t, e.Addrs(), e.Dialer(), nil)
			c.waitSession(t) // the connect request itself is accepted
			id := c.conn.SessionID()
			_, err := c.conn.Create("/noauth", nil, 0, zk.WorldACL(zk.PermAll))
			if !authRequired(err) {
				t.Fatalf("create without credentials: %v, want code -124", err)
			}
			// The server drops the connection after refusing, but the
			// session lives on: the client gets it back.
			waitFor(t, 10*time.Second, "the connection to drop", func() bool { return c.count(zk.StateDisconnected) > 0 })
			waitFor(t, 10*time.Second, "the session back", func() bool { return c.count(zk.StateHasSession) >= 2 })
			if got := c.conn.SessionID(); got != id {
				t.Fatalf("session 0x%x became 0x%x", id, got)
			}
			if ok, _, err := admin.conn.Exists("/noauth"); err != nil || ok {
				t.Fatalf("refused create applied: %v, %v", ok, err)
			}
			// Reads are refused alike, on whichever connection the
			// client has by then.
			waitFor(t, 30*time.Second, "a read refused for want of credentials", func() bool {
				_, _, err := c.conn.Get("/tls")
				if err == nil {
					t.Fatal("read without credentials succeeded")
				}
				return authRequired(err)
			})
		})

		t.Run("digest ACL: other users get NoAuth, the superuser passes", func(t *testing.T) {
			owner := dialClient(t, e.Addrs(), e.Dialer(), []byte("owner:pw"))
			other := dialClient(t, e.Addrs(), e.Dialer(), []byte("other:pw"))
			owner.waitSession(t)
			other.waitSession(t)
			if _, err := owner.conn.Create("/owned", []byte("mine"), 0, zk.DigestACL(zk.PermAll, "owner", "pw")); err != nil {
				t.Fatal(err)
			}
			if _, _, err := other.conn.Get("/owned"); !errors.Is(err, zk.ErrNoAuth) {
				t.Fatalf("other user's read: %v, want ErrNoAuth", err)
			}
			if err := other.conn.Delete("/owned", -1); err != nil {
				// Delete needs DELETE on the parent, which is open.
				t.Fatalf("other user's delete: %v", err)
			}
			if _, err := owner.conn.Create("/owned", []byte("mine"), 0, zk.DigestACL(zk.PermAll, "owner", "pw")); err != nil {
				t.Fatal(err)
			}
			if _, err := owner.conn.Create("/owned/child", nil, 0, zk.DigestACL(zk.PermAll, "owner", "pw")); err != nil {
				t.Fatal(err)
			}
			if err := other.conn.Delete("/owned/child", -1); !errors.Is(err, zk.ErrNoAuth) {
				t.Fatalf("other user's delete under /owned: %v, want ErrNoAuth", err)
			}
			if b, _, err := admin.conn.Get("/owned"); err != nil || string(b) != "mine" {
				t.Fatalf("superuser's read: %q, %v", b, err)
			}
			if err := admin.conn.Delete("/owned/child", -1); err != nil {
				t.Fatalf("superuser's delete: %v", err)
			}
		})
	})
}

// TestSecurityOptionsAlone shows each option without the other. Both change
// only server settings, which do not depend on the backend, so one is
// enough.
func TestSecurityOptionsAlone(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real ZooKeeper ensemble")
	}
	t.Run("TLS without EnforceAuth serves clients without credentials", func(t *testing.T) {
		e := New(t, Config{Servers: 1, TLS: true, JavaHeap: "64m", Backend: quickBackend()})
		if e.SuperAuth() != nil {
			t.Fatal("superuser without EnforceAuth")
		}
		c := dialClient(t, e.Addrs(), e.Dialer(), nil)
		c.waitSession(t)
		if _, err := c.conn.Create("/open", nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("EnforceAuth without TLS", func(t *testing.T) {
		e := New(t, Config{Servers: 1, EnforceAuth: true, JavaHeap: "64m", Backend: quickBackend()})
		if e.ClientTLS() != nil {
			t.Fatal("ClientTLS without TLS")
		}
		if _, ok := e.TLSFiles(); ok {
			t.Fatal("TLSFiles without TLS")
		}
		if m, err := e.Mode(ctxT(t, time.Minute), 0); err != nil || m != ModeStandalone {
			t.Fatalf("mode %q, %v", m, err)
		}
		noauth := dialClient(t, e.Addrs(), e.Dialer(), nil)
		noauth.waitSession(t)
		// Even a ping is refused: an idle client loses its connection.
		waitFor(t, 10*time.Second, "the idle client's connection to drop", func() bool {
			return noauth.count(zk.StateDisconnected) > 0
		})
		waitFor(t, 30*time.Second, "a create refused for want of credentials", func() bool {
			_, err := noauth.conn.Create("/x", nil, 0, zk.WorldACL(zk.PermAll))
			if err == nil {
				t.Fatal("create without credentials succeeded")
			}
			return authRequired(err)
		})
		c := dialClient(t, e.Addrs(), e.Dialer(), []byte("u:p"))
		c.waitSession(t)
		if _, err := c.conn.Create("/x", []byte("v"), 0, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatal(err)
		}
		if b, _, err := c.conn.Get("/x"); err != nil || string(b) != "v" {
			t.Fatalf("get: %q, %v", b, err)
		}
	})
}

// TestSecurityUnit covers what needs no server.
func TestSecurityUnit(t *testing.T) {
	// go-zookeeper computes ZooKeeper's digest ids too.
	if got, want := digestID("super", "secret"), zk.DigestACL(zk.PermAll, "super", "secret")[0].ID; got != want {
		t.Errorf("digestID = %q, go-zookeeper says %q", got, want)
	}
	var e Ensemble
	if e.ClientTLS() != nil || e.SuperAuth() != nil {
		t.Error("security of an ensemble without options")
	}
	if _, ok := e.TLSFiles(); ok {
		t.Error("TLSFiles of an ensemble without TLS")
	}
	if p := e.securityProps("/d"); len(p) != 0 {
		t.Errorf("props without options: %q", p)
	}
	e.cfg = Config{TLS: true, EnforceAuth: true}
	e.superPassword = "pw"
	got := strings.Join(e.securityProps("/zk/tls"), " ")
	for _, w := range []string{
		"-Dzookeeper.serverCnxnFactory=org.apache.zookeeper.server.NettyServerCnxnFactory",
		"-Dzookeeper.ssl.keyStore.location=/zk/tls/keystore.p12",
		"-Dzookeeper.ssl.trustStore.location=/zk/tls/truststore.p12",
		"-Dzookeeper.ssl.clientAuth=none",
		"-Dzookeeper.enforce.auth.enabled=true",
		"-Dzookeeper.enforce.auth.schemes=digest",
		"-Dzookeeper.DigestAuthenticationProvider.superDigest=" + digestID("super", "pw"),
	} {
		if !strings.Contains(got, w) {
			t.Errorf("props %q lack %q", got, w)
		}
	}
}

// TestPKI: keytool makes the stores once per process. (That clients
// verify the servers' certificate is TestSecureEnsemble's.)
func TestPKI(t *testing.T) {
	if testing.Short() {
		t.Skip("runs keytool")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	began := time.Now()
	p, err := testPKI(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("PKI ready in %v", time.Since(began))
	if len(p.keyStore) == 0 || len(p.trustStore) == 0 || len(p.caPEM) == 0 {
		t.Fatal("empty store")
	}
	if q, _ := testPKI(ctx); q != p {
		t.Fatal("second call made a new PKI")
	}
}

// TestTLSFilesJavaClient: ZooKeeper's own Java client reaches a TLS
// ensemble with the settings TLSFiles documents.
func TestTLSFilesJavaClient(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real ZooKeeper ensemble")
	}
	java, err := exec.LookPath("java")
	if err != nil {
		t.Fatal(err)
	}
	cp, err := classPath(os.Getenv(EnvZooKeeperHome))
	if err != nil {
		t.Fatal(err)
	}
	if os.Getenv(EnvZooKeeperHome) == "" {
		cp += ":/usr/share/java/netty-codec.jar:/usr/share/java/netty-resolver.jar"
	}
	e := New(t, Config{Servers: 1, TLS: true, JavaHeap: "64m", Backend: quickBackend()})
	files, _ := e.TLSFiles()
	ctx := ctxT(t, 2*time.Minute)
	cmd := exec.CommandContext(ctx, java, "-Xmx64m",
		"-Dzookeeper.client.secure=true",
		"-Dzookeeper.clientCnxnSocket=org.apache.zookeeper.ClientCnxnSocketNetty",
		"-Dzookeeper.ssl.trustStore.location="+files.TrustStore,
		"-Dzookeeper.ssl.trustStore.password="+files.Password,
		"-Dzookeeper.ssl.protocol=TLSv1.3",
		"-Dzookeeper.ssl.enabledProtocols=TLSv1.3,TLSv1.2",
		"-cp", cp, "org.apache.zookeeper.ZooKeeperMain", "-server", e.Addrs()[0], "ls", "/")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "[zookeeper]") {
		t.Fatalf("Java client over TLS: %v\n%s", err, tail(string(out), 20))
	}
}
