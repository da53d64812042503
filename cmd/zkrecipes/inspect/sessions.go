package inspect

import (
	"bufio"
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

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
//     the negotiated timeout later. A session is connected to one server
//     at most, so this needs the "cons" four-letter word from every member
//     of the ensemble, not only from the servers the operator named: the
//     membership is learned from the ensemble itself (the dynamic
//     configuration in /zookeeper/config, else the "conf" word's
//     membership section), and "conf" tells which member answers at each
//     address. An owner is flagged only when every member answered, twice
//     (a session moving between servers shows up on one of them), and its
//     node was still there after. When a member was not asked, an owner no
//     server listed is "unknown", never disconnected.
//   - persistent recipe nodes a dead session left half done: a double
//     barrier's "ready" with no member left, a queue claim on an item that
//     is no longer queued, a twophase site of an undecided transaction with
//     neither a liveness node nor a vote.

// configPath is ZooKeeper's dynamic configuration node (readable by
// anyone; empty on a standalone server).
const configPath = "/zookeeper/config"

// Liveness is what the servers said about sessions (see Cover).
type Liveness struct {
	// Connected holds the sessions some server listed.
	Connected map[int64]bool
	// Known: every member of the ensemble answered "cons".
	Known bool
	// Members is the size of the membership (0: unknown); Asked how many
	// members answered.
	Members, Asked int
	// Why and Missing: as in SessionInfo.
	Why     string
	Missing []string
	// off: the check was not made (-cons=false).
	off bool
}

// Member is one server of the ensemble as its configuration names it.
type Member struct {
	ID   int64
	Host string // the host of its quorum address
	// Client is its client address from the configuration ("host:port",
	// or ":port" when only the port is given), "" when none is given.
	Client string
}

// dialAddr is the address to reach m's client port at, "" when the
// configuration gives none: the client host, or the quorum host when the
// client address is a wildcard.
func (m Member) dialAddr() string {
	if m.Client == "" {
		return ""
	}
	host, port, err := net.SplitHostPort(m.Client)
	if err != nil {
		return ""
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = m.Host
	}
	if host == "" {
		return ""
	}
	return net.JoinHostPort(host, port)
}

func (m Member) String() string {
	if m.Host == "" {
		return fmt.Sprintf("server %d", m.ID)
	}
	return fmt.Sprintf("server %d (%s)", m.ID, m.Host)
}

// ParseMembership parses the server lines of a ZooKeeper configuration
// ("server.<id>=<host>:<quorum port>:<election port>[:<role>]
// [;[<client host>:]<client port>]", the format of /zookeeper/config and of
// "conf"'s membership section), in id order. Other lines are ignored; a
// host may be a bracketed IPv6 address, and of several addresses
// ("a:1:2|b:1:2") the first is taken. Pure.
func ParseMembership(text string) []Member {
	var out []Member
	for _, line := range strings.Split(text, "\n") {
		key, val, ok := strings.Cut(strings.TrimSpace(line), "=")
		idText, isServer := strings.CutPrefix(key, "server.")
		if !ok || !isServer {
			continue
		}
		id, err := strconv.ParseInt(idText, 10, 64)
		if err != nil || slices.ContainsFunc(out, func(m Member) bool { return m.ID == id }) {
			continue
		}
		server, client, _ := strings.Cut(val, ";")
		server, _, _ = strings.Cut(server, "|")
		m := Member{ID: id, Host: quorumHost(strings.TrimSpace(server)), Client: clientAddr(strings.TrimSpace(client))}
		out = append(out, m)
	}
	slices.SortFunc(out, func(a, b Member) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

// quorumHost returns the host of "<host>:<port>:<port>[:<role>]".
func quorumHost(s string) string {
	if rest, ok := strings.CutPrefix(s, "["); ok {
		h, _, found := strings.Cut(rest, "]")
		if !found {
			return ""
		}
		return h
	}
	h, _, _ := strings.Cut(s, ":")
	return h
}

// clientAddr normalises "[<host>:]<port>" to "host:port" (":port" without
// a host); "" when it is not one.
func clientAddr(s string) string {
	if s == "" {
		return ""
	}
	host, port := "", s
	if i := strings.LastIndex(s, ":"); i >= 0 {
		host, port = strings.Trim(s[:i], "[]"), s[i+1:]
	}
	if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
		return ""
	}
	return net.JoinHostPort(host, port)
}

// ParseConf parses the answer to "conf": the server's id ("serverId=",
// 0 on a standalone server) and the membership listed after
// "membership:". ok is false when there is no serverId line (a refusal
// such as "conf is not executed because it is not in the whitelist.").
// Pure.
func ParseConf(text string) (id int64, members []Member, ok bool) {
	head, membership, _ := strings.Cut(text, "membership:")
	for _, line := range strings.Split(head, "\n") {
		if v, found := strings.CutPrefix(strings.TrimSpace(line), "serverId="); found {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				return 0, nil, false
			}
			id, ok = n, true
		}
	}
	if !ok {
		return 0, nil, false
	}
	return id, ParseMembership(membership), true
}

// Answer is what one address said to "conf" and "cons".
type Answer struct {
	Addr string
	// ID is the server's id from "conf", when Identified.
	ID         int64
	Identified bool
	// Members: the membership "conf" listed.
	Members []Member
	// Sessions: the sessions "cons" listed; nil when it did not answer.
	Sessions map[int64]bool
	// Err: what went wrong (Sessions may still be set: "cons" answered
	// but "conf" did not).
	Err error
	// For: the member whose client address, learned from the
	// configuration, this address is (0 and Learned false for an address
	// the operator gave).
	For     int64
	Learned bool
}

// Cover combines the ensemble's configuration (the members listed in
// /zookeeper/config, nil when it is empty or unreadable) and the answers
// of the servers asked into what is known of the sessions, and returns the
// members no answer covers. The membership is the configuration's, else
// the one the servers' "conf" listed, else, when a server answered
// "conf" as a standalone server (id 0, no membership), that server alone.
// A member is covered by an answer from an address that "conf" identified
// as that member and where "cons" answered. Known needs every member
// covered. Pure.
func Cover(config []Member, answers []Answer) (Liveness, []Member) {
	members := slices.Clone(config)
	if len(members) == 0 {
		for _, a := range answers {
			for _, m := range a.Members {
				if !slices.ContainsFunc(members, func(x Member) bool { return x.ID == m.ID }) {
					members = append(members, m)
				}
			}
		}
		slices.SortFunc(members, func(a, b Member) int { return cmp.Compare(a.ID, b.ID) })
	}
	if len(members) == 0 && slices.ContainsFunc(answers, func(a Answer) bool { return a.Identified && a.ID == 0 && len(a.Members) == 0 }) {
		members = []Member{{ID: 0}}
	}
	lv := Liveness{Connected: map[int64]bool{}, Members: len(members)}
	covered := map[int64]bool{}
	for _, a := range answers {
		for id := range a.Sessions {
			lv.Connected[id] = true
		}
		if a.Sessions != nil && a.Identified && (!a.Learned || a.ID == a.For) {
			covered[a.ID] = true
		}
		if a.Err != nil && !a.Learned {
			lv.Missing = append(lv.Missing, fmt.Sprintf("%s: %v", a.Addr, a.Err))
		}
	}
	var missing []Member
	for _, m := range members {
		if covered[m.ID] {
			lv.Asked++
			continue
		}
		missing = append(missing, m)
		why := "not in -servers, and the ensemble's configuration gives no client address for it"
		for _, a := range answers {
			switch {
			case !a.Learned || a.For != m.ID:
			case a.Err != nil:
				why = fmt.Sprintf("not in -servers; its client address %s (from the ensemble's configuration) did not answer: %v", a.Addr, a.Err)
			case a.Identified && a.ID != m.ID:
				why = fmt.Sprintf("not in -servers; its client address %s (from the ensemble's configuration) answered as server %d", a.Addr, a.ID)
			}
		}
		lv.Missing = append(lv.Missing, m.String()+": "+why)
	}
	switch {
	case len(members) == 0:
		lv.Why = "the ensemble's membership is unknown (" + configPath + " is empty or unreadable, and no server answered \"conf\" with it)"
	case len(missing) > 0:
		lv.Why = fmt.Sprintf("%d of the %d servers of the ensemble answered", lv.Asked, len(members))
	default:
		lv.Known = true
	}
	return lv, missing
}

// merge combines two rounds: a session either listed was connected; an
// owner is disconnected only when both rounds covered every member.
func (l Liveness) merge(next Liveness) Liveness {
	out := next
	out.Connected = map[int64]bool{}
	for id := range l.Connected {
		out.Connected[id] = true
	}
	for id := range next.Connected {
		out.Connected[id] = true
	}
	out.Known = l.Known && next.Known
	return out
}

// askServers asks each address for "conf" and "cons", at once, and
// returns their answers in order.
func askServers(ctx context.Context, addrs []string, tlsCfg *tls.Config, timeout time.Duration) []Answer {
	out := make([]Answer, len(addrs))
	var wg sync.WaitGroup
	for i, addr := range addrs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i] = askServer(ctx, addr, tlsCfg, timeout)
		}()
	}
	wg.Wait()
	return out
}

// askServer asks one address for "conf" (which member it is) and "cons"
// (its sessions). Cost: 2 TCP connections, each bounded by timeout.
func askServer(ctx context.Context, addr string, tlsCfg *tls.Config, timeout time.Duration) Answer {
	a := Answer{Addr: addr}
	conf, err := fourLetter(ctx, addr, "conf", tlsCfg, timeout)
	if err != nil {
		a.Err = fmt.Errorf("%w: conf: %w", ErrFourLetter, err)
		return a
	}
	a.ID, a.Members, a.Identified = ParseConf(conf)
	cons, err := fourLetter(ctx, addr, "cons", tlsCfg, timeout)
	if err != nil {
		a.Err = fmt.Errorf("%w: cons: %w", ErrFourLetter, err)
		return a
	}
	ids, ok := ParseCons(cons)
	if !ok {
		a.Err = fmt.Errorf("%w: cons answered %q", ErrFourLetter, firstLine(cons))
		return a
	}
	a.Sessions = ids
	if !a.Identified {
		a.Err = fmt.Errorf("%w: conf answered %q, so which server answered is unknown", ErrFourLetter, firstLine(conf))
	}
	return a
}

// learnedTimeout bounds each four-letter word sent to an address learned
// from the configuration (it may not be reachable from here at all).
const learnedTimeout = 2 * time.Second

// Sessions learns which sessions are connected to the ensemble's servers:
// it reads the membership from /zookeeper/config through r, asks every
// address in servers for "conf" and "cons", and asks the members none of
// them is at their client address from the configuration, when it gives
// one (not with tlsCfg: the configuration names the plain client port).
// Cost: 1 getData, 2 TCP connections per address asked (5 s bound each,
// 2 s for a learned address).
func Sessions(ctx context.Context, r Reader, servers []string, tlsCfg *tls.Config) Liveness {
	var config []Member
	if data, _, err := r.Get(configPath); err == nil {
		config = ParseMembership(string(data))
	}
	answers := askServers(ctx, servers, tlsCfg, 5*time.Second)
	lv, missing := Cover(config, answers)
	var learned []string
	var forID []int64
	for _, m := range missing {
		addr := m.dialAddr()
		switch {
		case addr == "":
		case tlsCfg != nil:
			answers = append(answers, Answer{Addr: addr, Learned: true, For: m.ID,
				Err: errors.New("with TLS, the secure client port is not in the configuration")})
		default:
			learned, forID = append(learned, addr), append(forID, m.ID)
		}
	}
	if len(learned) > 0 || len(answers) > len(servers) {
		more := askServers(ctx, learned, nil, learnedTimeout)
		for i := range more {
			more[i].Learned, more[i].For = true, forID[i]
		}
		lv, _ = Cover(config, append(answers, more...))
	}
	return lv
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
// closes the connection, within timeout.
func fourLetter(ctx context.Context, addr, word string, tlsCfg *tls.Config, timeout time.Duration) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
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

// ApplyLiveness sets each ephemeral node's liveness in rep from lv, lists
// the disconnected ones in rep.Stale, and fills rep.Sessions. An owner a
// server listed is connected; one none listed is disconnected only when
// lv.Known, else unknown. Nodes gone since they were listed are left
// alone. Pure.
func ApplyLiveness(rep *Report, lv Liveness) {
	rep.Sessions = SessionInfo{Known: lv.Known, Connected: len(lv.Connected), Members: lv.Members,
		Asked: lv.Asked, Why: lv.Why, Missing: lv.Missing}
	for _, l := range rep.lists() {
		for i := range l {
			n := &l[i]
			id, ok := parseSessionHex(n.Session)
			if !ok || n.Gone {
				continue
			}
			switch {
			case lv.off:
				n.Liveness, n.Live = "unknown", nil
			case lv.Connected[id]:
				live := true
				n.Liveness, n.Live = "connected", &live
			case lv.Known:
				dead := false
				n.Liveness, n.Live = "disconnected", &dead
				rep.Stale = append(rep.Stale, Finding{Path: n.Path,
					Why: "owner session " + n.Session + " is connected to no server of the ensemble (each asked twice): the node lasts until that session expires"})
			default:
				n.Liveness, n.Live = "unknown", nil
			}
		}
	}
	if rep.Leader != nil {
		for _, c := range rep.Contenders {
			if c.Path == rep.Leader.Path {
				rep.Leader.Liveness, rep.Leader.Live, rep.Leader.Gone = c.Liveness, c.Live, c.Gone
			}
		}
	}
}

// lists returns the report's lists of nodes that can have owners.
func (rep *Report) lists() [][]Node {
	return [][]Node{rep.Contenders, rep.Leases, rep.Claims, rep.Members, rep.Items}
}

// suspects returns the ephemeral nodes shown whose owner lv does not list.
func (rep *Report) suspects(lv Liveness) []*Node {
	var out []*Node
	for _, l := range rep.lists() {
		for i := range l {
			if id, ok := parseSessionHex(l[i].Session); ok && !l[i].Gone && !lv.Connected[id] {
				out = append(out, &l[i])
			}
		}
	}
	return out
}

// secondLook is the pause before asking the servers again about owners
// that none of them listed: a client moving to another server, or one
// whose connection was just established, shows up on one of them.
const secondLook = time.Second

// liveness learns the owners' liveness for rep and applies it: the
// servers are asked after the nodes were read (an owner's session existed
// then), and asked again about owners none listed; an owner still listed
// by none, whose node is still there, is disconnected. A node deleted in
// the meantime went with its session (closed or expired) and is shown as
// gone.
func (c *cli) liveness(ctx context.Context, s Reader, rep *Report) {
	if !c.cons {
		ApplyLiveness(rep, Liveness{off: true, Why: "not checked (-cons=false)"})
		return
	}
	lv := Sessions(ctx, s, c.servers, c.tlsCfg)
	if sus := rep.suspects(lv); lv.Known && len(sus) > 0 {
		t := time.NewTimer(secondLook)
		select {
		case <-ctx.Done():
			t.Stop()
			ApplyLiveness(rep, Liveness{off: true, Why: ctx.Err().Error()})
			return
		case <-t.C:
		}
		lv = lv.merge(Sessions(ctx, s, c.servers, c.tlsCfg))
		for _, n := range rep.suspects(lv) {
			_, st, err := s.Get(n.Path)
			switch {
			case errors.Is(err, zk.ErrNoNode) || (err == nil && st.Czxid != n.Czxid):
				n.Gone = true
			case err != nil:
				lv.Known = false
				lv.Why = fmt.Sprintf("%s could not be read again: %v", n.Path, err)
			}
		}
	}
	ApplyLiveness(rep, lv)
}

// parseSessionHex parses SessionHex's text.
func parseSessionHex(s string) (int64, bool) {
	h, ok := strings.CutPrefix(s, "0x")
	if !ok {
		return 0, false
	}
	v, err := strconv.ParseUint(h, 16, 64)
	return int64(v), err == nil && v != 0
}

// base returns the last segment of a path.
func base(p string) string {
	_, name := zkpath.Split(p)
	return name
}
