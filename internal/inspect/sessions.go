package inspect

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

	"github.com/zkrecipes/zkrecipes/internal/zkpath"
)

// "Nodes of sessions that no longer exist", as this package finds them.
//
// ZooKeeper deletes a session's ephemeral nodes in the same transaction that
// closes or expires the session, so no ephemeral node outlives its session.
// What an operator looks for is one of:
//
//   - an ephemeral node whose owner session is connected to no server: its
//     client died or is cut off, and the node (a lock holder, a queue
//     claim, a leader) lasts until the server expires the session, up to
//     the negotiated timeout later. Found with the "cons" four-letter word
//     on every server of the connect string (a session is connected to one
//     server at most); Node.Live is false for such a node, and it is listed
//     in Report.Stale. Needs "cons" in 4lw.commands.whitelist and every
//     server listed; otherwise Report.Sessions says why liveness is unknown.
//   - persistent recipe nodes a dead session left half done: a double
//     barrier's "ready" with no member left, a queue claim on an item that
//     is no longer queued, a twophase site of an undecided transaction with
//     neither a liveness node nor a vote.

// ConnectedSessions asks every server for "cons" and returns the ids of the
// sessions connected to any of them. It fails, wrapping ErrFourLetter, if
// any server does not answer with a connection list: with one server
// missing, a session connected there would look disconnected. tlsCfg, when
// not nil, dials the servers over TLS (their secure client port). Cost: one
// TCP connection per server, bounded by ctx and 5 s each.
func ConnectedSessions(ctx context.Context, servers []string, tlsCfg *tls.Config) (map[int64]bool, error) {
	out := map[int64]bool{}
	for _, addr := range servers {
		text, err := fourLetter(ctx, addr, "cons", tlsCfg)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrFourLetter, addr, err)
		}
		ids, ok := ParseCons(text)
		if !ok {
			return nil, fmt.Errorf("%w: %s answered %q", ErrFourLetter, addr, firstLine(text))
		}
		for id := range ids {
			out[id] = true
		}
	}
	return out, nil
}

// ParseCons parses the answer to "cons": one line per connection, those of
// sessions carrying "sid=0x<hex>". ok is false when the text is not a
// connection list (a refusal such as "cons is not executed because it is
// not in the whitelist."). Pure.
func ParseCons(text string) (ids map[int64]bool, ok bool) {
	ids = map[int64]bool{}
	sc := bufio.NewScanner(strings.NewReader(text))
	lines := 0
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		if !strings.HasPrefix(line, "/") && !strings.HasPrefix(line, "[") {
			return nil, false
		}
		lines++
		_, rest, found := strings.Cut(line, "sid=0x")
		if !found {
			continue
		}
		hex, _, _ := strings.Cut(rest, ",")
		hex, _, _ = strings.Cut(hex, ")")
		v, err := strconv.ParseUint(hex, 16, 64)
		if err != nil {
			return nil, false
		}
		ids[int64(v)] = true
	}
	return ids, lines > 0
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return l
}

// fourLetter sends word to addr and reads the answer until the server
// closes the connection.
func fourLetter(ctx context.Context, addr, word string, tlsCfg *tls.Config) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return "", err
	}
	defer c.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = c.SetDeadline(dl)
	}
	if tlsCfg != nil {
		cfg := tlsCfg.Clone()
		if cfg.ServerName == "" {
			cfg.ServerName, _, _ = net.SplitHostPort(addr)
		}
		tc := tls.Client(c, cfg)
		if err := tc.HandshakeContext(ctx); err != nil {
			return "", err
		}
		c = tc
	}
	if _, err := io.WriteString(c, word); err != nil {
		return "", err
	}
	b, err := io.ReadAll(io.LimitReader(c, 16<<20))
	if err != nil && len(b) == 0 {
		return "", err
	}
	return string(b), nil
}

// findDisconnected lists, in rep.Stale, the ephemeral nodes shown whose
// owner session is connected to no server.
func (in *inspector) findDisconnected(rep *Report) {
	if in.o.Connected == nil {
		return
	}
	lists := [][]Node{rep.Contenders, rep.Leases, rep.Claims, rep.Members}
	for _, l := range lists {
		for _, n := range l {
			if n.Live != nil && !*n.Live {
				rep.Stale = append(rep.Stale, Finding{Path: n.Path,
					Why: "owner session " + n.Session + " is connected to no server: it lasts until that session expires"})
			}
		}
	}
}

// base returns the last segment of a path.
func base(p string) string {
	_, name := zkpath.Split(p)
	return name
}
