package twophase

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/internal/zkpath"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// This file holds the request mechanics: wait for a usable session, retry
// a request whose outcome is unknown, create paths, read and write the
// decision node. Every request goes through recipes.Exec, so a request is
// only sent on a connected session and a connection error is retried
// (callers make their requests idempotent: creates treat NodeExists as
// "look at what is there").

// fits refuses, before anything is sent, a write (ops: one request, or
// several for a multi) larger than the session's request limit: the server
// would close the connection on it, and every retry would fail the same
// way. The error wraps recipes.ErrDataTooLarge. Pure.
func fits(s *recipes.Session, ops ...any) error {
	var err error
	if len(ops) == 1 {
		err = recipes.CheckRequest(s.MaxData(), ops[0])
	} else {
		err = recipes.CheckMulti(s.MaxData(), ops...)
	}
	if err != nil {
		return fmt.Errorf("twophase: %w", err)
	}
	return nil
}

// ensurePath creates p and its missing ancestors as persistent nodes: the
// root every participant watches outlives its last transaction, where a
// container (recipes.CreateUnder's parents) would be reaped. Cost: 1
// create per level tried.
func ensurePath(ctx context.Context, s *recipes.Session, p string) error {
	if p == "/" {
		return nil
	}
	if err := fits(s, &zk.CreateRequest{Path: p, Acl: s.ACLFor(p)}); err != nil {
		return err
	}
	err := recipes.Exec(ctx, s, func(_ *zk.Conn, _ int64) error {
		_, err := s.Conn().Create(p, nil, 0, s.ACLFor(p))
		return err
	})
	switch {
	case err == nil, errors.Is(err, zk.ErrNodeExists):
		return nil
	case errors.Is(err, zk.ErrNoNode):
		parent, _ := zkpath.Split(p)
		if err := ensurePath(ctx, s, parent); err != nil {
			return err
		}
		return ensurePath(ctx, s, p)
	}
	return fmt.Errorf("twophase: create %s: %w", p, err)
}

// readDecision reads the decision node of the transaction at txPath.
// ok=false when there is none yet. Cost: 1 getData.
func readDecision(ctx context.Context, s *recipes.Session, txPath string) (d Decision, reason string, ok bool, err error) {
	data, _, zerr := get(ctx, s, zkpath.Join(txPath, decisionNode))
	switch {
	case errors.Is(zerr, zk.ErrNoNode):
		return 0, "", false, nil
	case zerr != nil:
		return 0, "", false, fmt.Errorf("twophase: read decision of %s: %w", txPath, zerr)
	}
	d, reason, err = parseDecision(data)
	if err != nil {
		return 0, "", false, fmt.Errorf("twophase: decision of %s: %w", txPath, err)
	}
	return d, reason, true, nil
}

// writeDecision creates the decision node of txPath with d, unless one
// exists: whoever creates it first decides, and the decision returned is
// the one in ZooKeeper (d, or the earlier one). A create whose outcome is
// unknown is sent again; NodeExists then reads back what was written (ours
// or someone else's, either way the decision). Cost: 1 create (+1 getData
// when it exists). Wakes the watcher of every site waiting on the decision
// (n notifications).
func writeDecision(ctx context.Context, s *recipes.Session, txPath string, d Decision, reason string) (Decision, error) {
	if !d.valid() {
		return 0, fmt.Errorf("%w: %v", ErrBadDecision, d)
	}
	path := zkpath.Join(txPath, decisionNode)
	data := encodeDecision(d, reason)
	if err := fits(s, &zk.CreateRequest{Path: path, Data: data, Acl: s.ACLFor(path)}); err != nil {
		return 0, err
	}
	for {
		zerr := recipes.Exec(ctx, s, func(_ *zk.Conn, _ int64) error {
			_, err := s.Conn().Create(path, data, 0, s.ACLFor(path))
			return err
		})
		switch {
		case zerr == nil:
			s.Logger().Info("twophase: decided", "tx", txPath, "decision", d.String(), "reason", reason)
			return d, nil
		case errors.Is(zerr, zk.ErrNoNode):
			return 0, fmt.Errorf("%w: %s", ErrUnknownTx, txPath)
		case !errors.Is(zerr, zk.ErrNodeExists):
			return 0, fmt.Errorf("twophase: create %s: %w", path, zerr)
		}
		got, _, ok, err := readDecision(ctx, s, txPath)
		if err != nil {
			return 0, err
		}
		if ok {
			return got, nil
		}
		// Deleted between our create and our read: only Collect deletes
		// decisions, with the whole transaction.
	}
}

// children lists path. Cost: 1 getChildren (retried on connection errors).
func children(ctx context.Context, s *recipes.Session, path string) ([]string, *zk.Stat, error) {
	var kids []string
	var st *zk.Stat
	err := recipes.Exec(ctx, s, func(_ *zk.Conn, _ int64) (err error) {
		kids, st, err = s.Conn().Children(path)
		return err
	})
	return kids, st, err
}

// get reads path. Cost: 1 getData (retried on connection errors).
func get(ctx context.Context, s *recipes.Session, path string) ([]byte, *zk.Stat, error) {
	var data []byte
	var st *zk.Stat
	err := recipes.Exec(ctx, s, func(_ *zk.Conn, _ int64) (err error) {
		data, st, err = s.Conn().Get(path)
		return err
	})
	return data, st, err
}
