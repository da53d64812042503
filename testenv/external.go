package testenv

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/google/uuid"
	"github.com/rs/zerolog"
	zlog "github.com/rs/zerolog/log"
)

// BackendExternal names the servers of an ensemble that testenv did not
// start (Attach): it reaches them, and puts links in front of them, but
// cannot kill, stop, pause or isolate them.
const BackendExternal Backend = "external"

// Attach returns an Ensemble for ZooKeeper servers that run elsewhere,
// given by their client addresses ("host:port"), in the order that server
// indexes follow. Its links (the default link and NewLink's) are
// in-process Toxiproxy proxies in front of those addresses, so every link
// fault works on the clients that connect through them, as on an ensemble
// testenv started; every server fault (Kill, Stop, StartServer, Pause,
// Resume, Isolate, Rejoin) returns ErrUnsupported. Close closes the links
// and leaves the servers alone.
//
// tc, when not nil, is the TLS configuration the servers' client ports
// need (ClientTLS and Dialer return it; CutAfterNextFrame then cuts after
// TLS records, as on a TLS ensemble). The servers must answer the
// four-letter words srvr (Mode, Leader, WaitQuorum), cons and dump
// (Link.ExpireSession waits on the leader's dump): ZooKeeper's
// 4lw.commands.whitelist must list them. Attach checks srvr on every
// server (one connection each, bounded by ctx and 3 s) and fails with
// ErrConfig and the server's answer when one does not serve.
func Attach(ctx context.Context, servers []string, tc *tls.Config, logger *slog.Logger) (*Ensemble, error) {
	if len(servers) == 0 {
		return nil, fmt.Errorf("%w: no servers to attach to", ErrConfig)
	}
	for _, s := range servers {
		if _, _, err := net.SplitHostPort(s); err != nil {
			return nil, fmt.Errorf("%w: server %q: %v", ErrConfig, s, err)
		}
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	quietToxics.Do(func() { zlog.Logger = zerolog.Nop() })
	cfg := Config{Servers: len(servers), Backend: BackendExternal, TLS: tc != nil, Logger: logger}
	e := &Ensemble{
		cfg:     cfg,
		id:      uuid.NewString()[:8],
		backend: BackendExternal,
		state:   make([]serverState, len(servers)),
		tp:      toxiproxy.NewServer(toxiproxy.NewMetricsContainer(nil), zerolog.Nop()),
		b:       externalBackend(append([]string(nil), servers...)),
	}
	if tc != nil {
		e.extTLS = tc.Clone()
	}
	for i := range servers {
		if _, err := e.Mode(ctx, i); err != nil {
			return nil, fmt.Errorf("%w: server %d (%s) does not serve or refuses srvr: %v", ErrConfig, i, servers[i], err)
		}
	}
	l, err := newLink(e, "default", e.DirectAddrs())
	if err != nil {
		return nil, err
	}
	e.Link = l
	logger.Info("testenv: attached to external servers", "id", e.id, "servers", servers, "tls", tc != nil)
	return e, nil
}

// externalBackend is the backend of Attach: the servers' addresses and
// nothing to act on them with.
type externalBackend []string

func (b externalBackend) start(context.Context) error { return nil }
func (b externalBackend) clientAddr(i int) string     { return b[i] }
func (b externalBackend) kill(context.Context, int) error {
	return fmt.Errorf("%w: kill", errExternal)
}
func (b externalBackend) stop(context.Context, int) error {
	return fmt.Errorf("%w: stop", errExternal)
}
func (b externalBackend) startServer(context.Context, int) error {
	return fmt.Errorf("%w: start", errExternal)
}
func (b externalBackend) pause(context.Context, int) error {
	return fmt.Errorf("%w: pause", errExternal)
}
func (b externalBackend) resume(context.Context, int) error {
	return fmt.Errorf("%w: resume", errExternal)
}
func (b externalBackend) isolate(context.Context, int, Direction) error {
	return fmt.Errorf("%w: isolate", errExternal)
}
func (b externalBackend) rejoin(context.Context, int) error {
	return fmt.Errorf("%w: rejoin", errExternal)
}
func (b externalBackend) exited(context.Context, int) bool { return false }
func (b externalBackend) logs(context.Context, int) string {
	return "(an external server: its log is not here)"
}
func (b externalBackend) close(context.Context) error { return nil }

// errExternal wraps ErrUnsupported for the server faults of Attach.
var errExternal = fmt.Errorf("%w: the servers were not started by testenv", ErrUnsupported)
