package report

import (
	"encoding/json"
	"io"
	"math"
	"strconv"
	"time"

	"github.com/zkrecipes/zkrecipes/chaos/checkers"
	"github.com/zkrecipes/zkrecipes/chaos/faults"
	"github.com/zkrecipes/zkrecipes/chaos/history"
)

// SchemaVersion is the version of summary.json's layout (schema_version).
// Version 1 was Summary marshalled as is: durations in nanoseconds, the
// seed a number.
const SchemaVersion = 2

// The document of summary.json. Every number fits a float64 exactly
// (counts, seconds to the millisecond); the seed, a uint64, is a string,
// and every time is in seconds after the run's or the scenario's start.
type summaryDoc struct {
	SchemaVersion  int           `json:"schema_version"`
	Verdict        string        `json:"verdict"`
	Complete       bool          `json:"complete"`
	Seed           string        `json:"seed"`
	Tier           string        `json:"tier"`
	Replay         string        `json:"replay"`
	Command        string        `json:"command,omitempty"`
	Backend        string        `json:"backend,omitempty"`
	Secure         bool          `json:"secure"`
	Started        string        `json:"started"` // RFC 3339
	Took           float64       `json:"took_seconds"`
	Duration       float64       `json:"duration_seconds"`
	SessionTimeout float64       `json:"session_timeout_seconds"`
	Clients        int           `json:"clients"`
	Totals         totalsDoc     `json:"totals"`
	Failing        []string      `json:"failing"`
	Attention      []Attention   `json:"attention"`
	Root           string        `json:"root,omitempty"`
	RootLeft       []string      `json:"root_left,omitempty"`
	RootErr        string        `json:"root_err,omitempty"`
	Scenarios      []scenarioDoc `json:"scenarios"`
}

type totalsDoc struct {
	Planned       int `json:"planned"`
	Scenarios     int `json:"scenarios"` // run so far, not applicable ones included
	Passed        int `json:"passed"`
	Failed        int `json:"failed"`
	NotApplicable int `json:"not_applicable"`
	NotExercised  int `json:"not_exercised"`
	Violations    int `json:"violations"`
	Errors        int `json:"errors"`
	Injected      int `json:"faults_injected"`
	Ops           int `json:"ops"`
}

type scenarioDoc struct {
	Scenario      string      `json:"scenario"`
	Workload      string      `json:"workload"`
	Faults        string      `json:"faults"`
	Verdict       string      `json:"verdict"`
	Replay        string      `json:"replay"`
	Took          float64     `json:"took_seconds"`
	Ran           float64     `json:"ran_seconds"`
	Ops           int         `json:"ops"`
	Injected      int         `json:"faults_injected"`
	Err           string      `json:"error,omitempty"`
	NotApplicable string      `json:"not_applicable,omitempty"`
	Windows       []Window    `json:"fault_windows"`
	Targets       []targetDoc `json:"targets"`
	Margins       *marginDoc  `json:"lease_margins,omitempty"`
	Checks        []checkDoc  `json:"checks"`
	History       string      `json:"history,omitempty"` // relative to the report directory
	Detail        string      `json:"detail,omitempty"`  // the scenario's page, relative to the report directory
}

// Window is a fault window as scheduled and, when it was injected, as
// the history recorded it (seconds after the scenario's start): a fault
// can hold well past its scheduled time when its heal waits for the
// ensemble (lose-quorum).
type Window struct {
	Fault        string   `json:"fault"`
	ScheduledAt  float64  `json:"scheduled_at_seconds"`
	ScheduledFor float64  `json:"scheduled_for_seconds"`
	Injected     bool     `json:"injected"`
	InjectedAt   *float64 `json:"injected_at_seconds,omitempty"`
	HealedAt     *float64 `json:"healed_at_seconds,omitempty"`
	HeldFor      *float64 `json:"held_for_seconds,omitempty"`
	NotInjected  string   `json:"not_injected,omitempty"` // why the injection failed
	Struck       string   `json:"struck,omitempty"`       // what it struck, in words
}

type targetDoc struct {
	Fault      string                `json:"fault"`
	At         float64               `json:"at_seconds"` // after the scenario's start
	Struck     string                `json:"struck"`
	Aim        string                `json:"aim,omitempty"`
	Client     string                `json:"client,omitempty"`
	ClientRole string                `json:"client_role,omitempty"`
	Servers    []faults.ServerTarget `json:"servers,omitempty"`
	AllClients bool                  `json:"all_clients,omitempty"`
	Placed     []faults.Placed       `json:"placed,omitempty"`
	Confirmed  string                `json:"confirmed,omitempty"`
}

type marginDoc struct {
	Count  int     `json:"count"`
	Min    float64 `json:"min_seconds"`
	Median float64 `json:"median_seconds"`
}

type checkDoc struct {
	Checker    string         `json:"checker"`
	Status     Status         `json:"status"`
	Reason     string         `json:"reason,omitempty"`
	Checked    int            `json:"checked"`
	Of         int            `json:"of,omitempty"`
	Violations []violationDoc `json:"violations,omitempty"`
	VoidedBy   string         `json:"voided_by,omitempty"`
	Expected   int            `json:"expected,omitempty"`
	Note       string         `json:"note,omitempty"`
	Took       float64        `json:"took_seconds"`
	Visual     string         `json:"visual,omitempty"` // porcupine's visualisation, relative to the report directory
}

type violationDoc struct {
	At     float64 `json:"at_seconds"` // after the scenario's start
	Client string  `json:"client,omitempty"`
	Msg    string  `json:"msg"`
}

// secs is d in seconds, to the millisecond.
func secs(d time.Duration) float64 { return math.Round(d.Seconds()*1000) / 1000 }

// relSecs is the history clock's t in seconds after h's start.
func relSecs(h history.History, t int64) float64 { return secs(time.Duration(t - h.Start)) }

// WriteSummaryJSON writes s as summary.json (schema SchemaVersion): the
// run's verdict and totals, the failing scenarios, what needs attention
// and, per scenario, its verdict, replay command, fault windows (as
// scheduled and as injected), targets, lease margins and checks.
func WriteSummaryJSON(w io.Writer, s Summary) error {
	d := summaryDoc{
		SchemaVersion: SchemaVersion, Verdict: s.Verdict(), Complete: s.Complete(),
		Seed: strconv.FormatUint(s.Seed, 10), Tier: string(s.Tier), Replay: s.ReplayCommand(), Command: s.Command,
		Backend: s.Backend, Secure: s.Secure, Started: s.Started.Format(time.RFC3339), Took: secs(s.Took),
		Duration: secs(s.Duration), SessionTimeout: secs(s.SessionTimeout), Clients: s.Clients,
		Totals: totalsDoc{
			Planned: max(s.Planned, len(s.Scenarios)), Scenarios: len(s.Scenarios), Passed: s.Passed(), Failed: len(s.Failing()),
			NotApplicable: s.NotApplicable(), NotExercised: s.NotExercised(), Violations: s.Violations(), Errors: s.Errors(),
			Injected: s.Injected(), Ops: s.Ops(),
		},
		Failing: s.Failing(), Attention: s.Attention(), Root: s.Root, RootLeft: s.RootLeft, RootErr: s.RootErr,
		Scenarios: []scenarioDoc{},
	}
	if d.Failing == nil {
		d.Failing = []string{}
	}
	if d.Attention == nil {
		d.Attention = []Attention{}
	}
	for _, r := range s.Scenarios {
		d.Scenarios = append(d.Scenarios, scenarioJSON(s, r))
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", " ")
	return enc.Encode(d)
}

func scenarioJSON(s Summary, r ScenarioResult) scenarioDoc {
	h := r.History
	sd := scenarioDoc{
		Scenario: r.Scenario, Workload: r.Workload, Faults: r.Faults, Verdict: r.Verdict(), Replay: s.ReplayCommand(r.Scenario),
		Took: secs(r.Took), Ran: secs(r.Ran), Ops: r.Ops, Injected: r.Injected, Err: r.Err, NotApplicable: r.NotApplicable,
		Windows: []Window{}, Targets: []targetDoc{}, Checks: []checkDoc{},
	}
	if r.NotApplicable == "" {
		sd.Detail = DetailFile(r.Scenario)
		if s.KeepsHistory(r) {
			sd.History = HistoryFile(r.Scenario)
		}
	}
	sd.Windows = append(sd.Windows, Windows(r)...)
	for _, t := range r.Targets {
		sd.Targets = append(sd.Targets, targetDoc{
			Fault: t.Fault, At: relSecs(h, t.At), Struck: t.String(), Aim: t.Aim, Client: t.Client, ClientRole: t.ClientRole,
			Servers: t.Servers, AllClients: t.AllClients, Placed: t.Placed, Confirmed: t.Confirmed,
		})
	}
	if _, ok := r.Result(checkers.LeaseMarginName); ok {
		sd.Margins = &marginDoc{Count: r.Margins, Min: secs(r.MarginMin), Median: secs(r.MarginMedian)}
	}
	for _, c := range r.Results {
		cd := checkDoc{Checker: c.Checker, Status: StatusOf(c), Reason: Reason(c), Checked: c.Checked, Of: c.Of,
			VoidedBy: c.VoidedBy, Expected: c.Expected, Note: c.Note, Took: secs(c.Took)}
		if len(c.Visual) > 0 {
			cd.Visual = VisualFile(r.Scenario, c.Checker)
		}
		for _, v := range c.Violations {
			cd.Violations = append(cd.Violations, violationDoc{At: relSecs(h, v.Time), Client: v.Client, Msg: v.Msg})
		}
		sd.Checks = append(sd.Checks, cd)
	}
	return sd
}

// Windows pairs each window of r's schedule with what its history
// recorded of it: when it began to be injected and when it was healed,
// or why it was not injected, or nothing when the scenario ended before
// it. The runner records a fault start for each window it plays, in the
// schedule's order, so the nth start is the nth window.
func Windows(r ScenarioResult) []Window {
	h := r.History
	type attempt struct {
		fault      string
		start, end int64
		why        string // not injected: why
		struck     string
	}
	var tries []attempt
	for _, e := range h.Events {
		if e.Client != history.Nemesis {
			continue
		}
		switch e.Kind {
		case history.KindFaultStart:
			tries = append(tries, attempt{fault: e.Key, start: e.Time, end: -1})
		case history.KindFaultTarget:
			for _, t := range faults.Targets(history.History{Events: []history.Event{e}}) {
				for i := len(tries) - 1; i >= 0; i-- {
					if tries[i].fault == e.Key {
						tries[i].struck = t.String()
						break
					}
				}
			}
		case history.KindFaultEnd:
			for i := len(tries) - 1; i >= 0; i-- {
				if tries[i].fault == e.Key && tries[i].end < 0 && tries[i].why == "" {
					if !history.Healed(e) {
						tries[i].why = e.Detail
					} else {
						tries[i].end = e.Time
					}
					break
				}
			}
		}
	}
	var out []Window
	for i, w := range r.Schedule.Windows {
		wd := Window{Fault: w.Fault, ScheduledAt: secs(w.At), ScheduledFor: secs(w.For)}
		if i < len(tries) && tries[i].fault == w.Fault {
			t := tries[i]
			at := relSecs(h, t.start)
			wd.InjectedAt, wd.Struck = &at, t.struck
			switch {
			case t.why != "":
				wd.NotInjected = t.why
			default:
				end := t.end
				if end < 0 { // never healed in the history: held to its end
					end = h.End
				}
				healed, held := relSecs(h, end), secs(time.Duration(end-t.start))
				wd.Injected, wd.HealedAt, wd.HeldFor = true, &healed, &held
			}
		}
		out = append(out, wd)
	}
	return out
}
