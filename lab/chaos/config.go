package chaos

import (
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/zkrecipes/zkrecipes/lab/chaos/faults"
	"github.com/zkrecipes/zkrecipes/lab/chaos/workloads"
)

// Config describes a run of the matrix. The zero value is a quick run with
// a random seed.
type Config struct {
	// Tier is quick (every fault once per scenario) or full. Default quick.
	Tier faults.Tier
	// Duration is the least time a scenario runs. Default 4 session
	// timeouts in the quick tier, 60 s in the full tier.
	Duration time.Duration
	// Seed seeds every schedule. Default: random (Run reports it).
	Seed uint64
	// SessionTimeout is what clients ask for. Default 3 s.
	SessionTimeout time.Duration
	// Clients is how many clients each workload runs. Default 4.
	Clients int
	// LivenessBound is how soon after a heal the workload must progress.
	// Default 2 session timeouts plus 5 s.
	LivenessBound time.Duration
	// CheckTimeout bounds each linearizability search. Default 60 s.
	CheckTimeout time.Duration
	// MinRate is the least rate of operations (progress events per
	// second) a scenario must reach before its first fault
	// (checkers.Throughput).
	// Default 5.
	MinRate float64
	// Out is the report directory; empty writes no report.
	Out string
	// Command is the command line, shown in the report.
	Command string
	// Progress receives a line per scenario; default: discard.
	Progress io.Writer
	// Logger receives details; default: discard.
	Logger *slog.Logger
}

// WithDefaults returns c with every zero field set to its default.
func (c Config) WithDefaults() (Config, error) {
	if c.Tier == "" {
		c.Tier = faults.TierQuick
	}
	if c.Tier != faults.TierQuick && c.Tier != faults.TierFull {
		return c, fmt.Errorf("%w: tier %q (want quick or full)", ErrConfig, c.Tier)
	}
	if c.SessionTimeout == 0 {
		c.SessionTimeout = 3 * time.Second
	}
	if c.SessionTimeout < time.Second {
		return c, fmt.Errorf("%w: session timeout %v is below 1s", ErrConfig, c.SessionTimeout)
	}
	if c.Duration == 0 {
		c.Duration = 4 * c.SessionTimeout
		if c.Tier == faults.TierFull {
			c.Duration = time.Minute
		}
	}
	if c.Duration < 0 {
		return c, fmt.Errorf("%w: duration %v", ErrConfig, c.Duration)
	}
	if c.Seed == 0 {
		c.Seed = rand.Uint64()
	}
	if c.Clients == 0 {
		c.Clients = 4
	}
	if c.Clients < 1 {
		return c, fmt.Errorf("%w: %d clients", ErrConfig, c.Clients)
	}
	if c.LivenessBound == 0 {
		c.LivenessBound = 2*c.SessionTimeout + 5*time.Second
	}
	if c.MinRate == 0 {
		c.MinRate = 5
	}
	if c.MinRate < 0 {
		return c, fmt.Errorf("%w: minimum rate %v", ErrConfig, c.MinRate)
	}
	if c.CheckTimeout == 0 {
		c.CheckTimeout = time.Minute
	}
	if c.Progress == nil {
		c.Progress = io.Discard
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c, nil
}

// checkConfig is what the workloads' checkers take of c.
func (c Config) checkConfig() workloads.CheckConfig {
	return workloads.CheckConfig{Clients: c.Clients, LivenessBound: c.LivenessBound, CheckTimeout: c.CheckTimeout}
}
