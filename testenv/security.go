package testenv

import (
	"context"
	"crypto/rand"
	"crypto/sha1"
	"crypto/tls"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"path"
	"path/filepath"
	"time"
)

// SuperUser is the name of the superuser an EnforceAuth ensemble has.
const SuperUser = "super"

// TLSFiles locates a TLS ensemble's PKI on this host, for Java clients
// (Curator, zkCli): -Dzookeeper.client.secure=true,
// -Dzookeeper.clientCnxnSocket=org.apache.zookeeper.ClientCnxnSocketNetty,
// -Dzookeeper.ssl.trustStore.location=TrustStore and
// -Dzookeeper.ssl.trustStore.password=Password. With Debian's
// zookeeper.jar, such a client also needs /usr/share/java/netty-codec.jar
// and netty-resolver.jar on its class path. A 3.8 client (Debian 12's)
// against a 3.9.3 server also needs -Dzookeeper.ssl.protocol=TLSv1.3 and
// -Dzookeeper.ssl.enabledProtocols=TLSv1.3,TLSv1.2: by default it offers
// only TLSv1.2, which that server refuses (protocol_version alert). The
// files go away with the ensemble.
type TLSFiles struct {
	Dir        string
	TrustStore string // PKCS12, the CA alone
	KeyStore   string // PKCS12, the servers' key and certificate chain
	CA         string // the CA certificate, PEM
	Password   string // of both stores
}

// setupSecurity prepares what cfg.TLS and cfg.EnforceAuth need before the
// servers start: the PKI, its files in a directory of this host (removed
// by Close, or by Reap after a crash), and the superuser's password.
func (e *Ensemble) setupSecurity(ctx context.Context) error {
	if e.cfg.EnforceAuth {
		b := make([]byte, 16)
		if _, err := rand.Read(b); err != nil {
			return err
		}
		e.superPassword = hex.EncodeToString(b)
	}
	if !e.cfg.TLS {
		return nil
	}
	p, err := testPKI(ctx)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", processDirPrefix+e.id+"-tls-")
	if err != nil {
		return err
	}
	e.tlsDir = dir
	for name, b := range map[string][]byte{
		"owner": []byte(ownerLabel()), keyStoreFile: p.keyStore, trustStoreFile: p.trustStore, caFile: p.caPEM,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return err
		}
	}
	e.pki = p
	return nil
}

// securityProps are the Java system properties that TLS and EnforceAuth
// add, with the stores in tlsDir as the server sees it.
func (e *Ensemble) securityProps(tlsDir string) []string {
	var props []string
	if e.cfg.TLS {
		props = append(props,
			"-Dzookeeper.serverCnxnFactory=org.apache.zookeeper.server.NettyServerCnxnFactory",
			"-Dzookeeper.ssl.keyStore.location="+path.Join(tlsDir, keyStoreFile),
			"-Dzookeeper.ssl.keyStore.password="+tlsPassword,
			"-Dzookeeper.ssl.keyStore.type=PKCS12",
			"-Dzookeeper.ssl.trustStore.location="+path.Join(tlsDir, trustStoreFile),
			"-Dzookeeper.ssl.trustStore.password="+tlsPassword,
			"-Dzookeeper.ssl.trustStore.type=PKCS12",
			"-Dzookeeper.ssl.clientAuth=none")
	}
	if e.cfg.EnforceAuth {
		props = append(props,
			"-Dzookeeper.enforce.auth.enabled=true",
			"-Dzookeeper.enforce.auth.schemes=digest",
			"-Dzookeeper.DigestAuthenticationProvider.superDigest="+digestID(SuperUser, e.superPassword))
	}
	return props
}

// digestID is the id ZooKeeper's digest scheme gives user with password:
// user:base64(sha1(user:password)).
func digestID(user, password string) string {
	h := sha1.Sum([]byte(user + ":" + password))
	return user + ":" + base64.StdEncoding.EncodeToString(h[:])
}

// ClientTLS returns a new TLS configuration for clients of a TLS ensemble:
// it trusts the ensemble's CA alone and verifies the servers' certificate
// against TLSServerName, so it works for every address clients dial
// (Addrs, a Link's, DirectAddrs). It has no client certificate: the
// servers ask for none. For an ensemble of Attach, a clone of the
// configuration given there. Nil when Config.TLS is unset.
func (e *Ensemble) ClientTLS() *tls.Config {
	if e.extTLS != nil {
		return e.extTLS.Clone()
	}
	if e.pki == nil {
		return nil
	}
	return &tls.Config{RootCAs: e.pki.pool, ServerName: TLSServerName, MinVersion: tls.VersionTLS12}
}

// Dialer returns a dialer for go-zookeeper's zk.WithDialer: TLS with
// ClientTLS (dial and handshake within timeout) on a TLS ensemble, plain
// TCP otherwise.
func (e *Ensemble) Dialer() func(network, address string, timeout time.Duration) (net.Conn, error) {
	tc := e.ClientTLS()
	return func(network, address string, timeout time.Duration) (net.Conn, error) {
		nd := &net.Dialer{Timeout: timeout}
		if tc == nil {
			return nd.Dial(network, address)
		}
		return (&tls.Dialer{NetDialer: nd, Config: tc}).Dial(network, address)
	}
}

// TLSFiles returns where the PKI of a TLS ensemble is on this host, and
// false when Config.TLS is unset.
func (e *Ensemble) TLSFiles() (TLSFiles, bool) {
	if e.tlsDir == "" {
		return TLSFiles{}, false
	}
	return TLSFiles{
		Dir:        e.tlsDir,
		TrustStore: filepath.Join(e.tlsDir, trustStoreFile),
		KeyStore:   filepath.Join(e.tlsDir, keyStoreFile),
		CA:         filepath.Join(e.tlsDir, caFile),
		Password:   tlsPassword,
	}, true
}

// SuperAuth returns the superuser's credentials for conn.AddAuth("digest",
// ...) ("super:<password>", a password made for this ensemble), or nil
// when Config.EnforceAuth is unset. A superuser passes every ACL check.
func (e *Ensemble) SuperAuth() []byte {
	if e.superPassword == "" {
		return nil
	}
	return []byte(SuperUser + ":" + e.superPassword)
}

// FourLetter sends a four-letter word to server i directly (over TLS on a
// TLS ensemble) and returns the whole answer. Cost: one connection,
// bounded by ctx and 3 s.
func (e *Ensemble) FourLetter(ctx context.Context, i int, word string) (string, error) {
	if _, err := pick(e.cfg.Servers, []int{i}); err != nil {
		return "", err
	}
	return fourLetter(ctx, e.b.clientAddr(i), word, e.ClientTLS())
}

// removeTLSDir removes the ensemble's PKI files.
func (e *Ensemble) removeTLSDir() error {
	if e.tlsDir == "" {
		return nil
	}
	if err := os.RemoveAll(e.tlsDir); err != nil {
		return fmt.Errorf("remove %s: %w", e.tlsDir, err)
	}
	return nil
}
