// Deciding a transaction: Decide watches the sites' votes and liveness nodes
// until it can write the decision (or reads the one already written); Abort
// and Decision are its shortcuts.

package twophase

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/internal/zkpath"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// siteWatch is Decide's knowledge of one site.
type siteWatch struct {
	view  siteView
	watch <-chan zk.Event // child watch on <tx>/<site>; nil when not armed
	fired bool            // the watch fired: look for the vote first
}

// Decide waits for the votes and writes the decision, or reads the one
// already written, and returns it.
//
// Invariant: the decision node is created at most once, by whoever comes
// first (this coordinator, another one, or a participant past its
// deadline); Decide returns what that node says. This coordinator writes
// Commit only after reading a commit vote from every site; it writes Abort
// at the first abort vote, when a site's liveness node is gone before that
// site voted (seen from the site node's child version: children changed,
// yet neither a liveness node nor a vote is there), or when the vote
// deadline passes with votes missing.
//
// Cost, n sites: 1 exists (watching the decision node) + n getChildren
// (one child watch per site, seeing its liveness and vote nodes); each
// notification from a site: 1 getData of its vote, and 1 getChildren
// (arming the watch again) when there is none yet; then 1 create of the
// decision (+1 getData if it exists). Notifications: one per site's vote,
// plus one per liveness node created or deleted while the site had not
// voted, plus one from the decision node's watch when the decision is
// written; O(n) in all. A site that voted is not watched any more. Writing
// the decision wakes each site's watch on it (n notifications).
//
// If ctx is done first, Decide returns ctx's error and the transaction
// stays open: call Decide again (with this Tx or a resumed one), or Abort.
func (t *Tx) Decide(ctx context.Context) (Decision, error) {
	if t == nil {
		return 0, ErrNilReceiver
	}
	if err := t.c.check(ctx); err != nil {
		return 0, err
	}
	s := t.c.s
	decisionPath := zkpath.Join(t.path, decisionNode)
	sites := make([]siteWatch, len(t.sites))
	for i, name := range t.sites {
		sites[i].view.Name = name
	}
	timer := time.NewTimer(time.Until(t.deadline))
	defer timer.Stop()
	expired := false
	var decisionWatch <-chan zk.Event
	for {
		if decisionWatch == nil {
			var found bool
			err := recipes.Exec(ctx, s, func(_ *zk.Conn, _ int64) (err error) {
				found, _, decisionWatch, err = s.Conn().ExistsW(decisionPath)
				return err
			})
			if err != nil {
				return 0, fmt.Errorf("twophase: watch %s: %w", decisionPath, err)
			}
			if found {
				return t.read(ctx)
			}
		}
		for i := range sites {
			if err := t.look(ctx, &sites[i]); err != nil {
				return 0, err
			}
		}
		views := make([]siteView, len(sites))
		for i := range sites {
			views[i] = sites[i].view
		}
		if d, reason, done := rule(views, expired); done {
			return writeDecision(ctx, s, t.path, d, reason)
		}
		// Wait for a watch, the deadline or ctx.
		cases := []reflect.SelectCase{
			{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(ctx.Done())},
			{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(timer.C)},
			{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(decisionWatch)},
		}
		const fixed = 3
		for i := range sites {
			// A nil channel (resolved site) is never ready.
			cases = append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(sites[i].watch)})
		}
		chosen, _, _ := reflect.Select(cases)
		switch chosen {
		case 0:
			return 0, recipes.ContextError(ctx)
		case 1:
			expired = true
		case 2:
			decisionWatch = nil
		default:
			sites[chosen-fixed].watch = nil
			sites[chosen-fixed].fired = true
		}
	}
}

// look refreshes one site unless it has voted or its watch is armed. Cost:
// 1 getChildren (arming a child watch) + 1 getData when the vote is there.
// After the site's watch fired: 1 getData of the vote first, and only
// without a vote 1 getChildren (so no watch is left on a site that voted).
func (t *Tx) look(ctx context.Context, sw *siteWatch) error {
	if sw.view.Vote != 0 || sw.watch != nil {
		return nil
	}
	s := t.c.s
	sitePath := zkpath.Join(t.path, sw.view.Name)
	if sw.fired {
		sw.fired = false
		v, err := readVote(ctx, s, sitePath)
		if err != nil {
			return err
		}
		if v != 0 {
			sw.view.Vote = v
			return nil
		}
	}
	var kids []string
	var st *zk.Stat
	var ch <-chan zk.Event
	err := recipes.Exec(ctx, s, func(_ *zk.Conn, _ int64) (err error) {
		kids, st, ch, err = s.Conn().ChildrenW(sitePath)
		return err
	})
	if errors.Is(err, zk.ErrNoNode) {
		return fmt.Errorf("%w: %s", ErrUnknownTx, sitePath)
	}
	if err != nil {
		return fmt.Errorf("twophase: watch %s: %w", sitePath, err)
	}
	sw.watch = ch
	switch {
	case slices.Contains(kids, voteNode):
		v, err := readVote(ctx, s, sitePath)
		if err != nil {
			return err
		}
		sw.view.Vote = v
		// The child watch stays registered until the site's children
		// change; nothing waits on it any more.
		sw.watch = nil
	case slices.Contains(kids, aliveNode):
	case st.Cversion > 0:
		// The site node's children changed, yet there is neither a
		// liveness node nor a vote: a liveness node was created and is
		// gone (nothing else deletes one before the decision). The
		// child version tells even a coordinator that never saw it.
		sw.view.Vanished = true
	}
	return nil
}

// readVote reads <site>/vote; 0 when the site has not voted. Cost: 1
// getData.
func readVote(ctx context.Context, s *recipes.Session, sitePath string) (Decision, error) {
	path := zkpath.Join(sitePath, voteNode)
	data, _, err := get(ctx, s, path)
	switch {
	case errors.Is(err, zk.ErrNoNode):
		return 0, nil
	case err != nil:
		return 0, fmt.Errorf("twophase: read %s: %w", path, err)
	}
	v, reason, err := parseDecision(data)
	if err != nil || reason != "" {
		return 0, fmt.Errorf("twophase: vote %s: %w", path, cmp(err, ErrCorrupt))
	}
	return v, nil
}

func cmp(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// read returns the decision already written. Cost: 1 getData.
func (t *Tx) read(ctx context.Context) (Decision, error) {
	d, _, ok, err := readDecision(ctx, t.c.s, t.path)
	if err != nil {
		return 0, err
	}
	if !ok {
		// Only Collect deletes a decision, with its transaction.
		return 0, fmt.Errorf("%w: %s", ErrUnknownTx, t.path)
	}
	return d, nil
}

// Abort decides abort now, whatever the votes, unless the transaction is
// already decided; it returns the decision in ZooKeeper (Commit if the
// commit was written first). Cost: 1 create (+1 getData if decided).
func (t *Tx) Abort(ctx context.Context) (Decision, error) {
	if t == nil {
		return 0, ErrNilReceiver
	}
	if err := t.c.check(ctx); err != nil {
		return 0, err
	}
	return writeDecision(ctx, t.c.s, t.path, Abort, "aborted by the coordinator")
}

// Decision returns the transaction's decision without waiting; ok=false
// while it is undecided. Cost: 1 getData.
func (t *Tx) Decision(ctx context.Context) (d Decision, ok bool, err error) {
	if t == nil {
		return 0, false, ErrNilReceiver
	}
	if err := t.c.check(ctx); err != nil {
		return 0, false, err
	}
	d, _, ok, err = readDecision(ctx, t.c.s, t.path)
	return d, ok, err
}
