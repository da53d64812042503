package chaos

import (
	"context"
	"fmt"
	"time"

	"github.com/zkrecipes/zkrecipes/lab/chaos/report"
)

// Run plays every scenario in order, printing a progress line after each
// (a scenario that cannot run against the ensemble as "N/A" with the
// reason), and writes the report when Config.Out is set. Before the
// first scenario it makes Config.Root (ErrRootInUse when it has nodes);
// after the last it deletes everything under it and records a final
// listing in the summary (Root, RootLeft, RootErr), also printed. It
// returns early, with the summary so far, when a scenario leaves the
// ensemble unhealable or ctx ends. Violations and nodes left are in the
// summary, not in the error (see report.Summary.Failed).
func (r *Runner) Run(ctx context.Context, scs []Scenario) (report.Summary, error) {
	cfg := r.cfg
	s := report.Summary{
		Seed: cfg.Seed, Tier: cfg.Tier, Started: time.Now(), Duration: cfg.Duration,
		SessionTimeout: cfg.SessionTimeout, Clients: cfg.Clients, Backend: string(r.e.Backend()), Command: cfg.Command,
		Secure: r.Secure(), Root: cfg.Root,
	}
	admin, err := newAdmin(ctx, r.e, cfg.SessionTimeout, r.sec)
	if err != nil {
		return s, err
	}
	defer admin.close()
	created, err := admin.prepareRoot(cfg.Root)
	if err != nil {
		return s, err
	}
	var runErr error
	for i, sc := range scs {
		res, err := r.RunScenario(ctx, sc)
		if err != nil {
			res.Err = err.Error()
			runErr = err
		}
		s.Scenarios = append(s.Scenarios, res)
		fmt.Fprintf(cfg.Progress, "[%d/%d] %s\n", i+1, len(scs), res.Line())
		if err != nil {
			break
		}
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*cfg.SessionTimeout+time.Minute)
	left, err := admin.finishRoot(cctx, cfg.Root, created)
	cancel()
	s.RootLeft = left
	if err != nil {
		s.RootErr = err.Error()
	}
	fmt.Fprintln(cfg.Progress, s.RootLine())
	s.Took = time.Since(s.Started).Round(time.Millisecond)
	if cfg.Out != "" {
		if err := report.Write(cfg.Out, s); err != nil && runErr == nil {
			runErr = err
		}
	}
	return s, runErr
}
