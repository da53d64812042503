package twophase

import (
	"context"
	"errors"
	"fmt"
	"slices"
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
