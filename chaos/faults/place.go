package faults

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/zkrecipes/zkrecipes/chaos/cluster"
	"github.com/zkrecipes/zkrecipes/chaos/history"
	"github.com/zkrecipes/zkrecipes/testenv"
)

// Placements of the clients' sessions a fault asks for (Fault.Place): which
// ZooKeeper role the server of the holder has, the waiters being on a
// server of the other role.
const (
	// PlaceHolderOnFollower: the holder's session on a follower, a
	// waiter's on the leader.
	PlaceHolderOnFollower = "holder-on-follower"
	// PlaceHolderOnLeader: the holder's session on the leader, a waiter's
	// on a follower.
	PlaceHolderOnLeader = "holder-on-leader"
)

// ErrNotExercised marks a fault that could not strike what it aims at (its
// clients could not be placed as asked, or it left no trace on the
// servers): the scenario fails, it never passes.
var ErrNotExercised = errors.New("not exercised")

// Placed is a client whose session a placed fault confirmed on a server:
// the server's "cons" listed the session when the fault struck.
type Placed struct {
	Client     string `json:"client"`
	ClientRole string `json:"client_role"` // holder or waiter
	Server     int    `json:"server"`
	ServerRole string `json:"server_role"` // leader or follower
	Session    string `json:"session"`     // 0x...
}

// Pins returns the servers on which a scenario with a placed fault puts
// its clients' sessions (cluster.Env.Pins), given the ensemble's size n,
// its leader and the draw d: the clients alternate between a follower
// (chosen by d) and the leader, the first on the follower. Whatever the
// placement asked, both roles then have clients; the fault picks its
// holder on the server of the role it wants. Nil when there is no leader
// or no follower.
func Pins(n, leader, d int) []int {
	var followers []int
	for i := range n {
		if i != leader {
			followers = append(followers, i)
		}
	}
	if leader < 0 || leader >= n || len(followers) == 0 {
		return nil
	}
	d = ((d % len(followers)) + len(followers)) % len(followers)
	return []int{followers[d], leader}
}

// sessionOn reports whether server i's "cons" lists session id.
func sessionOn(ctx context.Context, e *testenv.Ensemble, i int, id int64) bool {
	if id == 0 {
		return false
	}
	out, err := e.FourLetter(ctx, i, "cons")
	want := "sid=0x" + strconv.FormatInt(id, 16)
	return err == nil && (strings.Contains(out, want+",") || strings.Contains(out, want+")"))
}

// placement is who a placed fault strikes: the server to cut (the one the
// holder's session must be on) and the clients confirmed on it and on the
// other server.
type placement struct {
	server, other int
	serverRole    string
	otherRole     string
	on, off       []*cluster.Client // clients confirmed on server, on other
	placed        []Placed
}

// place checks the scenario's placement now: the clients are pinned
// (cluster.Env.Pins), the server of the role the holder must have (want:
// a Place*) has clients whose sessions its "cons" lists, and so has the
// server of the other role. It returns why not, for the report.
func place(ctx context.Context, env *cluster.Env, want string) (placement, error) {
	e := env.Ensemble
	var p placement
	ldr, err := e.Leader(ctx)
	if err != nil {
		return p, err
	}
	wantRole := RoleFollower
	if want == PlaceHolderOnLeader {
		wantRole = RoleLeader
	}
	p.server, p.other = -1, -1
	cs := env.ClientList()
	for _, c := range cs {
		pin := c.Pin()
		if pin < 0 {
			return p, fmt.Errorf("client %s is not placed on a server", c.Name)
		}
		if serverRole(pin, ldr) == wantRole {
			if p.server < 0 {
				p.server = pin
			}
			if pin == p.server && sessionOn(ctx, e, pin, c.Session()) {
				p.on = append(p.on, c)
			}
			continue
		}
		if p.other < 0 {
			p.other = pin
		}
		if pin == p.other && sessionOn(ctx, e, pin, c.Session()) {
			p.off = append(p.off, c)
		}
	}
	if len(cs) == 0 {
		return p, errors.New("no clients")
	}
	if p.server < 0 || p.other < 0 {
		return p, fmt.Errorf("no client placed on a %s and one on a server of the other role (leader %d)", wantRole, ldr)
	}
	if len(p.on) == 0 || len(p.off) == 0 {
		return p, fmt.Errorf("cons of server %d (%s) lists %d placed sessions, of server %d %d: want one at least on each",
			p.server, wantRole, len(p.on), p.other, len(p.off))
	}
	p.serverRole, p.otherRole = wantRole, serverRole(p.other, ldr)
	return p, nil
}

// injectIsolatePlaced cuts the server of the holder's session off from the
// other servers (both ways, or one way: dir) while every client's link
// stays up, in a scenario whose clients the runner placed (Fault.Place):
// the holder on a server of the role want names, a waiter on a server of
// the other role. It waits until the
// placement is confirmed by the servers' "cons" and a client on that
// server holds, cuts, and keeps the cut only if a client on the cut
// server still held when it took effect (its requests, forwarded to the
// leader, then stall, so it can no longer release); else it rejoins the
// server at once and tries again, and past the deadline fails: a holder
// workload whose holder it could not strike was not exercised. Then it confirms the fault: the cut
// server stops serving (its srvr says so) within the bound. A placement
// or a confirmation that fails makes the injection fail with
// ErrNotExercised, and the scenario with it.
func injectIsolatePlaced(want string, dir testenv.Direction) func(context.Context, *cluster.Env, Window, *Target) (healFunc, error) {
	return func(ctx context.Context, env *cluster.Env, w Window, t *Target) (healFunc, error) {
		e := env.Ensemble
		if e.Servers() < 3 {
			return nil, fmt.Errorf("%w: a placed isolation needs 3 or more servers", ErrUnsupported)
		}
		deadline := time.Now().Add(3*env.SessionTimeout + 5*time.Second)
		var why error
		for try := 0; ; try++ {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if try > 0 && time.Now().After(deadline) {
				return nil, fmt.Errorf("%w: %v", ErrNotExercised, why)
			}
			p, err := place(ctx, env, want)
			if err != nil {
				why = err
				cluster.Sleep(ctx, 50*time.Millisecond)
				continue
			}
			names := func(cs []*cluster.Client) []string {
				out := make([]string, len(cs))
				for i, c := range cs {
					out[i] = c.Name
				}
				return out
			}
			if env.IdleHold() == 0 {
				// From now on a holding on the server to cut starts idle
				// (cluster.Env.SetIdleHold): the holder's session is
				// quiet but for pings when the cut comes, as a holder
				// that works off ZooKeeper. Holdings begun before end
				// within milliseconds; let them.
				env.SetIdleHold(p.server, 2*env.SessionTimeout)
				defer env.ClearIdleHold()
				cluster.Sleep(ctx, 100*time.Millisecond)
			}
			holding, has := env.Rec.HoldingNow(names(p.on))
			holds := func() *cluster.Client {
				for k := range p.on {
					c := p.on[(w.Victim+k)%len(p.on)]
					if holding[c.Name] {
						return c
					}
				}
				return nil
			}
			if has && holds() == nil {
				why = fmt.Errorf("no client on server %d (%s) held", p.server, p.serverRole)
				cluster.Sleep(ctx, 10*time.Millisecond)
				continue
			}
			at := history.Now()
			if err := e.IsolateOneWay(ctx, p.server, dir); err != nil {
				_ = e.Rejoin(context.WithoutCancel(ctx), p.server)
				return nil, err
			}
			// What a client on the cut server still holds now it keeps:
			// its release stalls. Events of worker processes arrive
			// through a pipe: let them in.
			cluster.Sleep(ctx, 100*time.Millisecond)
			holding, has = env.Rec.HoldingNow(names(p.on))
			holder := holds()
			if has && holder == nil {
				// Nobody on the cut server held when it took effect: the
				// fault would strike no holder. Undo it, try again.
				why = fmt.Errorf("the holders on server %d released before the cut took effect", p.server)
				if err := e.Rejoin(context.WithoutCancel(ctx), p.server); err != nil {
					return nil, err
				}
				if err := WaitQuorum(ctx, e); err != nil {
					return nil, err
				}
				continue
			}
			role := RoleHolder
			if holder == nil { // a workload without holdings
				holder, role = p.on[w.Victim%len(p.on)], RoleClient
			}
			t.At, t.Client, t.ClientRole = at, holder.Name, role
			t.Servers = []ServerTarget{{Index: p.server, Role: p.serverRole}}
			for _, c := range p.on {
				r := RoleWaiter
				if c == holder {
					r = role
				} else if role == RoleClient {
					r = RoleClient
				}
				t.Placed = append(t.Placed, Placed{Client: c.Name, ClientRole: r, Server: p.server, ServerRole: p.serverRole, Session: "0x" + strconv.FormatInt(c.Session(), 16)})
			}
			offRole := RoleWaiter
			if role == RoleClient {
				offRole = RoleClient
			}
			for _, c := range p.off {
				t.Placed = append(t.Placed, Placed{Client: c.Name, ClientRole: offRole, Server: p.other, ServerRole: p.otherRole, Session: "0x" + strconv.FormatInt(c.Session(), 16)})
			}
			heal := func(ctx context.Context) error {
				if err := e.Rejoin(ctx, p.server); err != nil {
					return err
				}
				return WaitQuorum(ctx, e)
			}
			// The fault took effect only if the cut server left the
			// quorum: its srvr stops answering a mode.
			cctx, cancel := context.WithTimeout(ctx, 4*env.SessionTimeout+10*time.Second)
			left, err := stopsServing(cctx, e, p.server)
			cancel()
			if err != nil {
				herr := heal(context.WithoutCancel(ctx))
				return nil, errors.Join(fmt.Errorf("%w: server %d still serves after the cut: %v", ErrNotExercised, p.server, err), herr)
			}
			t.Confirmed = fmt.Sprintf("server %d stopped serving %v after the cut", p.server, time.Duration(left-at).Round(time.Millisecond))
			return heal, nil
		}
	}
}

// stopsServing waits until server i no longer answers srvr with a mode (it
// left the quorum and looks for a leader: "not currently serving") and
// returns when (history clock).
func stopsServing(ctx context.Context, e *testenv.Ensemble, i int) (int64, error) {
	var last string
	for {
		m, err := e.Mode(ctx, i)
		if err != nil && strings.Contains(err.Error(), "not serving") {
			return history.Now(), nil
		}
		last = m
		if err != nil {
			last = err.Error()
		}
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("mode still %q: %w", last, context.Cause(ctx))
		case <-time.After(50 * time.Millisecond):
		}
	}
}
