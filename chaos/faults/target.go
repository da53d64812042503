package faults

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/zkrecipes/zkrecipes/chaos/cluster"
	"github.com/zkrecipes/zkrecipes/chaos/history"
	"github.com/zkrecipes/zkrecipes/testenv"
)

// Roles a fault aims at, and the roles its real target had when it struck.
const (
	// RoleHolder is a client that holds the workload's lock, lease or
	// leadership when the fault strikes.
	RoleHolder = "holder"
	// RoleWaiter is a client of a holder workload that does not hold.
	RoleWaiter = "waiter"
	// RoleClient is a client of a workload without holdings (register,
	// queue, barrier, two-phase), or of one where nobody held in time.
	RoleClient = "client"
	// RoleLeader and RoleFollower are the ZooKeeper roles of a server.
	RoleLeader   = "leader"
	RoleFollower = "follower"
)

// Server aims of the partition faults (see pickServers).
const (
	aimMinority = "minority"
	aimMajority = "majority"
)

// ServerTarget is a server a fault acted on, with its ZooKeeper role then.
type ServerTarget struct {
	Index int    `json:"index"`
	Role  string `json:"role"`
}

// Target is what a fault really struck: the client (with its role at that
// instant: holder, waiter or client) and the servers (with theirs).
type Target struct {
	Fault string `json:"fault"`
	// At is when the target was chosen (history clock), or when the fault
	// struck for faults that choose none.
	At int64 `json:"t"`
	// Aim is the role the fault aimed at ("" for faults on every client).
	Aim        string         `json:"aim,omitempty"`
	Client     string         `json:"client,omitempty"`
	ClientRole string         `json:"client_role,omitempty"`
	Servers    []ServerTarget `json:"servers,omitempty"`
	// AllClients is set for faults on every client's link.
	AllClients bool `json:"all_clients,omitempty"`
	// Placed is, for a fault with a placement (Fault.Place), the clients
	// whose sessions the servers' "cons" listed where they were placed
	// when it struck.
	Placed []Placed `json:"placed,omitempty"`
	// Confirmed says what showed that the fault took effect on the
	// servers, for the faults that confirm it (a placed isolation: the
	// cut server stopped serving).
	Confirmed string `json:"confirmed,omitempty"`
}

// String says it in words: "client c2 (holder) on server 1 (follower)".
func (t Target) String() string {
	var parts []string
	switch {
	case t.Client != "":
		parts = append(parts, fmt.Sprintf("client %s (%s)", t.Client, t.ClientRole))
	case t.AllClients:
		parts = append(parts, "every client")
	}
	var ss []string
	for _, s := range t.Servers {
		ss = append(ss, fmt.Sprintf("%d (%s)", s.Index, s.Role))
	}
	if len(ss) > 0 {
		word := "server"
		if len(ss) > 1 {
			word = "servers"
		}
		sep := ""
		if len(parts) > 0 {
			sep = "on "
		}
		parts = append(parts, sep+word+" "+strings.Join(ss, ", "))
	}
	if len(parts) == 0 {
		return "nothing"
	}
	if len(t.Placed) > 0 {
		var ps []string
		for _, p := range t.Placed {
			ps = append(ps, fmt.Sprintf("%s@%d", p.Client, p.Server))
		}
		parts = append(parts, "(placed "+strings.Join(ps, " ")+")")
	}
	if t.Confirmed != "" {
		parts = append(parts, "("+t.Confirmed+")")
	}
	return strings.Join(parts, " ")
}

// Targets returns the targets recorded in h, in order.
func Targets(h history.History) []Target {
	var out []Target
	for _, e := range h.Events {
		if e.Kind != history.KindFaultTarget {
			continue
		}
		var t Target
		if err := json.Unmarshal([]byte(e.Detail), &t); err != nil {
			t = Target{Fault: e.Key}
		}
		if t.At == 0 {
			t.At = e.Time
		}
		out = append(out, t)
	}
	return out
}

// TargetEvent is the history record of t.
func TargetEvent(t Target) history.Event {
	b, _ := json.Marshal(t)
	return history.Event{Client: history.Nemesis, Kind: history.KindFaultTarget, Key: t.Fault, Mode: t.ClientRole, Detail: string(b)}
}

// pickClient chooses among clients (in the workload's order) the one a
// fault aimed at aim strikes: the first holder (aim RoleHolder) or
// non-holder (RoleWaiter) counting from victim modulo the clients. When
// nobody has holdings (hasHoldings false) or none has the role, it takes
// clients[victim % n] with RoleClient. It returns -1 for no clients.
func pickClient(clients []string, holding map[string]bool, hasHoldings bool, aim string, victim int) (int, string) {
	n := len(clients)
	if n == 0 {
		return -1, ""
	}
	victim = ((victim % n) + n) % n
	if hasHoldings && (aim == RoleHolder || aim == RoleWaiter) {
		for k := range n {
			i := (victim + k) % n
			if holding[clients[i]] == (aim == RoleHolder) {
				return i, aim
			}
		}
	}
	return victim, RoleClient
}

// serverFits reports whether server i (-1 unknown) can be the first that
// a fault aimed at aim strikes, given the leader: a follower fault cannot
// strike the leader.
func serverFits(i, leader int, aim string) bool {
	if i < 0 {
		return false
	}
	switch aim {
	case RoleFollower, aimMinority:
		return i != leader
	}
	return true
}

// pickServers chooses the servers a server fault strikes, given the
// ensemble's size n, its leader (-1 unknown), the server the aimed client
// is connected to (-1 unknown), and the draw d:
//
//   - RoleLeader: the leader;
//   - RoleFollower: the client's server if it follows, else a follower by d;
//   - "" (any): the client's server, else a server by d;
//   - aimMinority: (n-1)/2 followers (at least one), the client's server
//     first when it follows: the leader keeps a quorum;
//   - aimMajority: n/2+1 servers, the client's server first: no quorum is
//     left on either side.
//
// The result is never empty for n >= 1 and never repeats a server.
func pickServers(n, leader, clientServer int, aim string, d int) []int {
	if n <= 0 {
		return nil
	}
	d = ((d % n) + n) % n
	valid := func(i int) bool { return i >= 0 && i < n }
	var followers []int
	for i := range n {
		if i != leader {
			followers = append(followers, i)
		}
	}
	first := func(cands []int) int {
		for _, c := range cands {
			if c == clientServer {
				return c
			}
		}
		return cands[d%len(cands)]
	}
	take := func(k int, cands []int) []int {
		if len(cands) == 0 {
			return nil
		}
		start := first(cands)
		out := []int{start}
		for j := 0; len(out) < k && j < len(cands); j++ {
			if c := cands[(d+j)%len(cands)]; c != start {
				out = append(out, c)
			}
		}
		return out
	}
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}
	switch aim {
	case RoleLeader:
		if valid(leader) {
			return []int{leader}
		}
		return []int{d}
	case RoleFollower:
		if len(followers) == 0 {
			return []int{d}
		}
		return take(1, followers)
	case aimMinority:
		k := (n - 1) / 2
		if k == 0 {
			k = 1
		}
		if len(followers) == 0 {
			return take(k, all)
		}
		return take(k, followers)
	case aimMajority:
		return take(n/2+1, all)
	}
	return take(1, all)
}

// aimClient chooses the client a fault aimed at aim strikes now, waiting
// up to a session timeout for a holder (or a waiter) when the workload has
// holdings, and fills t's client fields. It returns nil without clients.
func aimClient(ctx context.Context, env *cluster.Env, w Window, aim string, t *Target) *cluster.Client {
	deadline := time.Now().Add(env.SessionTimeout)
	for {
		cs := env.ClientList()
		names := make([]string, len(cs))
		for i, c := range cs {
			names[i] = c.Name
		}
		holding, has := env.Rec.HoldingNow(names)
		i, role := pickClient(names, holding, has, aim, w.Victim)
		if i >= 0 && (role == aim || aim == "" || time.Now().After(deadline) || ctx.Err() != nil) {
			t.Aim, t.Client, t.ClientRole, t.At = aim, names[i], role, history.Now()
			return cs[i]
		}
		if i < 0 && (time.Now().After(deadline) || ctx.Err() != nil) {
			return nil
		}
		select {
		case <-ctx.Done():
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// serverOf returns the index of the server c is connected to, or -1: the
// server its dialer reached last (cluster.Client.Dial), else its connection's,
// else (a worker process) by asking each server which sessions it serves
// ("cons").
func serverOf(ctx context.Context, e *testenv.Ensemble, c *cluster.Client) int {
	if c == nil {
		return -1
	}
	if i := c.Server(); i >= 0 {
		return i
	}
	if conn := c.Conn(); conn != nil {
		srv := conn.Server()
		for i, a := range c.Link.Addrs() {
			if a == srv {
				return i
			}
		}
	}
	id := c.Session()
	if id == 0 {
		return -1
	}
	want := "sid=0x" + strconv.FormatInt(id, 16)
	for i := range e.Servers() {
		out, err := e.FourLetter(ctx, i, "cons")
		if err == nil && (strings.Contains(out, want+",") || strings.Contains(out, want+")")) {
			return i
		}
	}
	return -1
}

// serverRole is the role of server i given the leader's index.
func serverRole(i, leader int) string {
	if i == leader {
		return RoleLeader
	}
	return RoleFollower
}

// LeaderNow returns the ensemble's leader, or -1 when none answers in a
// few seconds.
func LeaderNow(ctx context.Context, e *testenv.Ensemble) int {
	lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	i, err := e.Leader(lctx)
	if err != nil {
		return -1
	}
	return i
}

// sessionAlive reports whether the ensemble's leader still lists session
// id ("dump"); unknown (an error) when no leader answers.
func sessionAlive(ctx context.Context, e *testenv.Ensemble, id int64) (bool, error) {
	li, err := e.Leader(ctx)
	if err != nil {
		return false, err
	}
	out, err := e.FourLetter(ctx, li, "dump")
	if err != nil {
		return false, err
	}
	if !strings.Contains(out, "Session") {
		return false, fmt.Errorf("chaos: unexpected dump answer %q", out)
	}
	return strings.Contains(out, "0x"+strconv.FormatInt(id, 16)), nil
}

// waitSessionGone waits until the ensemble no longer lists session id.
func waitSessionGone(ctx context.Context, e *testenv.Ensemble, id int64) error {
	for {
		alive, err := sessionAlive(ctx, e, id)
		if err == nil && !alive {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("chaos: session 0x%x not expired: %w", id, context.Cause(ctx))
		case <-time.After(100 * time.Millisecond):
		}
	}
}
