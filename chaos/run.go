package chaos

import (
	"context"
	"fmt"
	"time"

	"github.com/zkrecipes/zkrecipes/chaos/report"
)

// Run plays every scenario in order, printing a progress line after each
// (report.ScenarioResult.ProgressLine: at most 120 columns, with the time
// elapsed and an estimate of the time left; a scenario that cannot run
// against the ensemble as "N/A" with the reason). When Config.Out is set
// it writes the report after every scenario (that scenario's history and
// page, then summary.json, junit.xml and index.html, marked partial: a
// run killed meanwhile leaves valid files that say "incomplete"), and
// once more at the end. Before the first scenario it makes Config.Root
// (ErrRootInUse when it has nodes); after the last it deletes everything
// under it and records a final listing in the summary (Root, RootLeft,
// RootErr), also printed. It returns early, with the summary so far
// (Cut set: its verdict is never a pass), when a scenario leaves the
// ensemble unhealable or ctx ends. Violations and
// nodes left are in the summary, not in the error (see
// report.Summary.Failed).
func (r *Runner) Run(ctx context.Context, scs []Scenario) (report.Summary, error) {
	cfg := r.cfg
	s := report.Summary{
		Seed: cfg.Seed, Tier: cfg.Tier, Started: time.Now(), Duration: cfg.Duration,
		SessionTimeout: cfg.SessionTimeout, Clients: cfg.Clients, Backend: string(r.e.Backend()), Command: cfg.Command,
		Secure: r.Secure(), Root: cfg.Root, Planned: len(scs), Replay: cfg.Replay, Select: cfg.Select,
		AllHistories: cfg.AllHistories,
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
	var runErr, writeErr error
	for i, sc := range scs {
		res, err := r.RunScenario(ctx, sc)
		if err != nil {
			res.Err = err.Error()
			runErr = err
			s.Cut = true
		}
		s.Scenarios = append(s.Scenarios, res)
		s.Took = time.Since(s.Started).Round(time.Millisecond)
		p := report.Progress{N: i + 1, Of: len(scs), Elapsed: s.Took, Left: report.Estimate(s.Scenarios, len(scs))}
		fmt.Fprintln(cfg.Progress, res.ProgressLine(p))
		if cfg.Out != "" && writeErr == nil {
			snap := s
			snap.Partial = true
			if writeErr = report.WriteScenarioFiles(cfg.Out, snap, res); writeErr == nil {
				writeErr = report.WriteIndex(cfg.Out, snap)
			}
			if writeErr != nil {
				fmt.Fprintf(cfg.Progress, "zkchaos: cannot write the report: %v\n", writeErr)
			}
		}
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
		err := writeErr
		if err == nil {
			err = report.WriteIndex(cfg.Out, s)
		} else {
			err = report.Write(cfg.Out, s) // a write failed on the way: all again
		}
		if err != nil && runErr == nil {
			runErr = err
		}
	}
	return s, runErr
}
