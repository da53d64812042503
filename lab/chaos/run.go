package chaos

import (
	"context"
	"fmt"
	"time"

	"github.com/zkrecipes/zkrecipes/lab/chaos/report"
)

// Run plays every scenario in order, printing a progress line after each,
// and writes the report when Config.Out is set. It returns early, with the
// summary so far, when a scenario leaves the ensemble unhealable or ctx
// ends. Violations are in the summary, not in the error (see
// report.Summary.Failed).
func (r *Runner) Run(ctx context.Context, scs []Scenario) (report.Summary, error) {
	cfg := r.cfg
	s := report.Summary{
		Seed: cfg.Seed, Tier: cfg.Tier, Started: time.Now(), Duration: cfg.Duration,
		SessionTimeout: cfg.SessionTimeout, Clients: cfg.Clients, Backend: string(r.e.Backend()), Command: cfg.Command,
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
	s.Took = time.Since(s.Started).Round(time.Millisecond)
	if cfg.Out != "" {
		if err := report.Write(cfg.Out, s); err != nil && runErr == nil {
			runErr = err
		}
	}
	return s, runErr
}
