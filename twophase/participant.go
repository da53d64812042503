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

// Site is one site of the transactions under a root: it learns the
// transactions that name it, marks itself alive in each, votes, and awaits
// the decision.
//
// A Site keeps no state of its own beyond its configuration: a
// restarted participant (a new Site for the same site, on any
// session) finds its open transactions again with Run or Lookup,
// including its earlier votes.
//
// A Site is safe for concurrent use; so is a Proposal.
type Site struct {
	s    *recipes.Session
	root string
	site string
	cfg  participantConfig
}

// NewSite returns the Site of site for transactions under
// root. It sends nothing. It fails, wrapping a sentinel, on a nil session
// (recipes.ErrNilSession), a root NewCoordinator refuses
// (recipes.ErrInvalidPath, recipes.ErrDataTooLarge), or a site that is not
// a single valid path segment or is the reserved name "decision"
// (ErrBadSite and recipes.ErrBadArgument).
// Option: WithDeadline.
func NewSite(s *recipes.Session, root, site string, opts ...SiteOption) (*Site, error) {
	if err := checkSessionRoot(s, root); err != nil {
		return nil, err
	}
	if err := validateSite(site); err != nil {
		return nil, fmt.Errorf("%w (%w)", err, recipes.ErrBadArgument)
	}
	return &Site{s: s, root: root, site: site, cfg: newParticipantConfig(opts)}, nil
}

// Site returns the participant's site name.
func (p *Site) Site() string {
	if p == nil {
		return ""
	}
	return p.site
}

func (p *Site) check(ctx context.Context) error {
	if p == nil {
		return ErrNilReceiver
	}
	if err := recipes.ContextError(ctx); err != nil {
		return err
	}
	if p.s.State() == recipes.StateClosed {
		return fmt.Errorf("twophase: %w", recipes.ErrClosed)
	}
	return nil
}

// Run streams the transactions that name this site and that this
// site has not finished (Proposal.Finish), on the returned Stream's C: every
// undecided one, including those begun while this site was away and those
// it already voted in (see Proposal.Voted), and every decided one not
// finished yet (Proposal.Decision says how it ended; Await returns at
// once). So a site that restarts gets back everything it may still have to
// apply. Each is delivered once per call. Before a proposal is delivered
// for an undecided transaction this site has not voted in, its liveness
// node <root>/<tx>/<site>/alive is created, ephemeral, so the coordinator
// sees this site's session end.
//
// C is closed when ctx is done, when the reader calls Stop, when the
// session is closed, or on an error that is not retried (the root cannot
// be listed or created); at once on a nil Site. Then the Stream's
// Err says why: nil after Stop, ctx's error, an error wrapping
// recipes.ErrClosed, or the error met. Transient connection errors are
// retried; a transaction that cannot be read (corrupt data, a refused
// request) is logged and skipped. One goroutine runs until C is closed:
// read C until then, or call Stop (or cancel ctx); it ends even if it was
// about to send.
//
// Cost: 1 getChildren of the root (with a child watch) per change of the
// root's children, so every Begin under the root wakes each streaming
// participant once; then, per transaction not seen before: 1 getChildren
// of the transaction (to learn whether it names this site); for one that
// does: 1 getChildren of our site node, 1 getData of the payload, 1 create
// of the liveness node, and a getData for a vote or decision already
// there. The root is created if missing (1 create per missing level).
func (p *Site) Run(ctx context.Context) *recipes.Stream[*Proposal] {
	return recipes.StartStream(ctx, func(ctx context.Context, out chan<- *Proposal) error {
		if err := p.check(ctx); err != nil {
			return err
		}
		return p.stream(ctx, out)
	})
}

// stream is Run's producer: it returns nil once ctx is done, or the
// error that ended it.
func (p *Site) stream(ctx context.Context, out chan<- *Proposal) error {
	log := p.s.Logger()
	seen := map[string]bool{}
	for {
		var txs []string
		var ch <-chan zk.Event
		err := recipes.Exec(ctx, p.s, func(_ *zk.Conn, _ int64) (err error) {
			txs, _, ch, err = p.s.Conn().ChildrenW(p.root)
			return err
		})
		switch {
		case ctx.Err() != nil:
			return nil
		case errors.Is(err, zk.ErrNoNode):
			if err := ensurePath(ctx, p.s, p.root); err != nil {
				if ctx.Err() != nil {
					return nil
				}
				return fmt.Errorf("twophase: create root %s: %w", p.root, err)
			}
			continue
		case err != nil:
			return fmt.Errorf("twophase: list transactions %s: %w", p.root, err)
		}
		slices.Sort(txs)
		next := make(map[string]bool, len(txs))
		for _, tx := range txs {
			if seen[tx] {
				next[tx] = true
				continue
			}
			prop, err := p.examine(ctx, tx, skipDecided)
			switch {
			case err == nil, errors.Is(err, ErrNotInTx), errors.Is(err, ErrUnknownTx):
				next[tx] = true
			case ctx.Err() != nil:
				return nil
			case errors.Is(err, recipes.ErrClosed):
				return fmt.Errorf("twophase: transactions %s: %w", p.root, err)
			default:
				// Corrupt data or a refused request: do not stop the
				// stream for one bad transaction.
				log.Warn("twophase: read transaction", "root", p.root, "tx", tx, "err", err)
				next[tx] = true
			}
			if prop == nil {
				continue
			}
			select {
			case out <- prop:
			case <-ctx.Done():
				return nil
			}
		}
		seen = next
		select {
		case <-ch:
		case <-ctx.Done():
			return nil
		}
	}
}

// Lookup returns the proposal of transaction txID for this site, decided
// or not: ErrUnknownTx if there is no such transaction, ErrNotInTx if it
// does not name this site. Like Run, it creates the liveness node
// when the transaction is undecided and this site has not voted. Cost: 2
// getChildren + 1 getData (+1 create, + a getData per vote or decision
// found).
func (p *Site) Lookup(ctx context.Context, txID string) (*Proposal, error) {
	if err := p.check(ctx); err != nil {
		return nil, err
	}
	if err := validateTxID(txID); err != nil {
		return nil, err
	}
	return p.examine(ctx, txID, withDecided)
}

// decided says whether examine returns a decided transaction this site
// did not vote commit in.
type decided bool

const (
	skipDecided decided = false // nil for it (Run's scan)
	withDecided decided = true  // it too (Proposal)
)

// examine reads transaction tx for this site. Unless all is withDecided it returns
// nil for a decided transaction this site did not vote commit in.
func (p *Site) examine(ctx context.Context, tx string, all decided) (*Proposal, error) {
	txPath := zkpath.Join(p.root, tx)
	kids, _, err := children(ctx, p.s, txPath)
	if errors.Is(err, zk.ErrNoNode) {
		return nil, fmt.Errorf("%w: %s", ErrUnknownTx, txPath)
	}
	if err != nil {
		return nil, fmt.Errorf("twophase: list %s: %w", txPath, err)
	}
	if !slices.Contains(kids, p.site) {
		return nil, fmt.Errorf("%w: %s has no site %q", ErrNotInTx, txPath, p.site)
	}
	decided := slices.Contains(kids, decisionNode)
	sites := slices.DeleteFunc(kids, func(k string) bool { return k == decisionNode })
	slices.Sort(sites)
	sitePath := zkpath.Join(txPath, p.site)
	mine, _, err := children(ctx, p.s, sitePath)
	if errors.Is(err, zk.ErrNoNode) {
		return nil, fmt.Errorf("%w: %s", ErrUnknownTx, txPath)
	}
	if err != nil {
		return nil, fmt.Errorf("twophase: list %s: %w", sitePath, err)
	}
	finished := slices.Contains(mine, doneNode)
	if finished && all == skipDecided {
		return nil, nil // nothing left to do for this site
	}
	var vote Decision
	if slices.Contains(mine, voteNode) {
		if vote, err = readVote(ctx, p.s, sitePath); err != nil {
			return nil, err
		}
	}
	var decision Decision
	if decided {
		d, _, ok, err := readDecision(ctx, p.s, txPath)
		if err != nil {
			return nil, err
		}
		if ok {
			decision = d
		}
	}
	if decision == 0 && vote == 0 {
		if err := p.markAlive(ctx, sitePath); err != nil {
			return nil, err
		}
	}
	payload, _, err := get(ctx, p.s, txPath)
	if errors.Is(err, zk.ErrNoNode) {
		return nil, fmt.Errorf("%w: %s", ErrUnknownTx, txPath)
	}
	if err != nil {
		return nil, fmt.Errorf("twophase: read %s: %w", txPath, err)
	}
	prop := &Proposal{
		p: p, tx: tx, path: txPath, sitePath: sitePath, sites: sites, payload: payload,
		voted: vote, decided: decision, finished: finished,
	}
	if p.cfg.deadline > 0 {
		prop.deadline = time.Now().Add(p.cfg.deadline)
	}
	return prop, nil
}

// aliveData identifies this process in liveness nodes: "host:pid".
var aliveData = []byte(recipes.ProcessID())

// markAlive creates <site>/alive, ephemeral, owned by the current session.
// A liveness node of another session of this site (an earlier process) is
// replaced in one multi (delete + create), so the coordinator never sees
// the site without one. Cost: 1 create; if one exists: +1 exists (+1
// multi).
func (p *Site) markAlive(ctx context.Context, sitePath string) error {
	path := zkpath.Join(sitePath, aliveNode)
	replace := []any{
		&zk.DeleteRequest{Path: path, Version: -1},
		&zk.CreateRequest{Path: path, Data: aliveData, Acl: p.s.ACLFor(path), Flags: zk.FlagEphemeral},
	}
	if err := fits(p.s, replace...); err != nil { // the create alone is smaller
		return err
	}
	for range 10 {
		var sid int64
		err := recipes.Exec(ctx, p.s, func(_ *zk.Conn, id int64) error {
			sid = id
			_, err := p.s.Conn().Create(path, aliveData, zk.FlagEphemeral, p.s.ACLFor(path))
			return err
		})
		switch {
		case err == nil:
			return nil
		case errors.Is(err, zk.ErrNoNode):
			return fmt.Errorf("%w: %s", ErrUnknownTx, sitePath)
		case !errors.Is(err, zk.ErrNodeExists):
			return fmt.Errorf("twophase: create %s: %w", path, err)
		}
		var ok bool
		var st *zk.Stat
		err = recipes.Exec(ctx, p.s, func(_ *zk.Conn, id int64) (err error) {
			sid = id
			ok, st, err = p.s.Conn().Exists(path)
			return err
		})
		switch {
		case err != nil:
			return fmt.Errorf("twophase: exists %s: %w", path, err)
		case !ok:
			continue
		case st.EphemeralOwner == sid:
			return nil // ours (an earlier attempt whose answer was lost)
		}
		err = recipes.Exec(ctx, p.s, func(_ *zk.Conn, _ int64) error {
			_, err := p.s.Conn().Multi(
				&zk.DeleteRequest{Path: path, Version: st.Version},
				&zk.CreateRequest{Path: path, Data: aliveData, Acl: p.s.ACLFor(path), Flags: zk.FlagEphemeral},
			)
			return err
		})
		switch {
		case err == nil:
			return nil
		case errors.Is(err, zk.ErrNoNode), errors.Is(err, zk.ErrBadVersion), errors.Is(err, zk.ErrNodeExists):
			continue // changed meanwhile (or our multi's answer was lost): look again
		default:
			return fmt.Errorf("twophase: replace %s: %w", path, err)
		}
	}
	return fmt.Errorf("twophase: %s keeps changing", path)
}

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
