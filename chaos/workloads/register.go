package workloads

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/chaos/checkers"
	"github.com/zkrecipes/zkrecipes/chaos/cluster"
	"github.com/zkrecipes/zkrecipes/chaos/history"
)

// Register is a workload on raw go-zookeeper: every client, on its own
// link and session, loops reading a counter znode and writing the next
// value with a versioned set (compare-and-set), and every few rounds lists a
// large child list (which the bandwidth fault makes slow). Each client also
// keeps an ephemeral member node. Its history is checked for
// linearizability of the writes (porcupine), session order of the reads,
// liveness after every heal and no ephemeral node left once every session
// closed.
//
// With Broken set, clients write without the version check (a blind set of
// the value they read plus one): concurrent increments then overwrite each
// other, and the linearizability checker must catch it.
type Register struct {
	// Broken skips the version check: the deliberately broken client.
	Broken bool
	// Pace is the pause between rounds. Default 10 ms.
	Pace time.Duration
	// Children is the number of padding children listed every
	// ListEvery rounds. Default 200 and 10.
	Children, ListEvery int
}

// Name is "register", or "register-broken".
func (w *Register) Name() string {
	if w.Broken {
		return "register-broken"
	}
	return "register"
}

// Checkers: linearizable, session-reads, liveness, no-nodes-left.
func (w *Register) Checkers(cfg CheckConfig) []checkers.Checker {
	return []checkers.Checker{checkers.Linearizable(cfg.CheckTimeout), checkers.SessionReads(), checkers.Liveness(cfg.LivenessBound), checkers.NoNodesLeft()}
}

func (w *Register) defaults() (pace time.Duration, children, every int) {
	pace, children, every = w.Pace, w.Children, w.ListEvery
	if pace == 0 {
		pace = 10 * time.Millisecond
	}
	if children == 0 {
		children = 200
	}
	if every == 0 {
		every = 10
	}
	return
}

// Run sets up <root>/counter = 0, <root>/members and <root>/pad, then runs
// env.Clients clients until ctx is done.
func (w *Register) Run(ctx context.Context, env *cluster.Env) error {
	pace, children, every := w.defaults()
	conn, err := env.ConnectSetup(ctx)
	if err != nil {
		return err
	}
	counter, members, pad := env.Root+"/counter", env.Root+"/members", env.Root+"/pad"
	acl := env.ACL()
	var ops []any
	ops = append(ops, &zk.CreateRequest{Path: counter, Data: []byte("0"), Acl: acl},
		&zk.CreateRequest{Path: members, Acl: acl}, &zk.CreateRequest{Path: pad, Acl: acl})
	for i := range children {
		ops = append(ops, &zk.CreateRequest{Path: fmt.Sprintf("%s/pad-%06d-%s", pad, i, "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"), Acl: acl})
	}
	_, err = conn.Multi(ops...)
	conn.Close()
	if err != nil {
		return fmt.Errorf("chaos: register setup: %w", err)
	}
	var wg sync.WaitGroup
	errc := make(chan error, env.Clients)
	for i := range env.Clients {
		c, err := env.NewClient(fmt.Sprintf("c%d", i+1))
		if err != nil {
			return err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := w.client(ctx, env, c, counter, members, pad, pace, every); err != nil {
				errc <- err
			}
		}()
	}
	wg.Wait()
	close(errc)
	return <-errc
}

func (w *Register) client(ctx context.Context, env *cluster.Env, c *cluster.Client, counter, members, pad string, pace time.Duration, every int) error {
	conn, err := env.Connect(c)
	if err != nil {
		return err
	}
	defer cluster.CloseWhenConnected(conn, env.SessionTimeout)
	member := members + "/" + c.Name
	defer leave(conn, member, env.SessionTimeout)
	for round := 0; ctx.Err() == nil; round++ {
		if round%every == 0 {
			w.housekeep(conn, member, pad, env.ACL())
		}
		rd := c.Log.Invoke(history.FnRead, counter, 0)
		data, st, err := conn.Get(counter)
		if err != nil {
			rd.Fail(err.Error())
			if !cluster.Sleep(ctx, pace) {
				break
			}
			continue
		}
		v, err := strconv.ParseInt(string(data), 10, 64)
		if err != nil {
			return fmt.Errorf("chaos: counter holds %q", data)
		}
		rd.OK(v)
		version := st.Version
		if w.Broken {
			version = -1
		}
		cas := c.Log.InvokeValue(history.FnCAS, counter, v, v+1)
		_, err = conn.Set(counter, []byte(strconv.FormatInt(v+1, 10)), version)
		switch {
		case err == nil:
			cas.OK(v + 1)
		case errors.Is(err, zk.ErrBadVersion):
			cas.Fail(err.Error())
		default: // connection lost or closed mid-request: it may have been applied
			cas.Unknown(err.Error())
		}
		if !cluster.Sleep(ctx, pace) {
			break
		}
	}
	return nil
}

// housekeep keeps the member node present (it goes with an expired
// session) and lists the padding children. Not recorded: nothing checks it.
func (w *Register) housekeep(conn *zk.Conn, member, pad string, acl []zk.ACL) {
	if ok, _, err := conn.Exists(member); err == nil && !ok {
		_, _ = conn.Create(member, nil, zk.FlagEphemeral, acl)
	}
	_, _, _ = conn.Children(pad)
}

// leave deletes the client's member node while its own session owns it
// (checked, then deleted with that version), retrying connection errors for
// at most st. The runner's check of the nodes left then sees what the
// recipes leave behind, not how soon a loaded ensemble applies the
// closeSession of a raw connection right after a fault.
func leave(conn *zk.Conn, member string, st time.Duration) {
	deadline := time.Now().Add(st)
	for time.Now().Before(deadline) {
		ok, stat, err := conn.Exists(member)
		if err == nil {
			if !ok || stat.EphemeralOwner != conn.SessionID() {
				return
			}
			if err = conn.Delete(member, stat.Version); err == nil || errors.Is(err, zk.ErrNoNode) {
				return
			}
		}
		<-time.After(20 * time.Millisecond)
	}
}
