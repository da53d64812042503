package chaos

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/zkrecipes/zkrecipes/testenv"
)

// ScenarioResult is what one scenario did and what the checkers found.
type ScenarioResult struct {
	Scenario string        `json:"scenario"`
	Workload string        `json:"workload"`
	Faults   string        `json:"faults"`
	Schedule Schedule      `json:"schedule"`
	Results  []Result      `json:"results"`
	Ops      int           `json:"ops"`      // completed operations and holdings
	Injected int           `json:"injected"` // fault windows injected
	Took     time.Duration `json:"took"`
	// Err is set when the scenario could not run as scheduled (a fault
	// could not be injected, the workload failed); it fails the run.
	Err     string  `json:"err,omitempty"`
	History History `json:"-"`
}

// Violations counts the violations found by every checker.
func (r ScenarioResult) Violations() int {
	n := 0
	for _, c := range r.Results {
		n += len(c.Violations)
	}
	return n
}

// Failed reports a violation or an error.
func (r ScenarioResult) Failed() bool { return r.Err != "" || r.Violations() > 0 }

// Runner plays scenarios against one ensemble, one at a time.
type Runner struct {
	cfg Config
	e   *testenv.Ensemble
}

// NewRunner returns a runner for e with cfg (defaults filled in).
func NewRunner(e *testenv.Ensemble, cfg Config) (*Runner, error) {
	cfg, err := cfg.WithDefaults()
	if err != nil {
		return nil, err
	}
	return &Runner{cfg: cfg, e: e}, nil
}

// Config returns the runner's configuration with defaults.
func (r *Runner) Config() Config { return r.cfg }

// RunScenario plays sc: it starts the workload, injects the schedule's
// faults (each healed before the next), waits until the workload made
// progress after the last heal (or the liveness bound passed) and the
// duration elapsed, stops the workload, checks that no ephemeral node
// outlives the closed sessions, removes the scenario's nodes and runs the
// workload's checkers. The error is non-nil only when the ensemble could
// not be healed or ctx ended: the run cannot go on.
func (r *Runner) RunScenario(ctx context.Context, sc Scenario) (ScenarioResult, error) {
	cfg := r.cfg
	began := time.Now()
	res := ScenarioResult{Scenario: sc.Name, Workload: sc.Workload.Name(), Faults: sc.FaultNames()}
	sched, err := NewSchedule(cfg.Seed, sc.Name, sc.Faults, cfg.Tier, cfg.Duration, cfg.SessionTimeout)
	if err != nil {
		return res, err
	}
	res.Schedule = sched
	rec := NewRecorder()
	env := &Env{
		Ensemble: r.e, Rec: rec, SessionTimeout: cfg.SessionTimeout, Clients: cfg.Clients, Logger: cfg.Logger,
		Root: fmt.Sprintf("/chaos/%s-%x", strings.ReplaceAll(sc.Name, "/", "-"), cfg.Seed&0xffffff),
	}
	admin, err := newAdmin(ctx, r.e, cfg.SessionTimeout)
	if err != nil {
		return res, err
	}
	defer admin.close()
	if err := admin.ensure(env.Root); err != nil {
		return res, fmt.Errorf("chaos: make %s: %w", env.Root, err)
	}

	wctx, stop := context.WithCancel(ctx)
	defer stop()
	done := make(chan error, 1)
	go func() { done <- sc.Workload.Run(wctx, env) }()

	var errs []string
	workloadErr := func(err error) {
		if err != nil && !errors.Is(err, context.Canceled) {
			errs = append(errs, "workload: "+err.Error())
		}
	}
	finished := false
	lastHeal, fatal := r.play(ctx, env, sched, done, &res, &errs, &finished, workloadErr)
	if fatal == nil && !finished {
		finished = r.settle(ctx, env, began, lastHeal, done, workloadErr)
	}
	stop()
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
	if err := waitQuorum(ctx, r.e); err != nil {
		return res, err
	}
	admin.recordLeftovers(ctx, env)
	admin.removeAll(env.Root)

	h := rec.History()
	h.Scenario, h.Workload, h.Fault, h.Seed = sc.Name, sc.Workload.Name(), sc.FaultNames(), cfg.Seed
	res.History = h
	for _, o := range Operations(h) {
		if o.Result != KindUnknown {
			res.Ops++
		}
	}
	res.Ops += len(Holdings(h))
	voids := map[string]string{}
	for _, f := range sc.Faults {
		for _, v := range f.Voids {
			voids[v] = f.Name
		}
	}
	for _, c := range sc.Workload.Checkers(cfg) {
		cr := c.Run(h)
		if f, ok := voids[c.Name]; ok {
			cr = cr.void(f)
		}
		res.Results = append(res.Results, cr)
	}
	res.Err = strings.Join(errs, "; ")
	res.Took = time.Since(began).Round(time.Millisecond)
	return res, nil
}

// play injects the windows of sched in order. It returns the time of the
// last heal, and a non-nil error only when the ensemble cannot be healed.
func (r *Runner) play(ctx context.Context, env *Env, sched Schedule, done <-chan error, res *ScenarioResult,
	errs *[]string, finished *bool, workloadErr func(error)) (int64, error) {
	start := time.Now()
	lastHeal := int64(0)
	for _, w := range sched.Windows {
		f, err := FaultByName(w.Fault)
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
		detail := fmt.Sprintf("for %v victim %d server %d param %d", w.For, w.Victim, w.Server, w.Param)
		env.Rec.Add(Event{Client: Nemesis, Kind: KindFaultStart, Key: f.Name, Detail: detail})
		heal, err := f.Inject(ctx, env, w)
		if err != nil {
			env.Rec.Add(Event{Client: Nemesis, Kind: KindFaultEnd, Key: f.Name, Detail: "not injected: " + err.Error()})
			*errs = append(*errs, err.Error())
			if err := waitQuorum(ctx, r.e); err != nil {
				return lastHeal, err
			}
			continue
		}
		res.Injected++
		select {
		case <-ctx.Done():
		case <-time.After(w.For):
		}
		hctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), healTimeout)
		err = heal(hctx)
		cancel()
		if err != nil {
			return lastHeal, fmt.Errorf("%w: %s: %v", ErrHeal, f.Name, err)
		}
		lastHeal = env.Rec.Add(Event{Client: Nemesis, Kind: KindFaultEnd, Key: f.Name}).Time
		env.Logger.Info("chaos: fault healed", "scenario", sched.Scenario, "fault", f.Name)
	}
	return lastHeal, nil
}

// settle waits until the scenario's duration passed and the workload made
// progress after the last heal, or the liveness bound passed. It reports
// whether the workload already returned.
func (r *Runner) settle(ctx context.Context, env *Env, began time.Time, lastHeal int64, done <-chan error, workloadErr func(error)) bool {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	healedAt := time.Now()
	for {
		progressed := env.Rec.LastProgress() > lastHeal
		if time.Since(began) >= r.cfg.Duration && (progressed || time.Since(healedAt) > r.cfg.LivenessBound) {
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
