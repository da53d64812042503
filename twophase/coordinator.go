package twophase

import (
	"bytes"
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

// Coordinator begins transactions under a root path and decides them.
//
// A Coordinator keeps no state of its own beyond its configuration: every
// transaction lives in ZooKeeper, so a restarted coordinator (any process
// with a Coordinator on the same root) picks it up with Resume or Pending.
// Several coordinators may share a root; the decision of a transaction is
// still written once.
//
// A Coordinator is safe for concurrent use; so is a Tx.
type Coordinator struct {
	s    *recipes.Session
	root string
	cfg  coordinatorConfig
}

// NewCoordinator returns a Coordinator for transactions under root. It
// sends nothing. It fails, wrapping a sentinel, on a nil session
// (recipes.ErrNilSession), an invalid root or one in the reserved
// /zookeeper tree (recipes.ErrInvalidPath), or a root so long that no
// transaction node under it fits the session's request limit
// (recipes.ErrDataTooLarge). The root and its ancestors are
// created, as persistent nodes, by the first Begin that needs them.
// Options: WithVoteTimeout, WithRetention.
func NewCoordinator(s *recipes.Session, root string, opts ...CoordinatorOption) (*Coordinator, error) {
	if err := checkSessionRoot(s, root); err != nil {
		return nil, err
	}
	return &Coordinator{s: s, root: root, cfg: newCoordinatorConfig(opts)}, nil
}

func checkSessionRoot(s *recipes.Session, root string) error {
	if s == nil {
		return fmt.Errorf("twophase: %w", recipes.ErrNilSession)
	}
	if err := recipes.ValidateWritePath(root); err != nil {
		return fmt.Errorf("twophase: root: %w", err)
	}
	// The smallest node of a transaction: one of a one-character id.
	if err := recipes.CheckRequest(s.MaxData(), &zk.CreateRequest{Path: zkpath.Join(root, "t"), Acl: s.ACLFor(zkpath.Join(root, "t"))}); err != nil {
		return fmt.Errorf("twophase: root: %w", err)
	}
	return nil
}

// Root returns the root path of the coordinator's transactions.
func (c *Coordinator) Root() string {
	if c == nil {
		return ""
	}
	return c.root
}

func (c *Coordinator) check(ctx context.Context) error {
	if c == nil {
		return ErrNilReceiver
	}
	if err := recipes.ContextError(ctx); err != nil {
		return err
	}
	if c.s.State() == recipes.StateClosed {
		return fmt.Errorf("twophase: %w", recipes.ErrClosed)
	}
	return nil
}

// Tx is one transaction as its coordinator sees it. Its fields are fixed
// when Begin or Resume returns; its state is in ZooKeeper.
type Tx struct {
	c        *Coordinator
	id       string
	path     string
	sites    []string
	payload  []byte
	deadline time.Time
}

// ID returns the transaction id.
func (t *Tx) ID() string {
	if t == nil {
		return ""
	}
	return t.id
}

// Path returns the transaction's node, <root>/<id>.
func (t *Tx) Path() string {
	if t == nil {
		return ""
	}
	return t.path
}

// Sites returns the sites taking part, sorted.
func (t *Tx) Sites() []string {
	if t == nil {
		return nil
	}
	return slices.Clone(t.sites)
}

// Payload returns a copy of the transaction's payload.
func (t *Tx) Payload() []byte {
	if t == nil {
		return nil
	}
	return bytes.Clone(t.payload)
}

// Deadline returns the instant (local clock) after which Decide aborts if
// votes are missing.
func (t *Tx) Deadline() time.Time {
	if t == nil {
		return time.Time{}
	}
	return t.deadline
}

// Begin starts transaction txID among sites with payload: it creates
// <root>/<txID> holding payload and one persistent child <root>/<txID>/<site>
// per site, all in one multi, so nobody ever sees a transaction with part
// of its sites. The vote deadline (WithVoteTimeout) starts now.
//
// Begin is idempotent: when the transaction exists with the same payload
// and the same set of sites (a retry, or the same Begin from a restarted
// coordinator) it returns it; with other content it fails with ErrTxExists.
// Transaction ids must not be reused within the retention period.
//
// Cost: 1 multi (1 + n creates). The first Begin under a missing root: +1
// create per missing level. An existing transaction: +1 getData + 1
// getChildren. An authenticated Session's first Begin under the root: +1
// getACL (recipes.Session.CheckParent; 2 when the root was missing), and an
// error wrapping recipes.ErrOpenParent when the root lets anyone create or
// delete children. Watchers woken: every participant whose Run follows
// the root (one child notification each).
//
// Bad input (invalid id, no sites, duplicate or invalid site names, the
// reserved site name "decision", payload over the session's data limit, a
// done ctx) returns an error before anything is sent.
func (c *Coordinator) Begin(ctx context.Context, txID string, sites []string, payload []byte) (*Tx, error) {
	if err := c.check(ctx); err != nil {
		return nil, err
	}
	if err := validateTxID(txID); err != nil {
		return nil, err
	}
	sorted, err := normalizeSites(sites)
	if err != nil {
		return nil, err
	}
	if err := recipes.CheckData(payload, c.s.MaxData()); err != nil {
		return nil, fmt.Errorf("twophase: payload: %w", err)
	}
	txPath := zkpath.Join(c.root, txID)
	ops := beginOps(txPath, sorted, payload, c.s.ACLFor)
	// The server would drop the connection on a request over its limit:
	// Begin's multi must fit, and so must Collect's, which deletes every
	// node the transaction can grow (it is larger when sites are many).
	if err := fits(c.s, ops...); err != nil {
		return nil, fmt.Errorf("twophase: begin %s: payload and sites: %w", txID, err)
	}
	if err := fits(c.s, collectOps(txPath, sorted)...); err != nil {
		return nil, fmt.Errorf("twophase: begin %s: too many sites to collect in one multi: %w", txID, err)
	}
	// Not recipes.CreateUnder: the root is persistent (ensurePath), not a
	// container, so the squatting check is made here.
	for {
		if err := c.s.CheckParent(ctx, c.root); err != nil {
			return nil, fmt.Errorf("twophase: begin %s: %w", txPath, err)
		}
		err := recipes.Exec(ctx, c.s, func(_ *zk.Conn, _ int64) error {
			_, err := c.s.Conn().Multi(ops...)
			return err
		})
		switch {
		case err == nil:
			c.s.Logger().Debug("twophase: begun", "tx", txPath, "sites", sorted)
			return c.newTx(txID, sorted, payload), nil
		case errors.Is(err, zk.ErrNoNode):
			if err := ensurePath(ctx, c.s, c.root); err != nil {
				return nil, err
			}
			continue
		case errors.Is(err, zk.ErrNodeExists):
			t, err := c.load(ctx, txID)
			if err != nil {
				if errors.Is(err, ErrUnknownTx) {
					continue // collected meanwhile
				}
				return nil, err
			}
			if !bytes.Equal(t.payload, payload) || !slices.Equal(t.sites, sorted) {
				return nil, fmt.Errorf("%w: %s", ErrTxExists, txPath)
			}
			return t, nil
		}
		return nil, fmt.Errorf("twophase: begin %s: %w", txPath, err)
	}
}

// beginOps are Begin's multi: the transaction node with the payload, then
// one node per site, each with the ACL aclFor gives its path. Pure.
func beginOps(txPath string, sites []string, payload []byte, aclFor func(path string) []zk.ACL) []any {
	ops := make([]any, 0, 1+len(sites))
	ops = append(ops, &zk.CreateRequest{Path: txPath, Data: payload, Acl: aclFor(txPath)})
	for _, site := range sites {
		p := zkpath.Join(txPath, site)
		ops = append(ops, &zk.CreateRequest{Path: p, Acl: aclFor(p)})
	}
	return ops
}

// collectOps is the largest multi Collect sends for a transaction: a
// delete of each site's alive, vote and done nodes and of the site node,
// of the decision, and of the transaction node. Pure.
func collectOps(txPath string, sites []string) []any {
	var ops []any
	for _, site := range sites {
		sitePath := zkpath.Join(txPath, site)
		for _, k := range []string{aliveNode, voteNode, doneNode} {
			ops = append(ops, &zk.DeleteRequest{Path: zkpath.Join(sitePath, k), Version: -1})
		}
		ops = append(ops, &zk.DeleteRequest{Path: sitePath, Version: -1})
	}
	return append(ops,
		&zk.DeleteRequest{Path: zkpath.Join(txPath, decisionNode), Version: -1},
		&zk.DeleteRequest{Path: txPath, Version: -1})
}

func (c *Coordinator) newTx(id string, sites []string, payload []byte) *Tx {
	return &Tx{
		c: c, id: id, path: zkpath.Join(c.root, id), sites: sites,
		payload: bytes.Clone(payload), deadline: time.Now().Add(c.cfg.voteTimeout),
	}
}

// load reads a transaction from ZooKeeper. Cost: 1 getData + 1 getChildren.
func (c *Coordinator) load(ctx context.Context, txID string) (*Tx, error) {
	txPath := zkpath.Join(c.root, txID)
	payload, _, err := get(ctx, c.s, txPath)
	if err == nil {
		var kids []string
		kids, _, err = children(ctx, c.s, txPath)
		if err == nil {
			sites := slices.DeleteFunc(kids, func(k string) bool { return k == decisionNode })
			slices.Sort(sites)
			return c.newTx(txID, sites, payload), nil
		}
	}
	if errors.Is(err, zk.ErrNoNode) {
		return nil, fmt.Errorf("%w: %s", ErrUnknownTx, txPath)
	}
	return nil, fmt.Errorf("twophase: read %s: %w", txPath, err)
}

// Resume returns the transaction txID from what is in ZooKeeper, for a
// coordinator that restarted: its payload and sites, and a fresh vote
// deadline (WithVoteTimeout from now). Decide then finishes it. A missing
// transaction is ErrUnknownTx. Cost: 1 getData + 1 getChildren.
func (c *Coordinator) Resume(ctx context.Context, txID string) (*Tx, error) {
	if err := c.check(ctx); err != nil {
		return nil, err
	}
	if err := validateTxID(txID); err != nil {
		return nil, err
	}
	return c.load(ctx, txID)
}

// Pending lists the ids of the transactions under the root that have no
// decision yet, sorted: what a restarted coordinator should Resume. Other
// children of the root (a node with no site node under it, or whose name
// is not a valid transaction id: not made by Begin) are left out. Cost:
// 1 getChildren of the root + 1 getChildren per child of the root.
func (c *Coordinator) Pending(ctx context.Context) ([]string, error) {
	if err := c.check(ctx); err != nil {
		return nil, err
	}
	txs, _, err := children(ctx, c.s, c.root)
	if errors.Is(err, zk.ErrNoNode) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("twophase: list %s: %w", c.root, err)
	}
	slices.Sort(txs)
	var out []string
	for _, tx := range txs {
		kids, _, err := children(ctx, c.s, zkpath.Join(c.root, tx))
		if errors.Is(err, zk.ErrNoNode) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("twophase: list %s: %w", tx, err)
		}
		if isTx(tx, kids) && !slices.Contains(kids, decisionNode) {
			out = append(out, tx)
		}
	}
	return out, nil
}

// isTx reports whether a child of the root named tx, whose children are
// kids, is a transaction: Begin creates a transaction together with its
// site nodes (at least one) in one multi, and Collect deletes them
// together, so a node without a site node (a node named "decision" planted
// at the root, for one) is not one. Pure.
func isTx(tx string, kids []string) bool {
	if validateTxID(tx) != nil {
		return false
	}
	return slices.ContainsFunc(kids, func(k string) bool { return validateSite(k) == nil })
}

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
