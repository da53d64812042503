package twophase

import (
	"bytes"
	"context"
	"errors"
	"fmt"
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
