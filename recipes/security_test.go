package recipes

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"net"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

const testPassword = "s3cret-Pa55"

// TestOptionValidation: invalid security options make Connect fail with
// ErrBadArgument before anything is dialed.
func TestOptionValidation(t *testing.T) {
	var dials atomic.Int32
	dialer := WithDialer(func(string, string, time.Duration) (net.Conn, error) {
		dials.Add(1)
		return nil, errors.New("no dialing in this test")
	})
	for _, tc := range []struct {
		name string
		opt  Option
	}{
		{"nil tls config", WithTLS(nil)},
		{"empty user", WithDigestAuth("", testPassword)},
		{"user with a colon", WithDigestAuth("a:b", testPassword)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			s, err := Connect(ctx, []string{"127.0.0.1:1"}, dialer, tc.opt)
			if s != nil || !errors.Is(err, ErrBadArgument) {
				t.Fatalf("Connect = %v, %v; want ErrBadArgument", s, err)
			}
			if strings.Contains(err.Error(), testPassword) {
				t.Fatalf("error shows the password: %v", err)
			}
		})
	}
	if n := dials.Load(); n != 0 {
		t.Fatalf("%d dials", n)
	}
	// Valid ones pass: an empty password is the server's business.
	if _, err := buildOptions([]Option{WithDigestAuth("a", ""), WithTLS(&tls.Config{}), WithACLProvider(nil)}); err != nil {
		t.Fatal(err)
	}
}

// TestDigestAuthOverLimit: credentials whose setAuth request is larger
// than the session's request limit (WithMaxData, in either order) make
// Connect fail with ErrDataTooLarge and ErrBadArgument before anything is
// dialed; a setAuth of exactly the limit passes. Before, Connect sent it,
// the server dropped the connection, and go-zookeeper sent it again on
// every new connection.
func TestDigestAuthOverLimit(t *testing.T) {
	// setAuth: header 8, type 4, "digest" 4+6, "user:password" 4+n.
	const fixed = 8 + 4 + 10 + 4
	big := strings.Repeat("x", 1100*1024) // 1.1 MiB
	for _, tc := range []struct {
		name string
		opts []Option
		ok   bool
	}{
		{"1.1 MiB user", []Option{WithDigestAuth(big, testPassword)}, false},
		{"1.1 MiB password", []Option{WithDigestAuth("alice", big)}, false},
		{"one byte over the default limit", []Option{WithDigestAuth("a", strings.Repeat("p", DefaultMaxData-fixed-2+1))}, false},
		{"at the default limit", []Option{WithDigestAuth("a", strings.Repeat("p", DefaultMaxData-fixed-2))}, true},
		{"over WithMaxData, set after", []Option{WithDigestAuth("alice", strings.Repeat("p", 100)), WithMaxData(100)}, false},
		{"over WithMaxData, set before", []Option{WithMaxData(100), WithDigestAuth("alice", strings.Repeat("p", 100))}, false},
		{"the second identity over", []Option{WithDigestAuth("alice", "p"), WithDigestAuth("bob", big)}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := buildOptions(tc.opts)
			if tc.ok {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, ErrDataTooLarge) || !errors.Is(err, ErrBadArgument) {
				t.Fatalf("buildOptions = %v; want ErrDataTooLarge and ErrBadArgument", err)
			}
			if len(err.Error()) > 300 || strings.Contains(err.Error(), testPassword) {
				t.Fatalf("error shows the credentials: %.300s", err)
			}
		})
	}
	var dials atomic.Int32
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s, err := Connect(ctx, []string{"127.0.0.1:1"}, WithDigestAuth("alice", big), WithDialer(func(string, string, time.Duration) (net.Conn, error) {
		dials.Add(1)
		return nil, errors.New("no dialing in this test")
	}))
	if s != nil || !errors.Is(err, ErrDataTooLarge) || dials.Load() != 0 {
		t.Fatalf("Connect = %v, %v after %d dials; want ErrDataTooLarge, no dial", s, err, dials.Load())
	}
}

// TestACLForDefaults: the ACL of a created node by option set and path.
func TestACLForDefaults(t *testing.T) {
	world := zk.WorldACL(zk.PermAll)
	secure := []zk.ACL{{Perms: zk.PermAll, Scheme: "auth", ID: ""}, {Perms: zk.PermRead, Scheme: "world", ID: "anyone"}}
	mine := zk.DigestACL(zk.PermAll, "ops", "pw")
	special := zk.WorldACL(zk.PermRead | zk.PermCreate)
	prov := ACLProviderFunc(func(p string) []zk.ACL {
		if strings.HasPrefix(p, "/special/") {
			return special
		}
		return nil
	})
	for _, tc := range []struct {
		name string
		opts []Option
		path string
		want []zk.ACL
	}{
		{"no options", nil, "/a", world},
		{"digest auth", []Option{WithDigestAuth("a", "pa")}, "/a", secure},
		{"digest auth, empty WithACL", []Option{WithDigestAuth("a", "pa"), WithACL(nil)}, "/a", secure},
		{"digest auth and WithACL", []Option{WithDigestAuth("a", "pa"), WithACL(mine)}, "/a", mine},
		{"WithACL before auth", []Option{WithACL(mine), WithDigestAuth("a", "pa")}, "/a", mine},
		{"WithACL alone", []Option{WithACL(mine)}, "/a", mine},
		{"provider answers", []Option{WithACLProvider(prov)}, "/special/x", special},
		{"provider silent", []Option{WithACLProvider(prov)}, "/a", world},
		{"provider silent, digest auth", []Option{WithACLProvider(prov), WithDigestAuth("a", "pa")}, "/a", secure},
		{"provider answers, digest auth", []Option{WithACLProvider(prov), WithDigestAuth("a", "pa")}, "/special/x", special},
		{"provider silent, WithACL", []Option{WithACLProvider(prov), WithACL(mine)}, "/a", mine},
		{"nil provider", []Option{WithACLProvider(nil), WithDigestAuth("a", "pa")}, "/special/x", secure},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, err := buildOptions(tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			s := &Session{opts: o}
			if got := s.ACLFor(tc.path); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("ACLFor(%s) = %v, want %v", tc.path, got, tc.want)
			}
			if !strings.HasPrefix(tc.path, "/special/") || tc.opts == nil {
				if got := s.ACL(); !reflect.DeepEqual(got, tc.want) {
					t.Fatalf("ACL() = %v, want %v", got, tc.want)
				}
			}
		})
	}
	if got := DefaultAuthACL(); !reflect.DeepEqual(got, secure) {
		t.Fatalf("DefaultAuthACL = %v", got)
	}
	var nilSession *Session
	if nilSession.ACLFor("/a") != nil || nilSession.ACL() != nil {
		t.Fatal("nil Session has an ACL")
	}
	// WithACL copies its argument when called.
	acl := zk.WorldACL(zk.PermRead)
	opt := WithACL(acl)
	acl[0].Perms = zk.PermAll
	o, _ := buildOptions([]Option{opt})
	if o.acl[0].Perms != zk.PermRead {
		t.Fatal("WithACL kept the caller's slice")
	}
}

// TestServerErr: the server's NoAuth gains ErrNoAuth and keeps
// zk.ErrNoAuth; other errors pass unchanged.
func TestServerErr(t *testing.T) {
	for _, err := range []error{zk.ErrNoAuth, fmt.Errorf("op /a: %w", zk.ErrNoAuth), fmt.Errorf("x: %w", ErrNoAuth)} {
		got := serverErr(err)
		if !errors.Is(got, ErrNoAuth) || !errors.Is(got, zk.ErrNoAuth) {
			t.Errorf("serverErr(%v) = %v: want ErrNoAuth and zk.ErrNoAuth", err, got)
		}
		if w := fmt.Errorf("recipes: create /a: %w", got); !errors.Is(w, ErrNoAuth) || !errors.Is(w, zk.ErrNoAuth) {
			t.Errorf("wrapped %v loses a sentinel", w)
		}
	}
	if got := serverErr(fmt.Errorf("op /a: %w", zk.ErrNoAuth)); got.Error() != "op /a: zk: not authenticated" {
		t.Errorf("message changed: %q", got.Error())
	}
	for _, err := range []error{nil, zk.ErrNoNode, zk.ErrAuthFailed, context.Canceled} {
		if got := serverErr(err); got != err {
			t.Errorf("serverErr(%v) = %v", err, got)
		}
	}
	if !errors.Is(ErrAuthFailed, zk.ErrAuthFailed) || errors.Is(ErrNoAuth, zk.ErrAuthFailed) {
		t.Error("sentinel chains")
	}
}

// TestServerErrAuthRequired: go-zookeeper v1.0.4's report of error code
// -124 (built here as it builds it), bare or wrapped, gains ErrNoAuth and
// zk.ErrNoAuth and keeps its message; other unknown codes pass unchanged.
func TestServerErrAuthRequired(t *testing.T) {
	code := fmt.Errorf("unknown error: %v", zk.ErrCode(-124))
	for _, err := range []error{code, fmt.Errorf("op /a: %w", code), errors.Join(zk.ErrNoNode, code)} {
		got := serverErr(err)
		if !errors.Is(got, ErrNoAuth) || !errors.Is(got, zk.ErrNoAuth) || !errors.Is(got, err) {
			t.Errorf("serverErr(%v) = %v: want ErrNoAuth, zk.ErrNoAuth and the original", err, got)
		}
		if got.Error() != err.Error() {
			t.Errorf("message changed: %q", got.Error())
		}
	}
	for _, err := range []error{fmt.Errorf("unknown error: %v", zk.ErrCode(-125)), errors.New("unknown error: -1240"), errors.New("x: unknown error: -124")} {
		if got := serverErr(err); got != err {
			t.Errorf("serverErr(%v) = %v", err, got)
		}
	}
}

// logBuffer is a debug-level text logger writing to a buffer.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func (b *logBuffer) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// TestOptionsRedacted: neither fmt nor slog shows a password or a digest
// hash, whatever the verb or handler, while the rest is shown.
func TestOptionsRedacted(t *testing.T) {
	hashACL := zk.DigestACL(zk.PermAll, "ops", testPassword)
	o, err := buildOptions([]Option{WithDigestAuth("alice", testPassword), WithTLS(&tls.Config{ServerName: "zk.example"}), WithACL(hashACL)})
	if err != nil {
		t.Fatal(err)
	}
	_, hash, _ := strings.Cut(hashACL[0].ID, ":")
	s := &Session{opts: o}
	var out []string
	for _, v := range []any{o, &o, o.auth[0], s} {
		for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x"} {
			out = append(out, fmt.Sprintf(verb, v))
		}
	}
	var b logBuffer
	jb := &logBuffer{}
	for _, l := range []*slog.Logger{b.logger(), slog.New(slog.NewJSONHandler(jb, nil))} {
		l.Info("options", "options", o, "session", s, "auth", o.auth[0])
	}
	out = append(out, b.String(), jb.String(), o.String())
	for _, x := range out {
		if strings.Contains(x, testPassword) || strings.Contains(x, hash) {
			t.Fatalf("secret shown: %s", x)
		}
	}
	for _, want := range []string{"alice", "zk.example", "digest:ops:[REDACTED]:cdrwa", "tls=true"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("log lacks %q: %s", want, b.String())
		}
	}
}

// TestDigestAuthSentAndResent: Connect adds the credentials before it
// returns; after the connection drops, go-zookeeper sends them again on the
// new connection before any other request; no log line shows the password.
func TestDigestAuthSentAndResent(t *testing.T) {
	f := newFakeZK(t, nil)
	var logs logBuffer
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s, err := Connect(ctx, []string{f.addr()}, WithSessionTimeout(3*time.Second), WithLogger(logs.logger()), WithDigestAuth("alice", testPassword))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	want := fakeReq{op: opSetAuth, scheme: "digest", auth: "alice:" + testPassword}
	if r := f.requests(); len(r) != 1 || len(r[0]) != 1 || r[0][0] != want {
		t.Fatalf("requests before Connect returned: %+v", r)
	}
	f.drop()
	// A request after the drop goes out on the new connection, after the
	// credentials.
	deadline := time.Now().Add(15 * time.Second)
	for {
		ok, _, err := s.Conn().Exists("/x")
		if err == nil && !ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("exists after reconnection: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	r := f.requests()
	last := r[len(r)-1]
	if len(r) < 2 || len(last) < 2 || last[0] != want || last[len(last)-1].op == opSetAuth {
		t.Fatalf("requests per connection: %+v", r)
	}
	if s.ID() != fakeSessionID {
		t.Fatalf("session 0x%x", s.ID())
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	text := logs.String()
	if strings.Contains(text, testPassword) {
		t.Fatalf("log shows the password:\n%s", text)
	}
	for _, w := range []string{"alice", "recipes: connect", "state=suspended"} {
		if !strings.Contains(text, w) {
			t.Errorf("log lacks %q (is it captured?):\n%s", w, text)
		}
	}
	for _, verb := range []string{"%v", "%+v", "%#v"} {
		if x := fmt.Sprintf(verb, s); strings.Contains(x, testPassword) {
			t.Fatalf("%s of the Session shows the password: %s", verb, x)
		}
	}
}

// TestDigestAuthRefused: a refusal of the credentials fails Connect with
// ErrAuthFailed and the server's answer, without the password.
func TestDigestAuthRefused(t *testing.T) {
	f := newFakeZK(t, nil)
	f.authErr = -115 // AUTHFAILED
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var logs logBuffer
	s, err := Connect(ctx, []string{f.addr()}, WithLogger(logs.logger()), WithDigestAuth("alice", testPassword))
	if s != nil || !errors.Is(err, ErrAuthFailed) || !errors.Is(err, zk.ErrAuthFailed) {
		t.Fatalf("Connect = %v, %v; want ErrAuthFailed", s, err)
	}
	if strings.Contains(err.Error(), testPassword) || !strings.Contains(err.Error(), "alice") {
		t.Fatalf("error: %v", err)
	}
	if strings.Contains(logs.String(), testPassword) {
		t.Fatalf("log shows the password:\n%s", logs.String())
	}
}

// testCert returns a self-signed certificate for the DNS name "localhost"
// only (no IP address), and a pool trusting it.
func testCert(t *testing.T) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "localhost"},
		DNSNames:              []string{"localhost"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA:                  true,
		BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, pool
}

// rawRecorder is a WithDialer function that records the addresses it dials
// and the first byte written on each connection.
type rawRecorder struct {
	mu    sync.Mutex
	addrs []string
	first []byte
}

func (r *rawRecorder) dial(network, address string, timeout time.Duration) (net.Conn, error) {
	r.mu.Lock()
	r.addrs = append(r.addrs, address)
	r.mu.Unlock()
	c, err := net.DialTimeout(network, address, timeout)
	if err != nil {
		return nil, err
	}
	return &firstByteConn{Conn: c, r: r}, nil
}

type firstByteConn struct {
	net.Conn
	r    *rawRecorder
	once sync.Once
}

func (c *firstByteConn) Write(b []byte) (int, error) {
	if len(b) > 0 {
		c.once.Do(func() {
			c.r.mu.Lock()
			c.r.first = append(c.r.first, b[0])
			c.r.mu.Unlock()
		})
	}
	return c.Conn.Write(b)
}

// TestTLS: a Session WithTLS and WithDialer connects to a TLS server by
// name: the certificate, valid for "localhost" only, is checked against
// the server entry as written (the dialer is handed "localhost:port", not
// an IP address); the dialer carries TLS records (its first byte is a
// handshake record's, 0x16); the tap still reads ZooKeeper's frames (it
// learnt the negotiated timeout from the connect response); and changes
// to the config after WithTLS do not reach the Session.
func TestTLS(t *testing.T) {
	cert, pool := testCert(t)
	f := newFakeZK(t, &tls.Config{Certificates: []tls.Certificate{cert}})
	rec := &rawRecorder{}
	cfg := &tls.Config{RootCAs: pool}
	opts := []Option{WithTLS(cfg), WithDialer(rec.dial), WithDigestAuth("alice", testPassword)}
	cfg.ServerName = "changed.after.WithTLS"
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s, err := Connect(ctx, []string{"localhost:" + f.port()}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := s.NegotiatedTimeout(); got != time.Duration(f.timeout)*time.Millisecond {
		t.Errorf("negotiated timeout %v: the tap did not read the connect response", got)
	}
	if r := f.requests(); len(r) != 1 || len(r[0]) != 1 || r[0][0].auth != "alice:"+testPassword {
		t.Errorf("requests: %+v", r)
	}
	rec.mu.Lock()
	addrs, first := rec.addrs, rec.first
	rec.mu.Unlock()
	if len(addrs) != 1 || addrs[0] != "localhost:"+f.port() || len(first) != 1 || first[0] != 0x16 {
		t.Errorf("dialer saw %q, first bytes %x", addrs, first)
	}
}

// TestTLSWrongName: a certificate that does not match ServerName is
// refused; Connect fails when its ctx ends, and go-zookeeper's log says
// why.
func TestTLSWrongName(t *testing.T) {
	cert, pool := testCert(t)
	f := newFakeZK(t, &tls.Config{Certificates: []tls.Certificate{cert}})
	var logs logBuffer
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	s, err := Connect(ctx, []string{"localhost:" + f.port()}, WithLogger(logs.logger()), WithTLS(&tls.Config{RootCAs: pool, ServerName: "other.example"}))
	if s != nil || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Connect = %v, %v", s, err)
	}
	if !strings.Contains(logs.String(), "certificate") {
		t.Errorf("log does not say why:\n%s", logs.String())
	}
	if r := f.requests(); len(r) > 0 && len(r[0]) > 0 {
		t.Errorf("requests reached the server: %+v", r)
	}
}

// TestTLSHandshakeBounded: a server that accepts and never answers the
// handshake makes the dial fail after its timeout.
func TestTLSHandshakeBounded(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		// Read the client hello and answer nothing, until the client
		// gives up and closes.
		for b := make([]byte, 1<<16); ; {
			if _, err := c.Read(b); err != nil {
				return
			}
		}
	}()
	dial := tlsDialer(nil, &tls.Config{})
	start := time.Now()
	c, err := dial("tcp", ln.Addr().String(), 200*time.Millisecond)
	if err == nil {
		c.Close()
		t.Fatal("handshake succeeded")
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("dial took %v", d)
	}
	<-done // the dial closed its connection
}

// TestNameProvider: the entries as written, in turn; retryStart after a
// round without a connection.
func TestNameProvider(t *testing.T) {
	p := &nameProvider{}
	if err := p.Init([]string{"a:1", "b:2"}); err != nil || p.Len() != 2 {
		t.Fatal(err)
	}
	var got []string
	var retry []bool
	for i := 0; i < 5; i++ {
		s, r := p.Next()
		got = append(got, s)
		retry = append(retry, r)
		if i == 2 {
			p.Connected() // connected to "a:1"
		}
	}
	if want := []string{"a:1", "b:2", "a:1", "b:2", "a:1"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("servers %v", got)
	}
	if want := []bool{false, false, true, false, true}; !reflect.DeepEqual(retry, want) {
		t.Fatalf("retryStart %v", retry)
	}
	if err := (&nameProvider{}).Init(nil); !errors.Is(err, ErrBadArgument) {
		t.Fatal(err)
	}
}
