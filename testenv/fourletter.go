package testenv

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"
)

// Server modes as the srvr four-letter word reports them.
const (
	ModeLeader     = "leader"
	ModeFollower   = "follower"
	ModeStandalone = "standalone"
	ModeObserver   = "observer"
)

// FourLetter sends a four-letter word ("wchs", "cons", ...) to a server's
// client address (Ensemble.DirectAddrs) and returns the whole answer. The
// servers' zoo.cfg allows every word. Cost: one TCP connection, bounded by
// ctx and 3 s. It speaks plain TCP; on a TLS ensemble use
// Ensemble.FourLetter.
func FourLetter(ctx context.Context, addr, word string) (string, error) {
	return fourLetter(ctx, addr, word, nil)
}

// fourLetter sends a four-letter word to addr, over TLS with tc unless tc
// is nil, and returns the whole answer.
func fourLetter(ctx context.Context, addr, word string, tc *tls.Config) (string, error) {
	nd := &net.Dialer{Timeout: 2 * time.Second}
	var conn net.Conn
	var err error
	if tc != nil {
		conn, err = (&tls.Dialer{NetDialer: nd, Config: tc}).DialContext(ctx, "tcp", addr)
	} else {
		conn, err = nd.DialContext(ctx, "tcp", addr)
	}
	if err != nil {
		return "", err
	}
	defer conn.Close()
	deadline := time.Now().Add(3 * time.Second)
	if dl, ok := ctx.Deadline(); ok && dl.Before(deadline) {
		deadline = dl
	}
	_ = conn.SetDeadline(deadline)
	if _, err := io.WriteString(conn, word); err != nil {
		return "", err
	}
	out, err := io.ReadAll(conn)
	if err != nil {
		return "", err
	}
	return string(out), nil
}

// parseMode returns the Mode line of a srvr answer. A server that is up but
// not serving answers "This ZooKeeper instance is not currently serving
// requests", which is reported as an error.
func parseMode(srvr string) (string, error) {
	sc := bufio.NewScanner(strings.NewReader(srvr))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "Mode: "); ok {
			return strings.TrimSpace(v), nil
		}
	}
	if strings.Contains(srvr, "not currently serving") {
		return "", ErrNotServing
	}
	return "", fmt.Errorf("testenv: no Mode in srvr answer %q", strings.TrimSpace(srvr))
}

// parseDumpSessions returns the session ids a leader's dump answer lists,
// whether under "Session Sets" (every live session, by expiry bucket) or
// under "Sessions with Ephemerals".
func parseDumpSessions(dump string) map[int64]bool {
	ids := make(map[int64]bool)
	sc := bufio.NewScanner(strings.NewReader(dump))
	for sc.Scan() {
		f := strings.TrimSpace(sc.Text())
		if !strings.HasPrefix(f, "0x") {
			continue
		}
		f = strings.Fields(f)[0]
		f = strings.TrimSuffix(f, ":")
		if id, err := strconv.ParseUint(f[2:], 16, 64); err == nil {
			ids[int64(id)] = true
		}
	}
	return ids
}
