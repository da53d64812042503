package testenv

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// TLSServerName is the DNS name in the servers' certificate (which also
// carries 127.0.0.1, ::1 and localhost). ClientTLS verifies servers against
// it, whatever address a client dials.
const TLSServerName = "zookeeper.testenv"

// The files of a TLS ensemble's PKI, in its TLS directory.
const (
	keyStoreFile   = "keystore.p12"
	trustStoreFile = "truststore.p12"
	caFile         = "ca.pem"
	// tlsPassword protects both stores. They hold a throwaway CA made for
	// this process and nothing else.
	tlsPassword = "testenv-secret"
)

// pki is a throwaway CA and the PKCS12 stores keytool made from it.
type pki struct {
	caPEM []byte
	pool  *x509.CertPool
	// keyStore holds the servers' key pair under alias "zookeeper" with
	// its certificate chain, and the CA as a trusted entry.
	keyStore []byte
	// trustStore holds the CA alone.
	trustStore []byte
}

var pkiCache struct {
	mu sync.Mutex
	p  *pki
}

// testPKI returns this process's PKI, making it on the first call that
// succeeds: five keytool runs, about 2 s on a loaded 2-core machine.
func testPKI(ctx context.Context) (*pki, error) {
	pkiCache.mu.Lock()
	defer pkiCache.mu.Unlock()
	if pkiCache.p != nil {
		return pkiCache.p, nil
	}
	p, err := makePKI(ctx)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrTLS, err)
	}
	pkiCache.p = p
	return p, nil
}

// makePKI makes the CA in Go, and the servers' key pair and both stores
// with keytool: keytool makes the key pair and a signing request, Go signs
// it with the CA, keytool imports the CA and the signed certificate.
func makePKI(ctx context.Context) (*pki, error) {
	keytool, err := findKeytool()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "zkrecipes-pki-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "zkrecipes testenv CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(30 * 24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, err
	}
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})

	ks, ts := filepath.Join(dir, keyStoreFile), filepath.Join(dir, trustStoreFile)
	kt := func(args ...string) ([]byte, error) {
		args = append([]string{"-J-XX:TieredStopAtLevel=1", "-J-XX:+UseSerialGC"}, args...)
		out, err := exec.CommandContext(ctx, keytool, args...).CombinedOutput()
		if err != nil {
			return nil, fmt.Errorf("keytool %s: %v: %s", args[2], err, strings.TrimSpace(string(out)))
		}
		return out, nil
	}
	store := func(path string) []string {
		return []string{"-keystore", path, "-storetype", "PKCS12", "-storepass", tlsPassword}
	}
	if _, err := kt(append([]string{"-genkeypair", "-alias", "zookeeper", "-keyalg", "EC", "-groupname", "secp256r1",
		"-dname", "CN=" + TLSServerName, "-validity", "30"}, store(ks)...)...); err != nil {
		return nil, err
	}
	csrFile := filepath.Join(dir, "server.csr")
	if _, err := kt(append([]string{"-certreq", "-alias", "zookeeper", "-file", csrFile}, store(ks)...)...); err != nil {
		return nil, err
	}
	certPEM, err := signCSR(csrFile, caCert, caKey, now)
	if err != nil {
		return nil, err
	}
	caPath, certPath := filepath.Join(dir, caFile), filepath.Join(dir, "server.pem")
	if err := os.WriteFile(caPath, caPEM, 0o644); err != nil {
		return nil, err
	}
	if err := os.WriteFile(certPath, certPEM, 0o644); err != nil {
		return nil, err
	}
	// The CA goes in first, so that keytool can chain the signed
	// certificate to it without asking.
	steps := [][]string{
		append([]string{"-importcert", "-alias", "ca", "-file", caPath, "-noprompt"}, store(ks)...),
		append([]string{"-importcert", "-alias", "zookeeper", "-file", certPath, "-noprompt"}, store(ks)...),
		append([]string{"-importcert", "-alias", "ca", "-file", caPath, "-noprompt"}, store(ts)...),
	}
	for _, s := range steps {
		if _, err := kt(s...); err != nil {
			return nil, err
		}
	}
	p := &pki{caPEM: caPEM, pool: x509.NewCertPool()}
	p.pool.AddCert(caCert)
	if p.keyStore, err = os.ReadFile(ks); err != nil {
		return nil, err
	}
	if p.trustStore, err = os.ReadFile(ts); err != nil {
		return nil, err
	}
	return p, nil
}

// signCSR issues the servers' certificate for the request in csrFile (PEM,
// as keytool -certreq writes it).
func signCSR(csrFile string, ca *x509.Certificate, caKey *ecdsa.PrivateKey, now time.Time) ([]byte, error) {
	b, err := os.ReadFile(csrFile)
	if err != nil {
		return nil, err
	}
	blk, _ := pem.Decode(b)
	if blk == nil {
		return nil, fmt.Errorf("no PEM block in keytool's signing request")
	}
	csr, err := x509.ParseCertificateRequest(blk.Bytes)
	if err != nil {
		return nil, err
	}
	if err := csr.CheckSignature(); err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      csr.Subject,
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(30 * 24 * time.Hour),
		DNSNames:     []string{TLSServerName, "localhost"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, csr.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), nil
}

// findKeytool looks for the JDK's keytool on PATH, then in $JAVA_HOME/bin.
func findKeytool() (string, error) {
	if p, err := exec.LookPath("keytool"); err == nil {
		return p, nil
	}
	if jh := os.Getenv("JAVA_HOME"); jh != "" {
		p := filepath.Join(jh, "bin", "keytool")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("no keytool on PATH or in $JAVA_HOME/bin (apt-get install openjdk-17-jre-headless)")
}
