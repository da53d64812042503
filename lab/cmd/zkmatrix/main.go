// Command zkmatrix runs the compatibility matrix and writes
// docs/compatibility.md from what it ran: every integration package and
// testenv against each ZooKeeper release of testenv.Versions
// (ZKRECIPES_ZK_VERSION), and lab/interop against each release too, once per
// peer release (ZKRECIPES_PEERS: Curator 5.4 and kazoo 2.8 of Debian 12,
// Curator 5.7.1 and kazoo 2.11.0 of Debian testing). Each run is one
// `go test -race -count=1 -json` of one package, one after the other; the
// page gives, per recipe, peer release and server release, how many tests
// passed and failed, with the date and the command line.
//
// It starts ensembles, so run it under the ensemble lock:
//
//	flock /tmp/zkrecipes-ensemble.lock go run ./lab/cmd/zkmatrix
//
// -servers, -peers and -packages narrow the run (a slice: cells not run say
// so); -render rewrites the page from a results file of an earlier run
// without running anything. The part of the page below the notes marker is
// hand-written and kept as it is.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/zkrecipes/zkrecipes/lab/internal/peers"
	"github.com/zkrecipes/zkrecipes/testenv"
)

const modPrefix = "github.com/zkrecipes/zkrecipes/"

// Run is one go test of one package against one server release (and, for
// lab/interop, one peer release).
type Run struct {
	Package string `json:"package"`        // relative to the repository: lab/integration/lock
	Date    string `json:"date,omitempty"` // when it began
	Server  string `json:"server"`         // ZooKeeper release
	Peers   string `json:"peers,omitempty"`
	// Tests maps each test and subtest that ended to pass, fail or skip.
	Tests   map[string]string `json:"tests"`
	Result  string            `json:"result"` // pass, fail (the package's own verdict)
	Seconds float64           `json:"seconds"`
	Output  string            `json:"output,omitempty"` // the tail of a failed run's output
}

// Results is what a matrix run produced.
type Results struct {
	Date    string `json:"date"`
	Command string `json:"command"`
	Go      string `json:"go"`
	Runs    []Run  `json:"runs"`
}

func main() {
	servers := flag.String("servers", strings.Join(versions(), ","), "ZooKeeper releases to run against, comma-separated")
	peerRels := flag.String("peers", strings.Join(releaseNames(), ","), "peer releases for lab/interop, comma-separated")
	pkgs := flag.String("packages", "./lab/integration/... ./testenv ./lab/interop", "packages to run (go list patterns, space-separated)")
	out := flag.String("out", "docs/compatibility.md", "the page to write")
	resultsPath := flag.String("results", "", "where to keep the results as JSON (default: beside -out, compatibility.json)")
	render := flag.Bool("render", false, "do not run: rewrite the page from -results")
	merge := flag.Bool("merge", false, "keep the runs of -results that this run does not repeat (same package, server and peers)")
	timeout := flag.Duration("timeout", 30*time.Minute, "go test -timeout of each package run")
	flag.Parse()
	if *resultsPath == "" {
		*resultsPath = filepath.Join(filepath.Dir(*out), "compatibility.json")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	var res Results
	if *render {
		b, err := os.ReadFile(*resultsPath)
		if err == nil {
			err = json.Unmarshal(b, &res)
		}
		if err != nil {
			fatal(err)
		}
	} else {
		res = Results{Date: time.Now().UTC().Format("2006-01-02 15:04 MST"), Command: commandLine(), Go: runtime.Version()}
		list, err := goList(ctx, strings.Fields(*pkgs))
		if err != nil {
			fatal(err)
		}
	runs:
		for _, server := range split(*servers) {
			if _, err := testenv.LookupVersion(server); err != nil {
				fatal(err)
			}
			for _, pkg := range list {
				rels := []string{""}
				if pkg == "lab/interop" {
					rels = split(*peerRels)
				}
				for _, rel := range rels {
					if rel != "" {
						if _, err := peers.Lookup(rel); err != nil {
							fatal(err)
						}
					}
					r := runPackage(ctx, pkg, server, rel, *timeout)
					fmt.Printf("zkmatrix: ZooKeeper %s %s%s: %s (%d tests, %.0f s)\n", server, pkg, peersNote(rel), r.Result, len(r.Tests), r.Seconds)
					if ctx.Err() != nil {
						// Interrupted: what ran before is kept, this run is not.
						fmt.Fprintln(os.Stderr, "zkmatrix: interrupted; keeping the runs that ended")
						break runs
					}
					res.Runs = append(res.Runs, r)
				}
			}
		}
		if *merge {
			var prev Results
			if b, err := os.ReadFile(*resultsPath); err == nil {
				if err := json.Unmarshal(b, &prev); err != nil {
					fatal(err)
				}
			}
			res = mergeRuns(prev, res)
		}
		b, _ := json.MarshalIndent(res, "", "  ")
		if err := os.WriteFile(*resultsPath, append(b, '\n'), 0o644); err != nil {
			fatal(err)
		}
	}
	old, _ := os.ReadFile(*out)
	if err := os.WriteFile(*out, []byte(renderPage(res, keptNotes(string(old)))), 0o644); err != nil {
		fatal(err)
	}
	fmt.Println("zkmatrix: wrote", *out, "and", *resultsPath)
	if ctx.Err() != nil {
		os.Exit(1) // interrupted: the matrix is incomplete
	}
	for _, r := range res.Runs {
		if r.Result != "pass" {
			os.Exit(1)
		}
	}
}

// mergeRuns returns cur with the runs of prev that cur does not repeat
// (same package, server and peers) before its own; the date and command
// become both runs'.
func mergeRuns(prev, cur Results) Results {
	key := func(r Run) string { return r.Package + "|" + r.Server + "|" + r.Peers }
	seen := map[string]bool{}
	for _, r := range cur.Runs {
		seen[key(r)] = true
	}
	var runs []Run
	for _, r := range prev.Runs {
		if !seen[key(r)] {
			runs = append(runs, r)
		}
	}
	if len(runs) > 0 {
		cur.Date = prev.Date + "; " + cur.Date
		cur.Command = prev.Command + "`, then `" + cur.Command
	}
	cur.Runs = append(runs, cur.Runs...)
	return cur
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "zkmatrix:", err)
	os.Exit(2)
}

func versions() []string {
	var v []string
	for _, z := range testenv.Versions {
		v = append(v, z.Version)
	}
	return v
}

func releaseNames() []string {
	var v []string
	for _, r := range peers.Releases {
		v = append(v, r.Name)
	}
	return v
}

func split(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func peersNote(rel string) string {
	if rel == "" {
		return ""
	}
	return " peers " + rel
}

func commandLine() string {
	args := []string{"go", "run", "./lab/cmd/zkmatrix"}
	for _, a := range os.Args[1:] {
		if strings.ContainsAny(a, " \t'\"*") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		args = append(args, a)
	}
	return "flock /tmp/zkrecipes-ensemble.lock " + strings.Join(args, " ")
}

// goList expands patterns into packages relative to the repository, those
// with tests only.
func goList(ctx context.Context, patterns []string) ([]string, error) {
	args := append([]string{"list", "-f", "{{if or .TestGoFiles .XTestGoFiles}}{{.ImportPath}}{{end}}"}, patterns...)
	out, err := exec.CommandContext(ctx, "go", args...).Output()
	if err != nil {
		return nil, fmt.Errorf("go list: %w", err)
	}
	var pkgs []string
	for _, l := range strings.Fields(string(out)) {
		pkgs = append(pkgs, strings.TrimPrefix(l, modPrefix))
	}
	return pkgs, nil
}

// runPackage runs one package's tests with the race detector against
// server (and peer release rel) and collects every test's verdict.
func runPackage(ctx context.Context, pkg, server, rel string, timeout time.Duration) Run {
	began := time.Now()
	r := Run{Package: pkg, Server: server, Peers: rel, Tests: map[string]string{}, Date: began.UTC().Format("2006-01-02 15:04 MST")}
	cmd := exec.CommandContext(ctx, "go", "test", "-tags", "zkrecipes_hooks", "-race", "-count=1", "-json", "-timeout", timeout.String(), "./"+pkg)
	cmd.Env = append(os.Environ(), testenv.EnvVersion+"="+server, peers.EnvRelease+"="+rel)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		r.Result, r.Output = "fail", err.Error()
		return r
	}
	if err := cmd.Start(); err != nil {
		r.Result, r.Output = "fail", err.Error()
		return r
	}
	output := parseEvents(stdout, &r)
	err = cmd.Wait()
	r.Seconds = time.Since(began).Seconds()
	switch {
	case err == nil && r.Result == "":
		r.Result = "pass"
	case err != nil:
		r.Result = "fail"
	}
	if r.Result != "pass" {
		r.Output = tail(output+stderr.String(), 60)
	}
	return r
}

// event is one line of go test -json.
type event struct {
	Action string
	Test   string
	Output string
}

// parseEvents reads go test -json, recording each test's verdict in r (and
// the package's, when it failed), and returns the output lines of failing
// tests and of the package.
func parseEvents(in io.Reader, r *Run) string {
	dec := json.NewDecoder(in)
	var out strings.Builder
	perTest := map[string]*strings.Builder{}
	for {
		var e event
		if err := dec.Decode(&e); err != nil {
			break
		}
		switch e.Action {
		case "output":
			if e.Test == "" {
				out.WriteString(e.Output)
				continue
			}
			b := perTest[e.Test]
			if b == nil {
				b = &strings.Builder{}
				perTest[e.Test] = b
			}
			b.WriteString(e.Output)
		case "pass", "fail", "skip":
			if e.Test == "" {
				if e.Action == "fail" {
					r.Result = "fail"
				}
				continue
			}
			r.Tests[e.Test] = e.Action
			if e.Action == "fail" && perTest[e.Test] != nil {
				out.WriteString(perTest[e.Test].String())
			}
			delete(perTest, e.Test)
		}
	}
	return out.String()
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// notesMarker starts the hand-written part of the page, kept by renderPage.
const notesMarker = "<!-- zkmatrix: the hand-written notes below are kept as they are -->"

func keptNotes(page string) string {
	if i := strings.Index(page, notesMarker); i >= 0 {
		return strings.TrimSpace(page[i+len(notesMarker):])
	}
	return ""
}

// recipeOf maps an interop test to the recipe it proves, by the test name's
// prefix (docs/compatibility.md's tables name the same tests).
var recipeOf = []struct {
	re     *regexp.Regexp
	recipe string
}{
	{regexp.MustCompile(`^TestMultiMutex`), "lock.MultiMutex"},
	{regexp.MustCompile(`^TestMutex`), "lock.Mutex"},
	{regexp.MustCompile(`^TestSemaphore`), "lock.Semaphore"},
	{regexp.MustCompile(`^TestElection`), "leader.Election"},
	{regexp.MustCompile(`^TestRWMutex`), "rwlock.RWMutex"},
	{regexp.MustCompile(`^TestDoubleBarrier`), "barrier.DoubleBarrier"},
	{regexp.MustCompile(`^TestQueue`), "queue.Queue"},
	{regexp.MustCompile(`^TestSharedCount`), "shared.Count"},
	{regexp.MustCompile(`^TestAtomicLong`), "shared.Long"},
	{regexp.MustCompile(`^TestGroup`), "group"},
	{regexp.MustCompile(`^TestPartitioner`), "partition.Partitioner"},
	{regexp.MustCompile(`^TestDiscovery`), "discovery"},
}

func recipe(test string) string {
	for _, r := range recipeOf {
		if r.re.MatchString(test) {
			return r.recipe
		}
	}
	return "other"
}

// tally counts verdicts.
type tally struct{ pass, fail, skip int }

func (t tally) String() string {
	switch {
	case t.pass+t.fail+t.skip == 0:
		return "not run"
	case t.fail > 0:
		return fmt.Sprintf("**FAIL** %d/%d", t.fail, t.pass+t.fail)
	case t.pass == 0:
		return fmt.Sprintf("skipped (%d)", t.skip)
	}
	s := fmt.Sprintf("pass %d", t.pass)
	if t.skip > 0 {
		s += fmt.Sprintf(", %d skipped", t.skip)
	}
	return s
}

func (t *tally) add(v string) {
	switch v {
	case "pass":
		t.pass++
	case "fail":
		t.fail++
	case "skip":
		t.skip++
	}
}

// leaf reports whether test has no subtests among tests (a parent's
// verdict only repeats its subtests').
func leaf(test string, tests map[string]string) bool {
	for t := range tests {
		if strings.HasPrefix(t, test+"/") {
			return false
		}
	}
	return true
}

func renderPage(res Results, notes string) string {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	p("# Compatibility matrix\n\n")
	p("Generated by `zkmatrix` from the runs listed under Runs; do not edit above the notes marker (the notes\n")
	p("at the end are hand-written and kept). Date: %s. Command: `%s` (%s, the race detector on, as in the\n", res.Date, res.Command, res.Go)
	p("default tier). The whole matrix: `flock /tmp/zkrecipes-ensemble.lock go run ./lab/cmd/zkmatrix`.\n\n")
	p("ZooKeeper releases: ")
	var zs []string
	for _, z := range testenv.Versions {
		zs = append(zs, fmt.Sprintf("%s (Debian %s, `%s`)", z.Version, z.Suite, z.Image))
	}
	p("%s. Peer releases: ", strings.Join(zs, ", "))
	var rs []string
	for _, r := range peers.Releases {
		where := "on this machine"
		if r.Image != "" {
			where = "in `" + r.Image + "`"
		}
		rs = append(rs, fmt.Sprintf("`%s`: Curator %s and kazoo %s of Debian %s, %s", r.Name, r.Curator, r.Kazoo, r.Suite, where))
	}
	p("%s.\n\n", strings.Join(rs, "; "))
	p("A cell counts the tests (subtests, where a test has them) that passed; **FAIL** n/m names how many of m\n")
	p("failed, and the failures are listed below the tables.\n\n")

	servers := versions()
	rels := peers.Releases
	// Interop: recipe x peer release x server release.
	p("## Recipes against Curator and kazoo (`lab/interop`)\n\n| recipe |")
	for _, s := range servers {
		for _, r := range rels {
			p(" ZK %s, Curator %s / kazoo %s |", s, r.Curator, r.Kazoo)
		}
	}
	p("\n|---|")
	for range servers {
		for range rels {
			p("---|")
		}
	}
	p("\n")
	cells := map[string]map[string]*tally{} // recipe -> server/peers -> tally
	for _, run := range res.Runs {
		if run.Package != "lab/interop" {
			continue
		}
		for test, v := range run.Tests {
			if !leaf(test, run.Tests) {
				continue
			}
			rc := recipe(test)
			if cells[rc] == nil {
				cells[rc] = map[string]*tally{}
			}
			k := run.Server + "/" + run.Peers
			if cells[rc][k] == nil {
				cells[rc][k] = &tally{}
			}
			cells[rc][k].add(v)
		}
	}
	var recipes []string
	for rc := range cells {
		recipes = append(recipes, rc)
	}
	sort.Strings(recipes)
	for _, rc := range recipes {
		p("| `%s` |", rc)
		for _, s := range servers {
			for _, r := range rels {
				t := tally{}
				if c := cells[rc][s+"/"+r.Name]; c != nil {
					t = *c
				}
				p(" %s |", t)
			}
		}
		p("\n")
	}
	if len(recipes) == 0 {
		p("| (not run) |\n")
	}

	// Integration packages x server release.
	p("\n## Packages against each ZooKeeper release\n\n| package |")
	for _, s := range servers {
		p(" ZK %s |", s)
	}
	p("\n|---|")
	for range servers {
		p("---|")
	}
	p("\n")
	pkgCells := map[string]map[string]*tally{}
	var pkgs []string
	for _, run := range res.Runs {
		if run.Package == "lab/interop" {
			continue
		}
		if pkgCells[run.Package] == nil {
			pkgCells[run.Package] = map[string]*tally{}
			pkgs = append(pkgs, run.Package)
		}
		t := &tally{}
		for test, v := range run.Tests {
			if leaf(test, run.Tests) {
				t.add(v)
			}
		}
		if run.Result == "fail" && t.fail == 0 {
			t.fail++ // the package failed outside any test (build, timeout)
		}
		pkgCells[run.Package][run.Server] = t
	}
	sort.Strings(pkgs)
	for _, pkg := range pkgs {
		p("| `%s` |", pkg)
		for _, s := range servers {
			t := tally{}
			if c := pkgCells[pkg][s]; c != nil {
				t = *c
			}
			p(" %s |", t)
		}
		p("\n")
	}

	var failed []string
	for _, run := range res.Runs {
		if run.Result == "pass" {
			continue
		}
		var names []string
		for test, v := range run.Tests {
			if v == "fail" && leaf(test, run.Tests) {
				names = append(names, test)
			}
		}
		sort.Strings(names)
		failed = append(failed, fmt.Sprintf("- ZooKeeper %s, `%s`%s: %s", run.Server, run.Package, peersNote(run.Peers), strings.Join(names, ", ")))
	}
	p("\n## Runs\n\n| began | ZooKeeper | package | peers | result | seconds |\n|---|---|---|---|---|---|\n")
	for _, run := range res.Runs {
		p("| %s | %s | `%s` | %s | %s | %.0f |\n", run.Date, run.Server, run.Package, run.Peers, run.Result, run.Seconds)
	}
	p("\n## Failures\n\n")
	if len(failed) == 0 {
		p("None.\n")
	} else {
		p("%s\n", strings.Join(failed, "\n"))
	}
	p("\n%s\n\n%s\n", notesMarker, notes)
	return b.String()
}
