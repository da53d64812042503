package workloads

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/chaos/cluster"
	"github.com/zkrecipes/zkrecipes/chaos/history"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// auditor is a workload's own session once its clients stopped, straight to
// the servers (no client link, so no fault): it reads back what the clients
// wrote and lists what they left behind. Every call is retried while the
// connection is unusable; any other error is returned, never read as "no
// node".
type auditor struct {
	s   *recipes.Session
	env *cluster.Env
}

// newAuditor connects an auditor; ctx bounds its every call.
func newAuditor(ctx context.Context, env *cluster.Env) (*auditor, error) {
	s, err := recipes.Connect(ctx, env.Ensemble.DirectAddrs(), env.SessionOptions(nil)...)
	if err != nil {
		return nil, fmt.Errorf("chaos: audit session: %w", err)
	}
	return &auditor{s: s, env: env}, nil
}

func (a *auditor) close() { closeRecipes(a.s, a.env.SessionTimeout) }

// do runs call until it answers, retrying connection errors until ctx ends.
func (a *auditor) do(ctx context.Context, call func(conn *zk.Conn) error) error {
	for {
		err := call(a.s.Conn())
		if err == nil || !recipes.IsConnErr(err) {
			return err
		}
		if ctx.Err() != nil {
			return fmt.Errorf("chaos: audit: %w (%w)", err, ctx.Err())
		}
		cluster.Sleep(ctx, 50*time.Millisecond)
	}
}

// children lists p after a sync (so that the auditor's server has applied
// every write the clients saw acknowledged); a missing p has none.
func (a *auditor) children(ctx context.Context, p string) ([]string, error) {
	var kids []string
	err := a.do(ctx, func(conn *zk.Conn) error {
		if _, err := conn.Sync(p); err != nil && !errors.Is(err, zk.ErrNoNode) {
			return err
		}
		var err error
		kids, _, err = conn.Children(p)
		if errors.Is(err, zk.ErrNoNode) {
			kids, err = nil, nil
		}
		return err
	})
	sort.Strings(kids)
	return kids, err
}

// get reads p; ok is false when p does not exist.
func (a *auditor) get(ctx context.Context, p string) (data []byte, ok bool, err error) {
	data, _, ok, err = a.getStat(ctx, p)
	return data, ok, err
}

// getStat is get with the node's stat (nil when it is missing).
func (a *auditor) getStat(ctx context.Context, p string) (data []byte, st *zk.Stat, ok bool, err error) {
	err = a.do(ctx, func(conn *zk.Conn) error {
		var err error
		data, st, err = conn.Get(p)
		if errors.Is(err, zk.ErrNoNode) {
			return nil
		}
		ok = err == nil
		return err
	})
	if !ok {
		st = nil
	}
	return data, st, ok, err
}

// litter records, as a nodes-left event of the auditor, the nodes named
// (what under p must not remain); err (a listing that failed) is recorded
// as such, never as zero nodes.
func (a *auditor) litter(what string, nodes []string, err error) {
	e := history.Event{Client: history.Auditor, Kind: history.KindNodesLeft, Value: int64(len(nodes)), Detail: what}
	if len(nodes) > 0 {
		e.Detail += ": " + strings.Join(nodes, ", ")
	}
	if err != nil {
		e.Value, e.Detail = -1, what+": cannot list: "+err.Error()
	}
	a.env.Rec.Add(e)
}
