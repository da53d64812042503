package faults

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"time"
)

// Tier is how much of the matrix runs and for how long.
type Tier string

const (
	// TierQuick injects every fault once per scenario, for the test suite
	// and CI.
	TierQuick Tier = "quick"
	// TierFull repeats each fault over the scenario's duration and adds a
	// mixed scenario per workload, for the nightly job.
	TierFull Tier = "full"
)

// Window is one fault injection of a schedule.
type Window struct {
	Fault string `json:"fault"`
	// At is when the fault starts, after the scenario's start: later if
	// the previous window's heal ran late, or if at the first window's
	// time a slow-starting workload (workloads.SlowStarter) had not yet
	// reached the throughput checker's rate (the runner then waits for
	// it, up to two session timeouts, and the later windows move with it).
	At time.Duration `json:"at"`
	// For is how long the fault stays before it is healed.
	For time.Duration `json:"for"`
	// Victim picks the client of client faults (modulo the clients).
	Victim int `json:"victim"`
	// Server picks the server of server faults among the candidates
	// (followers, servers), modulo their number.
	Server int `json:"server"`
	// Param is a fault-specific draw (bytes for limit-data, slice size).
	Param int64 `json:"param"`
}

// Schedule is the seeded list of fault windows of one scenario.
type Schedule struct {
	Seed     uint64        `json:"seed"`
	Scenario string        `json:"scenario"`
	Windows  []Window      `json:"windows"`
	Duration time.Duration `json:"duration"`
}

// NewSchedule draws the fault windows of a scenario from seed. The draw
// depends only on seed, the scenario's name, its faults, the tier, the
// duration and the session timeout, so the same seed replays the same
// schedule whatever other scenarios run. Quick: one window per fault, in
// order, starting half a session timeout to one timeout in. Full: windows
// of faults drawn at random, separated by gaps of one to two session
// timeouts, until duration is reached.
func NewSchedule(seed uint64, scenario string, faults []Fault, tier Tier, duration, sessionTimeout time.Duration) (Schedule, error) {
	if len(faults) == 0 {
		return Schedule{}, fmt.Errorf("%w: scenario %s has no fault", ErrSchedule, scenario)
	}
	if sessionTimeout <= 0 {
		return Schedule{}, fmt.Errorf("%w: session timeout %v", ErrSchedule, sessionTimeout)
	}
	h := fnv.New64a()
	h.Write([]byte(scenario))
	r := rand.New(rand.NewPCG(seed, h.Sum64()))
	s := Schedule{Seed: seed, Scenario: scenario, Duration: duration}
	scale := func(f float64) time.Duration { return time.Duration(f * float64(sessionTimeout)) }
	draw := func(f Fault, at time.Duration) Window {
		d := f.MinFor + r.Float64()*(f.MaxFor-f.MinFor)
		return Window{Fault: f.Name, At: at.Round(time.Millisecond), For: scale(d).Round(time.Millisecond),
			Victim: r.IntN(1 << 16), Server: r.IntN(1 << 16), Param: r.Int64N(1 << 32)}
	}
	at := scale(0.5 + r.Float64()*0.5)
	switch tier {
	case TierQuick, "":
		for _, f := range faults {
			w := draw(f, at)
			s.Windows = append(s.Windows, w)
			at += w.For + scale(1+r.Float64())
		}
	case TierFull:
		for at < duration || len(s.Windows) == 0 {
			w := draw(faults[r.IntN(len(faults))], at)
			s.Windows = append(s.Windows, w)
			at += w.For + scale(1+r.Float64())
		}
	default:
		return Schedule{}, fmt.Errorf("%w: tier %q (want quick or full)", ErrSchedule, tier)
	}
	return s, nil
}
