package workloads

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/chaos/checkers"
	"github.com/zkrecipes/zkrecipes/chaos/cluster"
	"github.com/zkrecipes/zkrecipes/chaos/history"
	"github.com/zkrecipes/zkrecipes/recipes"
	"github.com/zkrecipes/zkrecipes/twophase"
)

// TwoPhase is the workload of package twophase: the first client is the
// coordinator, every other client a twophase.Site, each with its own
// recipes.Session on its own link. The coordinator begins transactions
// "tx-<n>" among all sites one after another, recorded as begin
// operations, and records Decide as a decide operation (Key = tx, ok
// Value 1 commit / 0 abort). Each site streams its transactions, votes
// (commit, except every fifth transaction of the second site, which it
// aborts), awaits the decision and finishes; votes are recorded as vote
// operations (ok Value = the vote) and the decision each site ends with as
// a learn operation. A vote whose outcome the site could not learn is
// unknown.
//
// Crashes: at moments drawn from a generator seeded with the scenario's
// root (which names the scenario and the run's seed, so a run replays),
// the workload closes the coordinator's session twice, once between Begin
// and Decide and once right after Decide returned, and one site's session
// twice, once before it voted and once after (recorded as crash events),
// each pair in a drawn order at drawn transaction counts.
// Each time a new session of the same client (same link, so faults still
// reach it) takes over: the coordinator resumes every transaction Pending
// lists and decides it, and after its crash past a decision resumes that
// transaction and decides it again (it must read the decision written);
// the site runs Site.Run again and gets back the transactions it
// had not finished, votes in them if it had not, learns their decision
// and finishes them (recorded as resume events). A crash waits until no
// fault window is open and a session timeout has passed since the last
// heal, so a new session never passes for a trace of the fault (see
// checkers.Exercised); crashes not reached before ctx is done are skipped.
//
// When ctx is done the coordinator begins nothing more and finishes the
// transaction in flight, and each site stops taking new transactions but
// awaits the decision of those it voted in, or got back after a crash
// (the coordinator's vote timeout and the sites' deadline bound the wait).
// Then the workload reads back, straight from the servers, every
// transaction's vote nodes and decision (read-back events: the truth
// behind votes and decisions of unknown outcome; a decision's Arg is its
// node's data version), collects every transaction (Coordinator.Collect
// with a millisecond's retention, twice) and records what Collect left
// under the root as litter.
//
// Checked by: every transaction begun is decided, once, and every decision
// reported is the one read back; a commit only when every site's commit
// vote is read back; every site that voted, or resumed a transaction,
// ends with the decision (two-phase-commit); liveness after every heal; no
// node left (ephemeral, or a transaction after Collect).
type TwoPhase struct{}

// Name is "twophase".
func (w *TwoPhase) Name() string { return "twophase" }

// Checkers: two-phase-commit, liveness, no-nodes-left.
func (w *TwoPhase) Checkers(cfg CheckConfig) []checkers.Checker {
	return []checkers.Checker{checkers.TwoPhaseCommit(), checkers.Liveness(cfg.LivenessBound), checkers.NoNodesLeft()}
}

// crashAt is one planned crash: at the n-th transaction (coordinator) or
// proposal (site), or at the first one after it that is at the right point
// in a quiet moment.
type crashAt struct {
	n     int
	where string
}

// crashPlan is the seeded plan of one run: the coordinator's two crashes,
// the site that crashes and its two crashes, each pair in a drawn order.
// Pure: it depends only on seed and the number of sites.
func crashPlan(seed uint64, sites int) (coordinator []crashAt, site int, siteCrashes []crashAt) {
	r := rand.New(rand.NewPCG(seed, 0x2c0ffee))
	pair := func(a, b string) []crashAt {
		if r.IntN(2) == 1 {
			a, b = b, a
		}
		first := 3 + r.IntN(6)
		return []crashAt{{first, a}, {first + 3 + r.IntN(4), b}}
	}
	coordinator = pair(history.CrashAfterBegin, history.CrashAfterDecide)
	site = 1 + r.IntN(max(sites, 1))
	siteCrashes = pair(history.CrashBeforeVote, history.CrashAfterVote)
	return coordinator, site, siteCrashes
}

// seedOf turns the scenario's root (which names the scenario and the
// seed) into the seed of its crash plan.
func seedOf(root string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(root))
	return h.Sum64()
}

// crashes hands out the planned crashes of one client in order.
type crashes struct {
	env  *cluster.Env
	plan []crashAt
}

// due reports whether the next planned crash is due at the n-th item, at
// point where, and consumes it if so. A due crash waits for a quiet
// moment (see quiet); none is due once ctx is done.
func (c *crashes) due(ctx context.Context, n int, where string) bool {
	if ctx.Err() != nil || len(c.plan) == 0 || c.plan[0].where != where || n < c.plan[0].n ||
		!quiet(c.env.Rec.History(), history.Now(), c.env.SessionTimeout) {
		return false
	}
	c.plan = c.plan[1:]
	return true
}

// quiet reports whether, at time now, no fault window of h is open and
// the last one healed more than grace ago. Pure.
func quiet(h history.History, now int64, grace time.Duration) bool {
	open := map[string]bool{}
	var healed int64
	for _, e := range h.Events {
		switch e.Kind {
		case history.KindFaultStart:
			open[e.Key] = true
		case history.KindFaultEnd:
			delete(open, e.Key)
			healed = e.Time
		}
	}
	return len(open) == 0 && (healed == 0 || now-healed > int64(grace))
}

// Run runs the coordinator and the sites until ctx is done, then lets them
// finish what they started.
func (w *TwoPhase) Run(ctx context.Context, env *cluster.Env) error {
	root := env.Root + "/2pc"
	n := max(2, env.Clients)
	var sites []string
	for i := 2; i <= n; i++ {
		sites = append(sites, fmt.Sprintf("c%d", i))
	}
	coPlan, crashSite, sitePlan := crashPlan(seedOf(env.Root), len(sites))
	st := env.SessionTimeout
	// finish bounds the work after ctx is done: votes time out, sites abort
	// themselves, and a decision already written is read.
	finish, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	go func() {
		select {
		case <-ctx.Done():
		case <-finish.Done():
			return
		}
		select {
		case <-time.After(8*st + 10*time.Second):
			cancel()
		case <-finish.Done():
		}
	}()
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	fail := func(err error) {
		if err != nil {
			mu.Lock()
			errs = append(errs, err)
			mu.Unlock()
		}
	}
	for i := range n {
		c, err := env.NewClient(fmt.Sprintf("c%d", i+1))
		if err != nil {
			fail(err)
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			switch {
			case i == 0:
				fail(w.coordinator(ctx, finish, env, c, root, sites, &crashes{env: env, plan: coPlan}))
			case i == crashSite:
				fail(w.site(ctx, finish, env, c, root, i, &crashes{env: env, plan: sitePlan}))
			default:
				fail(w.site(ctx, finish, env, c, root, i, &crashes{env: env}))
			}
		}()
	}
	wg.Wait()
	actx, acancel := context.WithTimeout(context.WithoutCancel(ctx), 4*st+30*time.Second)
	defer acancel()
	fail(w.audit(actx, env, root))
	return errors.Join(errs...)
}

func (w *TwoPhase) audit(ctx context.Context, env *cluster.Env, root string) error {
	a, err := newAuditor(ctx, env)
	if err != nil {
		return err
	}
	defer a.close()
	txs, err := a.children(ctx, root)
	if err != nil {
		return fmt.Errorf("chaos: twophase audit: %w", err)
	}
	value := func(data []byte, ok bool) (int64, error) {
		switch d := string(data); {
		case !ok:
			return -1, nil
		case d == "commit":
			return 1, nil
		case d == "abort" || strings.HasPrefix(d, "abort\n"):
			return 0, nil
		}
		return 0, fmt.Errorf("chaos: twophase audit: unexpected data %q", data)
	}
	for _, tx := range txs {
		kids, err := a.children(ctx, root+"/"+tx)
		if err != nil {
			return fmt.Errorf("chaos: twophase audit: %w", err)
		}
		var (
			data []byte
			ok   bool
			st   *zk.Stat
		)
		err = a.do(ctx, func(conn *zk.Conn) error {
			var err error
			data, st, err = conn.Get(root + "/" + tx + "/decision")
			if errors.Is(err, zk.ErrNoNode) {
				return nil
			}
			ok = err == nil
			return err
		})
		if err != nil {
			return fmt.Errorf("chaos: twophase audit: %w", err)
		}
		d, err := value(data, ok)
		if err != nil {
			return err
		}
		version, zxid := int64(0), int64(0)
		if ok {
			version, zxid = int64(st.Version), st.Czxid
		}
		env.Rec.Add(history.Event{Client: history.Auditor, Kind: history.KindReadBack, Fn: history.FnDecide, Key: tx, Value: d, Arg: version, Token: zxid})
		for _, site := range kids {
			if site == "decision" {
				continue
			}
			data, st, ok, err := a.getStat(ctx, root+"/"+tx+"/"+site+"/vote")
			if err != nil {
				return fmt.Errorf("chaos: twophase audit: %w", err)
			}
			vote, err := value(data, ok)
			if err != nil {
				return err
			}
			zxid := int64(0)
			if st != nil {
				zxid = st.Mzxid
			}
			env.Rec.Add(history.Event{Client: history.Auditor, Kind: history.KindReadBack, Fn: history.FnVote, Key: tx, Detail: site, Value: vote, Token: zxid})
		}
	}
	co, err := twophase.NewCoordinator(a.s, root, twophase.WithRetention(time.Millisecond))
	if err != nil {
		return fmt.Errorf("chaos: twophase audit: %w", err)
	}
	for range 2 {
		cluster.Sleep(ctx, 5*time.Millisecond) // past the retention, on any clock
		if _, err := co.Collect(ctx); err != nil {
			return fmt.Errorf("chaos: twophase audit: collect: %w", err)
		}
	}
	left, err := a.children(ctx, root)
	a.litter("transactions under "+root+" after Collect", left, err)
	return nil
}

// restart closes c's session s abruptly in the middle of transaction id
// (a crash at where, recorded under fn) and connects a new one for the
// same client, on finish (the resumption runs even when ctx is done). The
// client reports no session while it has none, so the runner's sampling
// (every 20 ms) mostly does not record the new one as a session event;
// when it does, that is in a quiet moment (see crashes.due), never in a
// fault's window or grace. A nil session with a nil error: finish ended
// first.
func restart(finish context.Context, env *cluster.Env, c *cluster.Client, s *recipes.Session, fn history.Fn, id, where string) (*recipes.Session, error) {
	c.Log.Event(history.Event{Kind: history.KindCrash, Fn: fn, Key: id, Detail: where})
	c.SetConn(nil)
	c.SetSession(0)
	closeRecipes(s, env.SessionTimeout)
	return connectRecipes(finish, env, c)
}

func (w *TwoPhase) coordinator(ctx, finish context.Context, env *cluster.Env, c *cluster.Client, root string, sites []string, plan *crashes) error {
	st := env.SessionTimeout
	s, err := connectRecipes(ctx, env, c)
	if s == nil {
		return err
	}
	defer func() {
		if s != nil {
			closeRecipes(s, st)
		}
	}()
	newCo := func() (*twophase.Coordinator, error) {
		return twophase.NewCoordinator(s, root, twophase.WithVoteTimeout(3*st))
	}
	co, err := newCo()
	if err != nil {
		return fmt.Errorf("chaos: %s: %w", c.Log.Name(), err)
	}
	for n := 1; ctx.Err() == nil; n++ {
		id := fmt.Sprintf("tx-%05d", n)
		var tx *twophase.Tx
		op := c.Log.Invoke(history.FnBegin, id, 0)
		for ctx.Err() == nil { // Begin is idempotent: retry until it answers
			if tx, err = co.Begin(ctx, id, sites, []byte(id)); err == nil {
				break
			}
			cluster.Sleep(ctx, 50*time.Millisecond)
		}
		if tx == nil {
			// Stopping before the transaction surely began; nobody
			// voted on it if it did.
			op.Unknown("stopped before Begin answered")
			break
		}
		op.OK(1)
		if plan.due(ctx, n, history.CrashAfterBegin) {
			if s, err = restart(finish, env, c, s, history.FnDecide, id, history.CrashAfterBegin); s == nil {
				return err
			}
			if co, err = newCo(); err != nil {
				return fmt.Errorf("chaos: %s: %w", c.Log.Name(), err)
			}
			if !w.resumePending(finish, c, co) {
				return nil
			}
			cluster.Sleep(ctx, 10*time.Millisecond)
			continue
		}
		if !decide(finish, c, id, tx) {
			return nil
		}
		if plan.due(ctx, n, history.CrashAfterDecide) {
			if s, err = restart(finish, env, c, s, history.FnDecide, id, history.CrashAfterDecide); s == nil {
				return err
			}
			if co, err = newCo(); err != nil {
				return fmt.Errorf("chaos: %s: %w", c.Log.Name(), err)
			}
			// A coordinator that crashed after deciding does not know
			// whether its decision was written: it resumes the
			// transaction and must read the decision there.
			var tx *twophase.Tx
			for tx == nil {
				if tx, err = co.Resume(finish, id); err != nil {
					if finish.Err() != nil {
						return nil
					}
					cluster.Sleep(finish, 50*time.Millisecond)
				}
			}
			c.Log.Event(history.Event{Kind: history.KindResume, Fn: history.FnDecide, Key: id, Detail: "decided"})
			if !decide(finish, c, id, tx) || !w.resumePending(finish, c, co) {
				return nil
			}
		}
		cluster.Sleep(ctx, 10*time.Millisecond)
	}
	return nil
}

// decide runs tx.Decide until it answers, recorded as a decide operation.
// It reports false when finish ended first (the outcome is unknown).
func decide(finish context.Context, c *cluster.Client, id string, tx *twophase.Tx) bool {
	op := c.Log.Invoke(history.FnDecide, id, 0)
	for {
		d, err := tx.Decide(finish)
		if err == nil {
			op.OKKey(id, decisionValue(d))
			return true
		}
		if finish.Err() != nil {
			op.Unknown(err.Error())
			return false
		}
		cluster.Sleep(finish, 50*time.Millisecond)
	}
}

// resumePending is a restarted coordinator's recovery: it lists the
// undecided transactions (Pending), resumes each (a resume event) and
// decides it. It reports false when finish ended first.
func (w *TwoPhase) resumePending(finish context.Context, c *cluster.Client, co *twophase.Coordinator) bool {
	var ids []string
	for {
		var err error
		if ids, err = co.Pending(finish); err == nil {
			break
		}
		if finish.Err() != nil {
			return false
		}
		cluster.Sleep(finish, 50*time.Millisecond)
	}
	for _, id := range ids {
		var tx *twophase.Tx
		for {
			var err error
			tx, err = co.Resume(finish, id)
			if err == nil || errors.Is(err, twophase.ErrUnknownTx) {
				break
			}
			if finish.Err() != nil {
				return false
			}
			cluster.Sleep(finish, 50*time.Millisecond)
		}
		if tx == nil {
			continue // collected meanwhile: nothing to resume
		}
		c.Log.Event(history.Event{Kind: history.KindResume, Fn: history.FnDecide, Key: id, Detail: "pending"})
		if !decide(finish, c, id, tx) {
			return false
		}
	}
	return true
}

func decisionValue(d twophase.Decision) int64 {
	if d == twophase.Commit {
		return 1
	}
	return 0
}

// site runs one participant. After a crash (see crashes) it streams
// Site.Run again with a new session and a new Site, and keeps
// going until it got back every transaction it had not finished, even
// when ctx is done meanwhile.
func (w *TwoPhase) site(ctx, finish context.Context, env *cluster.Env, c *cluster.Client, root string, i int, plan *crashes) error {
	st := env.SessionTimeout
	s, err := connectRecipes(ctx, env, c)
	if s == nil {
		return err
	}
	defer func() {
		if s != nil {
			closeRecipes(s, st)
		}
	}()
	var (
		mu         sync.Mutex
		unfinished = map[string]bool{} // delivered and not finished
		resumed    = map[string]bool{} // unfinished at the last crash, not delivered again yet
	)
	seen := 0
	for {
		p, perr := twophase.NewSite(s, root, c.Name, twophase.WithDeadline(5*st))
		if perr != nil {
			return fmt.Errorf("chaos: %s: %w", c.Log.Name(), perr)
		}
		// The stream lives on after ctx only while transactions unfinished
		// at a crash are still to come back.
		sctx, scancel := context.WithCancel(finish)
		stop := context.AfterFunc(ctx, func() {
			mu.Lock()
			defer mu.Unlock()
			if len(resumed) == 0 {
				scancel()
			}
		})
		props := p.Run(sctx).C
		crashed, where, at := false, "", ""
		for pr := range props {
			seen++
			id := pr.TxID()
			mu.Lock()
			unfinished[id] = true
			again := resumed[id]
			delete(resumed, id)
			mu.Unlock()
			voted := pr.Voted() != 0
			if again {
				state := "not voted"
				if voted {
					state = "voted " + history.Outcome(decisionValue(pr.Voted()))
				}
				c.Log.Event(history.Event{Kind: history.KindResume, Fn: history.FnLearn, Key: id, Detail: state})
			}
			undecided := pr.Decision() == 0
			if undecided && !voted && plan.due(ctx, seen, history.CrashBeforeVote) {
				crashed, where, at = true, history.CrashBeforeVote, id
				break
			}
			if undecided && !voted && ctx.Err() == nil {
				v := twophase.Commit
				if i == 2 && seen%5 == 0 {
					v = twophase.Abort
				}
				op := c.Log.Invoke(history.FnVote, id, 0)
				if err := pr.Vote(ctx, v); err != nil {
					op.Unknown(err.Error())
				} else {
					op.OKKey(id, decisionValue(v))
					if plan.due(ctx, seen, history.CrashAfterVote) {
						crashed, where, at = true, history.CrashAfterVote, id
						break
					}
				}
			}
			op := c.Log.Invoke(history.FnLearn, id, 0)
			var d twophase.Decision
			for {
				if d, err = pr.Await(finish); err == nil || finish.Err() != nil {
					break
				}
				cluster.Sleep(finish, 50*time.Millisecond)
			}
			if err != nil {
				op.Unknown(err.Error())
				break
			}
			op.OKKey(id, decisionValue(d))
			fctx, fcancel := context.WithTimeout(finish, st)
			if pr.Finish(fctx) == nil {
				mu.Lock()
				delete(unfinished, id)
				mu.Unlock()
			}
			fcancel()
			mu.Lock()
			done := ctx.Err() != nil && len(resumed) == 0
			mu.Unlock()
			if done {
				break
			}
		}
		stop()
		scancel()
		for range props { // the stream's goroutine ends
		}
		if !crashed {
			return nil
		}
		mu.Lock()
		for id := range unfinished {
			resumed[id] = true
		}
		unfinished = map[string]bool{}
		mu.Unlock()
		if s, err = restart(finish, env, c, s, history.FnLearn, at, where); s == nil {
			return err
		}
	}
}
