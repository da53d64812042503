// A Proposal: one transaction as a site sees it, and what the site does with
// it (Vote, Await, Finish).

package twophase

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/internal/zkpath"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// Proposal is one transaction as a site sees it. Its fields are fixed when
// it is read; votes and the decision are in ZooKeeper.
type Proposal struct {
	p        *Site
	tx       string
	path     string
	sitePath string
	sites    []string
	payload  []byte
	deadline time.Time // zero: no participant deadline
	decided  Decision  // decision known when read, 0 if none
	finished bool      // this site had finished it when read

	mu    sync.Mutex
	voted Decision // this site's vote, 0 if none known
}

// TxID returns the transaction id.
func (pr *Proposal) TxID() string {
	if pr == nil {
		return ""
	}
	return pr.tx
}

// Site returns this participant's site.
func (pr *Proposal) Site() string {
	if pr == nil {
		return ""
	}
	return pr.p.site
}

// Sites returns every site of the transaction, sorted.
func (pr *Proposal) Sites() []string {
	if pr == nil {
		return nil
	}
	return slices.Clone(pr.sites)
}

// Payload returns a copy of the transaction's payload.
func (pr *Proposal) Payload() []byte {
	if pr == nil {
		return nil
	}
	return bytes.Clone(pr.payload)
}

// Voted returns this site's vote as known to this Proposal (read with it,
// or cast through it), or 0 if none.
func (pr *Proposal) Voted() Decision {
	if pr == nil {
		return 0
	}
	pr.mu.Lock()
	defer pr.mu.Unlock()
	return pr.voted
}

// Deadline returns the instant (local clock) after which Await decides
// abort itself; zero when WithDeadline disabled it.
func (pr *Proposal) Deadline() time.Time {
	if pr == nil {
		return time.Time{}
	}
	return pr.deadline
}

// Vote writes this site's vote, Commit or Abort, as the persistent node
// <root>/<tx>/<site>/vote. A vote is written once: voting again with the
// same vote returns nil; with the other one, ErrVoteConflict (the first
// vote stands). A vote written after the decision changes nothing.
//
// Voting Commit means this site is prepared: it must be able to commit
// whatever happens to it, until it learns the decision (Await, possibly
// after a restart: Run delivers again a decided transaction whose
// site has not finished, until it is collected).
//
// Cost: 1 create (+1 getData when a vote exists). Wakes the coordinator's
// watch on this site (1 notification).
func (pr *Proposal) Vote(ctx context.Context, v Decision) error {
	if pr == nil {
		return ErrNilReceiver
	}
	if err := pr.p.check(ctx); err != nil {
		return err
	}
	if !v.valid() {
		return fmt.Errorf("%w: %v", ErrBadDecision, v)
	}
	s := pr.p.s
	path := zkpath.Join(pr.sitePath, voteNode)
	if err := fits(s, &zk.CreateRequest{Path: path, Data: encodeDecision(v, ""), Acl: s.ACLFor(path)}); err != nil {
		return err
	}
	err := recipes.Exec(ctx, s, func(_ *zk.Conn, _ int64) error {
		_, err := s.Conn().Create(path, encodeDecision(v, ""), 0, s.ACLFor(path))
		return err
	})
	switch {
	case err == nil:
	case errors.Is(err, zk.ErrNoNode):
		return fmt.Errorf("%w: %s", ErrUnknownTx, pr.path)
	case errors.Is(err, zk.ErrNodeExists):
		// Voted before (or this create was applied and its answer lost).
		got, err := readVote(ctx, s, pr.sitePath)
		if err != nil {
			return err
		}
		if got == 0 {
			return fmt.Errorf("%w: %s: vote vanished", ErrUnknownTx, pr.path)
		}
		if got != v {
			pr.setVoted(got)
			return fmt.Errorf("%w: %s voted %v, not %v", ErrVoteConflict, pr.sitePath, got, v)
		}
	default:
		return fmt.Errorf("twophase: vote %s: %w", path, err)
	}
	pr.setVoted(v)
	return nil
}

func (pr *Proposal) setVoted(v Decision) {
	pr.mu.Lock()
	pr.voted = v
	pr.mu.Unlock()
}

// Await waits for the transaction's decision and returns it. If the
// participant's deadline (WithDeadline) passes first, Await decides Abort
// itself: it creates the decision node unless someone did first, and
// returns whichever decision is there. Safe, because nobody commits before
// the decision node says commit, and it is written once. Apply the
// decision, then call Finish.
//
// If the transaction is gone (collected), the error is ErrUnknownTx. While
// the connection is down Await keeps waiting; after a session loss it
// watches again under the new session.
//
// Cost: 1 exists (a watch on the decision node) + 1 exists of the
// transaction, again after each notification; then 1 getData of the
// decision. Decided already: 1 exists + 1 getData. The only notification
// this site gets is the decision's creation (1 per site).
func (pr *Proposal) Await(ctx context.Context) (Decision, error) {
	if pr == nil {
		return 0, ErrNilReceiver
	}
	if err := pr.p.check(ctx); err != nil {
		return 0, err
	}
	s := pr.p.s
	decisionPath := zkpath.Join(pr.path, decisionNode)
	var deadline <-chan time.Time
	if !pr.deadline.IsZero() {
		t := time.NewTimer(time.Until(pr.deadline))
		defer t.Stop()
		deadline = t.C
	}
	for {
		var found, txThere bool
		var ch <-chan zk.Event
		err := recipes.Exec(ctx, s, func(_ *zk.Conn, _ int64) (err error) {
			found, _, ch, err = s.Conn().ExistsW(decisionPath)
			if err != nil || found {
				return err
			}
			txThere, _, err = s.Conn().Exists(pr.path)
			return err
		})
		if err != nil {
			return 0, fmt.Errorf("twophase: watch %s: %w", decisionPath, err)
		}
		if found {
			d, _, ok, err := readDecision(ctx, s, pr.path)
			if err != nil {
				return 0, err
			}
			if ok {
				return d, nil
			}
			continue
		}
		if !txThere {
			return 0, fmt.Errorf("%w: %s", ErrUnknownTx, pr.path)
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return 0, recipes.ContextError(ctx)
		case <-deadline:
			d, err := writeDecision(ctx, s, pr.path, Abort,
				fmt.Sprintf("site %s saw no decision before its deadline", pr.p.site))
			if err != nil {
				return 0, err
			}
			return d, nil
		}
	}
}

// Finish records that this site has applied the decision: it creates
// <root>/<tx>/<site>/done (only if the decision exists, in the same multi)
// and deletes the site's liveness node if it is our session's (a node
// another process of this site took over is left to that process). Run does not deliver a
// finished transaction again. Call it once the decision is applied
// durably; a site that stops before it gets the transaction again from its
// next Run (so applying a decision must be idempotent). Finishing
// twice is fine. An undecided transaction is ErrNotDecided; a missing one,
// ErrUnknownTx.
//
// Cost: 1 multi (check of the decision + create) + 1 exists (the liveness
// node's owner) + 1 delete when it is ours (+1 exists when the multi finds
// no decision). Wakes nobody
// who is waiting (the coordinator no longer watches a site that voted).
func (pr *Proposal) Finish(ctx context.Context) error {
	if pr == nil {
		return ErrNilReceiver
	}
	if err := pr.p.check(ctx); err != nil {
		return err
	}
	s := pr.p.s
	ops := []any{
		&zk.CheckVersionRequest{Path: zkpath.Join(pr.path, decisionNode), Version: -1},
		&zk.CreateRequest{Path: zkpath.Join(pr.sitePath, doneNode), Acl: s.ACLFor(zkpath.Join(pr.sitePath, doneNode))},
	}
	if err := fits(s, ops...); err != nil {
		return err
	}
	var res []zk.MultiResponse
	err := recipes.Exec(ctx, s, func(_ *zk.Conn, _ int64) (err error) {
		res, err = s.Conn().Multi(ops...)
		return err
	})
	switch {
	case err == nil, errors.Is(err, zk.ErrNodeExists):
	case errors.Is(err, zk.ErrNoNode):
		var there bool
		if err := recipes.Exec(ctx, s, func(_ *zk.Conn, _ int64) (err error) {
			there, _, err = s.Conn().Exists(pr.path)
			return err
		}); err != nil {
			return fmt.Errorf("twophase: finish %s: %w", pr.sitePath, err)
		}
		if there && len(res) > 0 && errors.Is(res[0].Error, zk.ErrNoNode) {
			return fmt.Errorf("%w: %s", ErrNotDecided, pr.path)
		}
		return fmt.Errorf("%w: %s", ErrUnknownTx, pr.path)
	default:
		return fmt.Errorf("twophase: finish %s: %w", pr.sitePath, err)
	}
	// Only our session's liveness node: another process of this site (a
	// restart) may have taken the path over (markAlive), and its node must
	// stay until it finishes. A node of an earlier session of ours went
	// with that session.
	alive := zkpath.Join(pr.sitePath, aliveNode)
	err = recipes.ContextError(ctx)
	var sid int64
	if err == nil {
		sid, err = s.WaitUsable(ctx)
	}
	if err == nil {
		err = s.DeleteOwned(ctx, alive, 0, sid)
	}
	if err != nil {
		return fmt.Errorf("twophase: delete %s: %w", alive, err)
	}
	return nil
}

// Finished reports whether this site had finished the transaction when the
// proposal was read (only Lookup returns such proposals).
func (pr *Proposal) Finished() bool {
	if pr == nil {
		return false
	}
	return pr.finished
}

// Decision returns the decision known when the proposal was read (0 if it
// was undecided then). Use Await for the current one.
func (pr *Proposal) Decision() Decision {
	if pr == nil {
		return 0
	}
	return pr.decided
}
