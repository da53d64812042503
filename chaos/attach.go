package chaos

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"

	"github.com/zkrecipes/zkrecipes/testenv"
)

// AttachServers returns an ensemble for cfg.Servers, servers the suite did
// not start (testenv.Attach): proxies in front of them for the client
// faults, no server faults. With cfg.TLSCA every connection speaks TLS and
// checks the servers' certificates against that CA (and against the host
// each address names). It checks that every server answers srvr; the
// caller closes the ensemble, which leaves the servers alone.
func AttachServers(ctx context.Context, cfg Config) (*testenv.Ensemble, error) {
	if len(cfg.Servers) == 0 {
		return nil, fmt.Errorf("%w: no servers to attach to", ErrConfig)
	}
	var tc *tls.Config
	if cfg.TLSCA != "" {
		pem, err := os.ReadFile(cfg.TLSCA)
		if err != nil {
			return nil, fmt.Errorf("%w: TLS CA: %w", ErrConfig, err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%w: TLS CA %s holds no PEM certificate", ErrConfig, cfg.TLSCA)
		}
		tc = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	e, err := testenv.Attach(ctx, cfg.Servers, tc, cfg.Logger)
	if err != nil {
		return nil, fmt.Errorf("chaos: attach: %w", err)
	}
	return e, nil
}
