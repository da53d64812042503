package twophase

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/internal/zkpath"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// Collect garbage-collects the transactions under the root, on the
// servers' clock (no local clock is compared with ZooKeeper's):
//
//   - a transaction decided more than the retention period ago
//     (WithRetention) is deleted, with every node under it, in one multi:
//     nobody ever sees part of a transaction;
//   - a transaction begun more than the retention period ago and still
//     undecided (its coordinator and participants gave up) is decided
//     Abort; it is deleted by a Collect one retention period later.
//
// It returns the number of transactions deleted. Run it periodically (for
// example every retention/2) from any one process; concurrent Collects are
// safe (a multi that finds its transaction changed or gone is skipped).
// A participant that comes back after its transaction was collected gets
// ErrUnknownTx; transaction ids must not be reused within the retention.
//
// Collect empties the root node's data: the package keeps nothing there.
// It leaves alone the other children of the root, those Pending leaves
// out (no site node under them, or a name that is not a transaction id).
//
// Cost: 1 setData on the root (its mtime is the servers' "now"), 1
// getChildren of the root, then per transaction 1 getChildren and, when
// decided, 1 exists of the decision; per transaction deleted: 1
// getChildren per site + 1 multi (wakes each streaming participant once,
// through its watch on the root).
//
// A transaction whose nodes no longer fit one multi (Begin leaves room for
// this package's own nodes, so only nodes created by others can cause it)
// is left in place; Collect goes on with the others and then returns an
// error wrapping recipes.ErrDataTooLarge.
func (c *Coordinator) Collect(ctx context.Context) (int, error) {
	if err := c.check(ctx); err != nil {
		return 0, err
	}
	s := c.s
	if err := fits(s, &zk.SetDataRequest{Path: c.root}); err != nil {
		return 0, err
	}
	var now *zk.Stat
	err := recipes.Exec(ctx, s, func(_ *zk.Conn, _ int64) (err error) {
		now, err = s.Conn().Set(c.root, nil, -1)
		return err
	})
	if errors.Is(err, zk.ErrNoNode) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("twophase: collect %s: %w", c.root, err)
	}
	txs, _, err := children(ctx, s, c.root)
	if errors.Is(err, zk.ErrNoNode) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("twophase: list %s: %w", c.root, err)
	}
	slices.Sort(txs)
	retention := c.cfg.retention.Milliseconds()
	deleted := 0
	var tooLarge error // the first transaction too large to delete in one multi
	for _, tx := range txs {
		txPath := zkpath.Join(c.root, tx)
		kids, st, err := children(ctx, s, txPath)
		if errors.Is(err, zk.ErrNoNode) {
			continue
		}
		if err != nil {
			return deleted, fmt.Errorf("twophase: list %s: %w", txPath, err)
		}
		if !isTx(tx, kids) {
			continue // not made by Begin: not ours to abort or delete
		}
		if !slices.Contains(kids, decisionNode) {
			if st.Ctime+retention <= now.Mtime {
				if _, err := writeDecision(ctx, s, txPath, Abort, "abandoned: undecided for the whole retention period"); err != nil && !errors.Is(err, ErrUnknownTx) {
					return deleted, err
				}
			}
			continue
		}
		var dst *zk.Stat
		var ok bool
		err = recipes.Exec(ctx, s, func(_ *zk.Conn, _ int64) (err error) {
			ok, dst, err = s.Conn().Exists(zkpath.Join(txPath, decisionNode))
			return err
		})
		if err != nil {
			return deleted, fmt.Errorf("twophase: exists decision of %s: %w", txPath, err)
		}
		if !ok || dst.Ctime+retention > now.Mtime {
			continue
		}
		gone, err := c.deleteTx(ctx, txPath, kids)
		if errors.Is(err, recipes.ErrDataTooLarge) {
			// Nodes not of this package made it too large: the others
			// are still collected.
			if tooLarge == nil {
				tooLarge = err
			}
			continue
		}
		if err != nil {
			return deleted, err
		}
		if gone {
			deleted++
		}
	}
	return deleted, tooLarge
}

// deleteTx deletes txPath and everything under it in one multi. It reports
// false (and no error) when the transaction changed or vanished meanwhile.
func (c *Coordinator) deleteTx(ctx context.Context, txPath string, kids []string) (bool, error) {
	s := c.s
	var ops []any
	for _, k := range kids {
		kPath := zkpath.Join(txPath, k)
		if k != decisionNode {
			grand, _, err := children(ctx, s, kPath)
			if errors.Is(err, zk.ErrNoNode) {
				return false, nil
			}
			if err != nil {
				return false, fmt.Errorf("twophase: list %s: %w", kPath, err)
			}
			for _, g := range grand {
				ops = append(ops, &zk.DeleteRequest{Path: zkpath.Join(kPath, g), Version: -1})
			}
		}
		ops = append(ops, &zk.DeleteRequest{Path: kPath, Version: -1})
	}
	ops = append(ops, &zk.DeleteRequest{Path: txPath, Version: -1})
	if err := fits(s, ops...); err != nil {
		return false, fmt.Errorf("twophase: delete %s: %w", txPath, err)
	}
	tried := false
	err := recipes.Exec(ctx, s, func(_ *zk.Conn, _ int64) error {
		if tried {
			// The previous multi's outcome is unknown: was it applied?
			ok, _, err := s.Conn().Exists(txPath)
			if err == nil && !ok {
				return nil
			}
			if err != nil {
				return err
			}
		}
		tried = true
		_, err := s.Conn().Multi(ops...)
		return err
	})
	switch {
	case err == nil:
		s.Logger().Debug("twophase: collected", "tx", txPath)
		return true, nil
	case errors.Is(err, zk.ErrNoNode), errors.Is(err, zk.ErrNotEmpty):
		return false, nil
	}
	return false, fmt.Errorf("twophase: delete %s: %w", txPath, err)
}
