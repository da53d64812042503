package chaos

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/zkrecipes/zkrecipes/chaos/checkers"
	"github.com/zkrecipes/zkrecipes/chaos/cluster"
	"github.com/zkrecipes/zkrecipes/chaos/faults"
	"github.com/zkrecipes/zkrecipes/chaos/history"
	"github.com/zkrecipes/zkrecipes/chaos/report"
	"github.com/zkrecipes/zkrecipes/chaos/workloads"
	"github.com/zkrecipes/zkrecipes/testenv"
)

// Runner plays scenarios against one ensemble, one at a time.
type Runner struct {
	cfg Config
	e   *testenv.Ensemble
	sec cluster.Security // of every session of the run
}

// NewRunner returns a runner for e with cfg (defaults filled in). Every
// session of the run speaks TLS when e's client port does (e.ClientTLS),
// and authenticates as cfg's credentials (Config.Digest, Config.Secure).
// A secure run needs a TLS ensemble, one that testenv started with
// EnforceAuth too: else ErrConfig.
func NewRunner(e *testenv.Ensemble, cfg Config) (*Runner, error) {
	cfg, err := cfg.WithDefaults()
	if err != nil {
		return nil, err
	}
	if e == nil {
		return nil, fmt.Errorf("%w: no ensemble", ErrConfig)
	}
	sec := cluster.Security{TLS: e.ClientTLS()}
	sec.User, sec.Password = cfg.credentials()
	ca := cfg.TLSCA
	if files, ok := e.TLSFiles(); ok {
		ca = files.CA
	}
	if sec.TLS != nil && ca != "" {
		if sec.CAPEM, err = os.ReadFile(ca); err != nil {
			return nil, fmt.Errorf("%w: TLS CA: %w", ErrConfig, err)
		}
	}
	if cfg.Secure && sec.TLS == nil {
		return nil, fmt.Errorf("%w: a secure run needs an ensemble with a TLS client port", ErrConfig)
	}
	if cfg.Secure && e.Backend() != testenv.BackendExternal && !e.Config().EnforceAuth {
		return nil, fmt.Errorf("%w: a secure run needs an ensemble that enforces authentication", ErrConfig)
	}
	return &Runner{cfg: cfg, e: e, sec: sec}, nil
}

// Secure reports whether every session of the run speaks TLS and
// authenticates.
func (r *Runner) Secure() bool { return r.sec.TLS != nil && r.sec.User != "" }

// notApplicable returns why sc cannot run against r's ensemble, or "":
// the first of its faults that cannot (faults.Fault.NotApplicable), or,
// on a secure run, clients in worker processes (their specification
// carries no TLS configuration nor credentials).
func (r *Runner) notApplicable(sc Scenario) string {
	for _, f := range sc.Faults {
		if why := f.NotApplicable(r.e); why != "" {
			return f.Name + ": " + why
		}
	}
	if pw, ok := sc.Workload.(workloads.ProcessWorkload); ok && pw.InProcesses() && r.sec.TLS != nil && len(r.sec.CAPEM) == 0 {
		return "clients in worker processes need the CA's PEM file to speak TLS, and none is known"
	}
	return ""
}

// applicable returns sc with only the faults that can run against r's
// ensemble when sc mixes several (a mixed scenario keeps the others);
// a scenario of one fault is returned as is.
func (r *Runner) applicable(sc Scenario) Scenario {
	if len(sc.Faults) < 2 {
		return sc
	}
	var keep []faults.Fault
	for _, f := range sc.Faults {
		if f.NotApplicable(r.e) == "" {
			keep = append(keep, f)
		}
	}
	if len(keep) > 0 {
		sc.Faults = keep
	}
	return sc
}

// Config returns the runner's configuration with defaults.
func (r *Runner) Config() Config { return r.cfg }

// RunScenario plays sc: it starts the workload, injects the schedule's
// faults (each healed before the next), waits until every client made
// progress after the last heal (or the liveness bound passed) and the
// duration elapsed, stops the workload, checks right away that no
// ephemeral node outlives the closed sessions, removes the scenario's
// nodes and runs the workload's checkers and checkers.Throughput. The error
// is non-nil only when the ensemble could not be healed or ctx ended: the
// run cannot go on.
//
// A scenario that cannot run against the ensemble (see notApplicable)
// returns at once with ScenarioResult.NotApplicable set and no error; a
// mixed scenario runs with the faults that can.
func (r *Runner) RunScenario(ctx context.Context, sc Scenario) (report.ScenarioResult, error) {
	cfg := r.cfg
	began := time.Now()
	sc = r.applicable(sc)
	res := report.ScenarioResult{Scenario: sc.Name, Workload: sc.Workload.Name(), Faults: sc.FaultNames()}
	if why := r.notApplicable(sc); why != "" {
		res.NotApplicable = why
		return res, nil
	}
	sched, err := faults.NewSchedule(cfg.Seed, sc.Name, sc.Faults, cfg.Tier, cfg.Duration, cfg.SessionTimeout)
	if err != nil {
		return res, err
	}
	res.Schedule = sched
	root := fmt.Sprintf("%s/%s-%x", cfg.Root, strings.ReplaceAll(sc.Name, "/", "-"), cfg.Seed&0xffffff)
	// The runner's own session and the scenario's root come before the
	// recorder: the history (and the throughput window, which runs from
	// its start) begins with the workload, not with the runner's set-up (a
	// TLS handshake and a setAuth on a secured run).
	admin, err := newAdmin(ctx, r.e, cfg.SessionTimeout, r.sec)
	if err != nil {
		return res, err
	}
	defer admin.close()
	if err := admin.ensure(root); err != nil {
		return res, fmt.Errorf("chaos: make %s: %w", root, err)
	}
	rec := history.NewRecorder()
	env := &cluster.Env{
		Ensemble: r.e, Rec: rec, SessionTimeout: cfg.SessionTimeout, Clients: cfg.Clients, Logger: cfg.Logger,
		Root: root, Security: r.sec,
	}

	r.place(ctx, env, sc, sched)

	wctx, stop := context.WithCancel(ctx)
	defer stop()
	done := make(chan error, 1)
	go func() { done <- sc.Workload.Run(wctx, env) }()
	sampled := make(chan struct{})
	go func() { defer close(sampled); cluster.SampleSessions(wctx, env) }()
	// With credentials, every node the scenario makes must carry the
	// run's ACL: read while the workload runs (ephemerals die with it).
	var acls *aclSampler
	aclDone := make(chan struct{})
	if r.sec.User != "" {
		acls = newACLSampler(admin.conn, r.sec.ACL())
		go func() { defer close(aclDone); acls.run(wctx, env.Root) }()
	} else {
		close(aclDone)
	}

	var errs []string
	workloadErr := func(err error) {
		if err != nil && !errors.Is(err, context.Canceled) {
			errs = append(errs, "workload: "+err.Error())
		}
	}
	checks := sc.Workload.Checkers(cfg.checkConfig())
	finished := false
	ss, slow := sc.Workload.(workloads.SlowStarter)
	paced, _ := sc.Workload.(workloads.Paced)
	lastHeal, fatal := r.play(ctx, env, sched, slow && ss.SlowStart(), paced, done, &res, &errs, &finished, workloadErr)
	if fatal == nil && !finished {
		finished = r.settle(ctx, env, began, lastHeal, checksLiveness(checks), done, workloadErr)
	}
	stop()
	<-sampled
	<-aclDone
	if !finished {
		select {
		case err := <-done:
			workloadErr(err)
		case <-time.After(2*cfg.SessionTimeout + time.Minute):
			errs = append(errs, "workload did not stop within a minute of its context's end")
		}
	}
	for _, c := range env.ClientList() {
		_ = c.Link.Close()
	}
	if fatal != nil {
		return res, fatal
	}
	if err := faults.WaitQuorum(ctx, r.e); err != nil {
		return res, err
	}
	admin.recordLeftovers(ctx, env)
	admin.removeAll(env.Root)

	res.Ran = time.Since(began).Round(time.Millisecond)
	h := rec.History()
	h.Scenario, h.Workload, h.Fault, h.Seed = sc.Name, sc.Workload.Name(), sc.FaultNames(), cfg.Seed
	res.History = h
	for _, o := range history.Operations(h) {
		if o.Result != history.KindUnknown {
			res.Ops++
		}
	}
	res.Ops += len(history.Holdings(h))
	voids := map[string]string{}
	for _, f := range sc.Faults {
		for _, v := range f.Voids {
			voids[v] = f.Name
		}
	}
	exclusive := checkers.Exclusive(checks)
	if exclusive {
		checks = append(checks, checkers.LeaseMargin())
	}
	throughput := checkers.Throughput(cfg.MinRate, cfg.Tier)
	if p, ok := sc.Workload.(workloads.Paced); ok {
		client, fn := p.PacedOn()
		throughput = checkers.PendingAtFault(client, fn, cfg.Tier)
	}
	checks = append(checks, throughput, checkers.Exercised(cfg.SessionTimeout, cfg.Tier))
	res.Targets = faults.Targets(h)
	if exclusive { // two holdings that may overlap (a semaphore's) have no margin to measure
		res.Margins, res.MarginMin, res.MarginMedian = checkers.MarginStats(checkers.LeaseMargins(h))
	}
	for _, c := range checks {
		cr := c.Run(h)
		if f, ok := voids[c.Name]; ok {
			cr = cr.Void(f)
		}
		res.Results = append(res.Results, cr)
	}
	if acls != nil {
		res.Results = append(res.Results, acls.result())
	}
	res.Err = strings.Join(errs, "; ")
	res.Took = time.Since(began).Round(time.Millisecond)
	return res, nil
}

// place pins the clients' sessions (env.Pins) for the first fault of sc
// that asks for a placement (faults.Fault.Place): alternately on a
// follower (drawn by the fault's window) and on the leader, as the
// leader is now (faults.Pins), at the run's session timeout (the lease
// allows for syncLimit x tickTime: docs/design.md). It records the placement as a leader event
// of the nemesis. Without a leader it pins nobody, and the fault, finding
// its clients unplaced, fails the scenario (faults.ErrNotExercised).
func (r *Runner) place(ctx context.Context, env *cluster.Env, sc Scenario, sched faults.Schedule) {
	for _, w := range sched.Windows {
		f, err := faults.ByName(w.Fault)
		if err != nil || f.Place == "" {
			continue
		}
		ldr := faults.LeaderNow(ctx, r.e)
		env.Pins = faults.Pins(r.e.Servers(), ldr, w.Server)
		detail := fmt.Sprintf("clients placed in turn on servers %v for %s", env.Pins, f.Name)
		env.Rec.Add(history.Event{Client: history.Nemesis, Kind: history.KindZKLeader, Value: int64(ldr), Detail: detail})
		return
	}
}

// play injects the windows of sched in order. It returns the time of the
// last heal, and a non-nil error only when the ensemble cannot be healed.
func (r *Runner) play(ctx context.Context, env *cluster.Env, sched faults.Schedule, slowStart bool, paced workloads.Paced, done <-chan error, res *report.ScenarioResult,
	errs *[]string, finished *bool, workloadErr func(error)) (int64, error) {
	start := time.Now()
	lastHeal := int64(0)
	for i, w := range sched.Windows {
		f, err := faults.ByName(w.Fault)
		if err != nil {
			return lastHeal, err
		}
		select {
		case <-ctx.Done():
			return lastHeal, ctx.Err()
		case err := <-done:
			workloadErr(err)
			*errs = append(*errs, "workload stopped before the faults were over")
			*finished = true
			return lastHeal, nil
		case <-time.After(time.Until(start.Add(w.At))):
		}
		if i == 0 && slowStart {
			if waited := r.warmUp(ctx, env); waited > 0 {
				start = start.Add(waited) // the later windows keep their spacing
				env.Logger.Info("chaos: the first fault waited for the workload's rate", "scenario", sched.Scenario, "waited", waited.Round(time.Millisecond))
			}
		}
		if i == 0 && paced != nil {
			client, fn := paced.PacedOn()
			if waited := r.awaitPending(ctx, env, client, fn); waited > 0 {
				start = start.Add(waited)
				env.Logger.Info("chaos: the first fault waited for the paced target's wait", "scenario", sched.Scenario, "client", client, "fn", fn, "waited", waited.Round(time.Millisecond))
			}
		}
		if f.Server {
			env.Rec.Add(history.Event{Client: history.Nemesis, Kind: history.KindZKLeader, Value: int64(faults.LeaderNow(ctx, r.e))})
		}
		detail := fmt.Sprintf("for %v victim %d server %d param %d", w.For, w.Victim, w.Server, w.Param)
		if f.Aim != "" {
			detail += " aim " + f.Aim
		}
		env.Rec.Add(history.Event{Client: history.Nemesis, Kind: history.KindFaultStart, Key: f.Name, Detail: detail})
		heal, target, err := f.Inject(ctx, env, w)
		if err != nil {
			env.Rec.Add(history.Event{Client: history.Nemesis, Kind: history.KindFaultEnd, Key: f.Name, Detail: history.NotInjected + ": " + err.Error()})
			*errs = append(*errs, err.Error())
			if err := faults.WaitQuorum(ctx, r.e); err != nil {
				return lastHeal, err
			}
			continue
		}
		res.Injected++
		env.Rec.Add(faults.TargetEvent(target))
		env.Logger.Info("chaos: fault injected", "scenario", sched.Scenario, "fault", f.Name, "target", target.String())
		select {
		case <-ctx.Done():
		case <-time.After(w.For):
		}
		hctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), faults.HealTimeout)
		err = heal(hctx)
		cancel()
		if err != nil {
			return lastHeal, fmt.Errorf("%w: %s: %v", faults.ErrHeal, f.Name, err)
		}
		lastHeal = env.Rec.Add(history.Event{Client: history.Nemesis, Kind: history.KindFaultEnd, Key: f.Name}).Time
		if f.Server {
			env.Rec.Add(history.Event{Client: history.Nemesis, Kind: history.KindZKLeader, Value: int64(faults.LeaderNow(ctx, r.e))})
		}
		env.Logger.Info("chaos: fault healed", "scenario", sched.Scenario, "fault", f.Name)
	}
	return lastHeal, nil
}

// warmUp waits, for a workloads.SlowStarter at its first fault's
// scheduled time, until the workload's clients have made progress at
// cfg.MinRate per second since the history began (what
// checkers.Throughput asks of the time before the first fault), for at
// most two session timeouts, and returns how long it waited. Such a
// workload gets its fault once it runs, instead of the scenario being not
// exercised; one still under its rate at the deadline gets the fault
// anyway, and the throughput checker says so. Other workloads are struck
// on schedule: a mutant aimed by the schedule (the multi-lock's and the
// barrier's) was missed on some seeds when every workload waited.
func (r *Runner) warmUp(ctx context.Context, env *cluster.Env) time.Duration {
	return r.holdFirstFault(ctx, 20*time.Millisecond, func() bool {
		elapsed := time.Duration(history.Now() - env.Rec.Start())
		return float64(env.Rec.Progress()) >= r.cfg.MinRate*elapsed.Seconds()
	})
}

// holdFirstFault polls ready every poll until it holds, for at most two
// session timeouts, and returns how long it waited: 0 when ready held at
// once, the time until ctx ended when it ended first.
func (r *Runner) holdFirstFault(ctx context.Context, poll time.Duration, ready func() bool) time.Duration {
	began := time.Now()
	deadline := began.Add(2 * r.cfg.SessionTimeout)
	waited := time.Duration(0)
	for !ready() && time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return time.Since(began)
		case <-time.After(poll):
		}
		waited = time.Since(began)
	}
	return waited
}

// awaitPending waits, for a workloads.Paced at its first fault's
// scheduled time, until the target's operation fn is pending (the wait
// the fault is aimed at, which checkers.PendingAtFault asks of the first
// fault's start), for at most two session timeouts, and returns how long
// it waited. The target spends most of a round in that wait, but not all
// of it: struck on schedule, barrier-wake's twin was found between two
// Enters when the first fault began, not exercised, on seed
// 28620300834749 (2026-11-30). Past the deadline the fault strikes anyway
// and the checker says so.
func (r *Runner) awaitPending(ctx context.Context, env *cluster.Env, client string, fn history.Fn) time.Duration {
	return r.holdFirstFault(ctx, 5*time.Millisecond, func() bool { return env.Rec.Pending(client, fn) })
}

// checksLiveness reports whether checks include the liveness checker.
func checksLiveness(checks []checkers.Checker) bool {
	return slices.ContainsFunc(checks, func(c checkers.Checker) bool { return c.Name == "liveness" })
}

// settle waits until the scenario's duration passed and every client made
// progress after the last heal and the workload does not linger
// (cluster.Env.Linger), or the liveness bound passed. Every client
// is env's, and with liveness set also every other workload client that
// recorded before the heal (history.Recorder.Behind: a mutant workload's
// bystanders), all of whom the liveness checker expects to progress. It
// reports whether the workload already returned.
func (r *Runner) settle(ctx context.Context, env *cluster.Env, began time.Time, lastHeal int64, liveness bool, done <-chan error, workloadErr func(error)) bool {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	healedAt := time.Now()
	for {
		// every workload client the liveness checker will look at (those
		// faults reach and the bystanders of a mutant workload), not only
		// env's: a history cut before a client's first chance to progress
		// fails liveness for the runner's haste
		progressed := env.Rec.LastProgress() > lastHeal && (!liveness || len(env.Rec.Behind(lastHeal)) == 0)
		for _, c := range env.ClientList() {
			if env.Rec.LastProgressOf(c.Name) <= lastHeal {
				progressed = false
			}
		}
		if time.Since(began) >= r.cfg.Duration && ((progressed && !env.Lingering()) || time.Since(healedAt) > r.cfg.LivenessBound) {
			return false
		}
		select {
		case <-ctx.Done():
			return false
		case err := <-done:
			workloadErr(err)
			return true
		case <-tick.C:
		}
	}
}
