// Package scale measures how the recipes' costs grow with size (contenders
// on one lock, holdings per process, queue length, barrier members and
// election participants, recipe instances per Session), ours beside the
// peers' where they have the recipe, and draws each metric as a log-log
// curve (zkbench -scale).
//
// A series (one kind of growth) is registered by the file that measures it
// (see register) and yields figures: one metric over the sizes, one curve
// per implementation. Series must keep to the machine's budget: the whole
// of zkbench -scale runs on 2 cores in under 20 minutes, so each series
// takes a Budget and picks its largest sizes to fit it, and says in its
// figures' notes where it stopped and why.
package scale

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/zkrecipes/zkrecipes/lab/bench"
)

// Point is one measurement: the metric's value Y at size X.
type Point struct {
	X float64 `json:"x"`
	Y float64 `json:"y"`
}

// Curve is one implementation's measurements of a metric, in increasing X.
type Curve struct {
	Impl   string  `json:"impl"`
	Points []Point `json:"points"`
	// Note says what the curve lacks (sizes not reached, and why).
	Note string `json:"note,omitempty"`
}

// Figure is one metric over one kind of size: the unit of a chart.
type Figure struct {
	// Name is the file name's stem: "lock-requests-per-handoff".
	Name   string  `json:"name"`
	Title  string  `json:"title"`
	XLabel string  `json:"x_label"`
	YLabel string  `json:"y_label"`
	Curves []Curve `json:"curves"`
	// Notes explain the figure (what a point is, where it bends).
	Notes []string `json:"notes,omitempty"`
}

// Env is what a series gets: the ensemble, the implementations to measure
// (a series skips those without the recipe, saying so in a note) and its
// share of the time budget.
type Env struct {
	Ensemble       bench.Ensemble
	Impls          []string
	SessionTimeout time.Duration
	// Budget is the time the series should take; sizes that would exceed
	// it are left out (and named in a note).
	Budget time.Duration
	// Quick shrinks every series to its smallest sizes (tests).
	Quick bool
	// ServerHeapMB is each server's maximum heap, in MB (0: testenv's
	// default, 128): the queue series sizes its ladder by it.
	ServerHeapMB int
	Progress     io.Writer
}

// heapMB is ServerHeapMB or testenv's default.
func (e *Env) heapMB() int {
	if e.ServerHeapMB > 0 {
		return e.ServerHeapMB
	}
	return 128
}

// Logf writes a progress line.
func (e *Env) Logf(format string, args ...any) {
	if e.Progress != nil {
		fmt.Fprintf(e.Progress, format+"\n", args...)
	}
}

// Series is one kind of growth.
type Series struct {
	// Name selects it on the command line: "lock", "queue", ...
	Name string
	// Share is its part of the whole budget (the shares are normalized).
	Share float64
	Run   func(ctx context.Context, env *Env) ([]Figure, error)
}

var registry []Series

// register adds a series; each series' file calls it from init.
func register(s Series) {
	registry = append(registry, s)
	sort.Slice(registry, func(i, j int) bool { return registry[i].Name < registry[j].Name })
}

// Names lists the registered series.
func Names() []string {
	var out []string
	for _, s := range registry {
		out = append(out, s.Name)
	}
	return out
}

// Config says what to run.
type Config struct {
	Impls  []string
	Series []string // default: all
	// Budget is the whole run's time (default 15 minutes).
	Budget         time.Duration
	SessionTimeout time.Duration
	Quick          bool
	// ServerHeapMB is the servers' heap (see Env.ServerHeapMB).
	ServerHeapMB int
	Progress     io.Writer
}

// Report is a run's figures, and the series that failed.
type Report struct {
	Started string            `json:"started"`
	Took    string            `json:"took"`
	Figures []Figure          `json:"figures"`
	Errors  map[string]string `json:"errors,omitempty"`
}

// Run runs the selected series one after the other against e. A series
// that fails is recorded in Errors and the run goes on; Run fails only
// when ctx ends or nothing is selected.
func Run(ctx context.Context, e bench.Ensemble, cfg Config) (*Report, error) {
	if cfg.Budget == 0 {
		cfg.Budget = 15 * time.Minute
	}
	if cfg.SessionTimeout == 0 {
		cfg.SessionTimeout = 3 * time.Second
	}
	if len(cfg.Impls) == 0 {
		cfg.Impls = bench.AllImpls
	}
	var run []Series
	total := 0.0
	for _, s := range registry {
		if len(cfg.Series) == 0 || slices.Contains(cfg.Series, s.Name) {
			run = append(run, s)
			total += s.Share
		}
	}
	for _, name := range cfg.Series {
		if !slices.ContainsFunc(registry, func(s Series) bool { return s.Name == name }) {
			return nil, fmt.Errorf("scale: no series %q (have %s)", name, strings.Join(Names(), ", "))
		}
	}
	if len(run) == 0 {
		return nil, errors.New("scale: no series selected")
	}
	start := time.Now()
	rep := &Report{Started: start.UTC().Format(time.RFC3339), Errors: map[string]string{}}
	for _, s := range run {
		env := &Env{Ensemble: e, Impls: cfg.Impls, SessionTimeout: cfg.SessionTimeout, Quick: cfg.Quick, Progress: cfg.Progress,
			ServerHeapMB: cfg.ServerHeapMB,
			Budget:       time.Duration(float64(cfg.Budget) * s.Share / total)}
		env.Logf("scale: %s (budget %s)", s.Name, env.Budget.Round(time.Second))
		figs, err := s.Run(ctx, env)
		rep.Figures = append(rep.Figures, figs...)
		if err != nil {
			rep.Errors[s.Name] = err.Error()
			env.Logf("scale: %s failed: %v", s.Name, err)
		}
		if ctx.Err() != nil {
			return rep, ctx.Err()
		}
	}
	rep.Took = time.Since(start).Round(time.Second).String()
	return rep, nil
}

// Write writes the report to dir: scale.json, one <figure>.svg per figure,
// and scale.md (the figures' notes and points as tables).
func (rep *Report) Write(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	js, err := json.MarshalIndent(rep, "", " ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "scale.json"), js, 0o644); err != nil {
		return err
	}
	var md strings.Builder
	for _, f := range rep.Figures {
		if err := os.WriteFile(filepath.Join(dir, f.Name+".svg"), []byte(f.SVG()), 0o644); err != nil {
			return err
		}
		f.Markdown(&md)
	}
	return os.WriteFile(filepath.Join(dir, "scale.md"), []byte(md.String()), 0o644)
}

// Markdown writes the figure as a heading, its notes and a table of its
// points (one column per implementation).
func (f Figure) Markdown(w io.Writer) {
	fmt.Fprintf(w, "### %s\n\n", f.Title)
	for _, n := range f.Notes {
		fmt.Fprintf(w, "- %s\n", n)
	}
	xs := map[float64]bool{}
	for _, c := range f.Curves {
		for _, p := range c.Points {
			xs[p.X] = true
		}
	}
	var sorted []float64
	for x := range xs {
		sorted = append(sorted, x)
	}
	sort.Float64s(sorted)
	fmt.Fprintf(w, "\n| %s |", f.XLabel)
	for _, c := range f.Curves {
		fmt.Fprintf(w, " %s |", c.Impl)
	}
	fmt.Fprint(w, "\n|---|")
	for range f.Curves {
		fmt.Fprint(w, "---|")
	}
	fmt.Fprintln(w)
	for _, x := range sorted {
		fmt.Fprintf(w, "| %s |", num(x))
		for _, c := range f.Curves {
			cell := "-"
			for _, p := range c.Points {
				if p.X == x {
					cell = num(p.Y)
				}
			}
			fmt.Fprintf(w, " %s |", cell)
		}
		fmt.Fprintln(w)
	}
	for _, c := range f.Curves {
		if c.Note != "" {
			fmt.Fprintf(w, "\n%s: %s\n", c.Impl, c.Note)
		}
	}
	fmt.Fprintln(w)
}

// num formats v with 3 significant digits.
func num(v float64) string {
	switch {
	case v == 0:
		return "0"
	case v >= 1000 || v <= -1000:
		return fmt.Sprintf("%.0f", v)
	}
	s := fmt.Sprintf("%.3g", v)
	if strings.Contains(s, ".") && !strings.Contains(s, "e") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}
