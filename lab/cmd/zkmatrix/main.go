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
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/zkrecipes/zkrecipes/chaos/report"
	"github.com/zkrecipes/zkrecipes/lab/internal/peers"
	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
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
	// Secure is set for the secured pass (ZKRECIPES_SECURE=1: TLS,
	// enforced digest authentication, the ACL on every recipe node).
	Secure bool `json:"secure,omitempty"`
	// Part names the workloads of a zkchaos run that played a part of
	// the quick tier (empty: all of it).
	Part string `json:"part,omitempty"`
	// Exec is the exact command that ran (environment and go test or
	// zkchaos); Command the zkmatrix invocation that ran it. Runs recorded
	// before zkmatrix kept them have neither.
	Exec    string `json:"exec,omitempty"`
	Command string `json:"command,omitempty"`
}

// Results is what a matrix run produced.
type Results struct {
	Date    string `json:"date"`
	Command string `json:"command"`
	Go      string `json:"go"`
	Runs    []Run  `json:"runs"`
	// Earlier names the zkmatrix commands (and dates) of kept runs that
	// were recorded before each run kept its own.
	Earlier string `json:"earlier,omitempty"`
}

func main() {
	servers := flag.String("servers", strings.Join(versions(), ","), "ZooKeeper releases to run against, comma-separated")
	peerRels := flag.String("peers", strings.Join(releaseNames(), ","), "peer releases for lab/interop, comma-separated")
	pkgs := flag.String("packages", defaultPackages, "what to run, space-separated: go list patterns, and "+chaosItem+" (the chaos quick tier) or "+chaosItem+":w1,w2 (the quick tier's scenarios of those workloads)")
	pass := flag.String("pass", "plain,secured", "plain (as the default tier), secured (ZKRECIPES_SECURE=1, the packages the full tier secures), or both, comma-separated")
	out := flag.String("out", "docs/compatibility.md", "the page to write")
	resultsPath := flag.String("results", "", "where to keep the results as JSON (default: beside -out, compatibility.json)")
	render := flag.Bool("render", false, "do not run: rewrite the page from -results")
	combine := flag.String("combine", "", "do not run: merge these results files (comma-separated, in order; later runs replace earlier ones of the same key) into -results (after its own runs with -merge), and write the page")
	merge := flag.Bool("merge", false, "keep the runs of -results that this run does not repeat (same package, server, peers, pass and chaos part)")
	timeout := flag.Duration("timeout", 30*time.Minute, "go test -timeout of each package run, and the limit of each zkchaos run")
	flag.Parse()
	if *resultsPath == "" {
		*resultsPath = filepath.Join(filepath.Dir(*out), "compatibility.json")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	var res Results
	if *combine != "" {
		if *merge {
			res = readResults(*resultsPath)
		}
		for _, f := range split(*combine) {
			res = mergeRuns(res, readResults(f))
		}
		writeResults(*resultsPath, res)
	} else if *render {
		res = readResults(*resultsPath)
	} else {
		command := commandLine()
		res = Results{Date: now(), Command: command, Go: runtime.Version()}
		passes, err := parsePasses(*pass)
		if err != nil {
			fatal(err)
		}
		patterns, parts := splitItems(strings.Fields(*pkgs))
		var list []string
		if len(patterns) > 0 {
			if list, err = goList(ctx, patterns); err != nil {
				fatal(err)
			}
		}
		for _, server := range split(*servers) {
			if _, err := testenv.LookupVersion(server); err != nil {
				fatal(err)
			}
		}
		for _, rel := range split(*peerRels) {
			if _, err := peers.Lookup(rel); err != nil {
				fatal(err)
			}
		}
	runs:
		for _, server := range split(*servers) {
			for _, secure := range passes {
				for _, job := range plan(list, parts, split(*peerRels), secure) {
					var r Run
					if job.chaos {
						r = runChaos(ctx, job.part, server, secure, *timeout)
					} else {
						r = runPackage(ctx, job.pkg, server, job.peers, secure, *timeout)
					}
					r.Command = command
					fmt.Printf("zkmatrix: ZooKeeper %s%s %s: %s (%d tests, %.0f s)\n", server, passNote(secure), r.label(), r.Result, len(r.Tests), r.Seconds)
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
			if _, err := os.Stat(*resultsPath); err == nil {
				prev = readResults(*resultsPath)
			}
			res = mergeRuns(prev, res)
		}
		writeResults(*resultsPath, res)
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

// readResults reads a results file, or exits.
func readResults(path string) Results {
	var res Results
	b, err := os.ReadFile(path)
	if err == nil {
		err = json.Unmarshal(b, &res)
	}
	if err != nil {
		fatal(fmt.Errorf("%s: %w", path, err))
	}
	return res
}

func writeResults(path string, res Results) {
	b, _ := json.MarshalIndent(res, "", "  ")
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		fatal(err)
	}
}

// chaosItem names the chaos quick tier among -packages.
const chaosItem = "zkchaos"

// defaultPackages is the whole matrix: every integration package, testenv
// and lab/interop, and the chaos quick tier.
const defaultPackages = "./lab/integration/... ./testenv ./lab/interop " + chaosItem

func now() string { return time.Now().UTC().Format("2006-01-02 15:04 MST") }

// parsePasses reads -pass: false for the plain pass, true for the secured.
func parsePasses(s string) ([]bool, error) {
	var out []bool
	seen := map[bool]bool{}
	for _, p := range split(s) {
		var secure bool
		switch p {
		case "plain":
		case "secured":
			secure = true
		default:
			return nil, fmt.Errorf("-pass %q: want plain, secured or both", p)
		}
		if !seen[secure] {
			seen[secure] = true
			out = append(out, secure)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("-pass %q: no pass", s)
	}
	return out, nil
}

// splitItems separates the go list patterns of -packages from its chaos
// items: "zkchaos" (the whole quick tier, part "") or "zkchaos:w1,w2" (the
// scenarios of those workloads, part "w1,w2"), in the order given.
func splitItems(items []string) (patterns, parts []string) {
	for _, it := range items {
		switch {
		case it == chaosItem:
			parts = append(parts, "")
		case strings.HasPrefix(it, chaosItem+":"):
			parts = append(parts, strings.Join(split(strings.TrimPrefix(it, chaosItem+":")), ","))
		default:
			patterns = append(patterns, it)
		}
	}
	return patterns, parts
}

// job is one run of a matrix pass on one server.
type job struct {
	pkg, peers string
	chaos      bool
	part       string
}

// securedPackage reports whether the secured pass runs pkg: as
// scripts/test.sh's step 7, the integration packages but security (it
// starts its own principals and ensembles to test exactly that) and
// inspect (its peers are not set up for TLS and digest).
func securedPackage(pkg string) bool {
	return strings.HasPrefix(pkg, "lab/integration/") && pkg != "lab/integration/inspect" &&
		pkg != "lab/integration/security" && !strings.HasPrefix(pkg, "lab/integration/security/")
}

// plan lists the runs of one pass on one server: each package (lab/interop
// once per peer release; the secured pass only the packages it secures),
// then each chaos part (the secured pass plays them with zkchaos -secure).
func plan(pkgs, parts, rels []string, secure bool) []job {
	var jobs []job
	for _, pkg := range pkgs {
		if secure && !securedPackage(pkg) {
			continue
		}
		if pkg == "lab/interop" {
			for _, rel := range rels {
				jobs = append(jobs, job{pkg: pkg, peers: rel})
			}
			continue
		}
		jobs = append(jobs, job{pkg: pkg})
	}
	for _, part := range parts {
		jobs = append(jobs, job{chaos: true, part: part})
	}
	return jobs
}

func passNote(secure bool) string {
	if secure {
		return " secured"
	}
	return ""
}

// label names what a run ran: the package (with its peers), or the chaos
// quick tier (with its part).
func (r Run) label() string {
	if r.Package == chaosItem {
		if r.Part == "" {
			return "zkchaos quick tier"
		}
		return "zkchaos quick tier, workloads " + r.Part
	}
	return r.Package + peersNote(r.Peers)
}

// runKey identifies what a run covers: a later run of the same key
// replaces it when merging.
func runKey(r Run) string {
	return fmt.Sprintf("%s|%s|%s|%t|%s", r.Package, r.Server, r.Peers, r.Secure, r.Part)
}

// mergeRuns returns cur with the runs of prev that cur does not repeat
// (same package, server, peers, pass and chaos part) before its own. Each
// run keeps its own date and command; the commands of kept runs recorded
// without them move to Earlier.
func mergeRuns(prev, cur Results) Results {
	seen := map[string]bool{}
	for _, r := range cur.Runs {
		seen[runKey(r)] = true
	}
	var runs []Run
	legacy := false
	for _, r := range prev.Runs {
		if !seen[runKey(r)] {
			runs = append(runs, r)
			legacy = legacy || r.Command == ""
		}
	}
	if legacy {
		e := earlierCommands(prev)
		if cur.Earlier != "" && cur.Earlier != e {
			e += "; " + cur.Earlier
		}
		cur.Earlier = e
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
// server (and peer release rel; secured with secure) and collects every
// test's verdict.
func runPackage(ctx context.Context, pkg, server, rel string, secure bool, timeout time.Duration) Run {
	began := time.Now()
	r := Run{Package: pkg, Server: server, Peers: rel, Secure: secure, Tests: map[string]string{}, Date: began.UTC().Format("2006-01-02 15:04 MST")}
	env := runEnv(server, rel, secure)
	args := []string{"go", "test", "-tags", "zkrecipes_hooks", "-race", "-count=1", "-json", "-timeout", timeout.String(), "./" + pkg}
	r.Exec = execLine(env, args)
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Env = withEnv(os.Environ(), env)
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

// runEnv is the environment a run sets: the server release, the peer
// release (lab/interop only) and the secured mode. ZKRECIPES_SECURE is
// always set, empty for the plain pass, so that the caller's does not leak
// in.
func runEnv(server, rel string, secure bool) []string {
	env := []string{testenv.EnvVersion + "=" + server}
	if rel != "" {
		env = append(env, peers.EnvRelease+"="+rel)
	}
	if secure {
		env = append(env, testutil.SecureEnv+"=1")
	} else {
		env = append(env, testutil.SecureEnv+"=")
	}
	return env
}

// withEnv returns base with the assignments of set replacing base's of
// the same names.
func withEnv(base, set []string) []string {
	names := map[string]bool{}
	for _, kv := range set {
		names[kv[:strings.IndexByte(kv, '=')]] = true
	}
	var out []string
	for _, kv := range base {
		if i := strings.IndexByte(kv, '='); i >= 0 && names[kv[:i]] {
			continue
		}
		out = append(out, kv)
	}
	return append(out, set...)
}

// execLine shows a command and its environment as a shell would take it.
func execLine(env, args []string) string {
	var parts []string
	for _, kv := range env {
		parts = append(parts, shellQuote(kv))
	}
	for _, a := range args {
		parts = append(parts, shellQuote(a))
	}
	return strings.Join(parts, " ")
}

func shellQuote(a string) string {
	if a != "" && !strings.ContainsAny(a, " \t'\"*$;&|<>()?[]{}\\`!#~") {
		return a
	}
	if i := strings.IndexByte(a, '='); i > 0 && !strings.ContainsAny(a[:i], " '\"") && a[i+1:] == "" {
		return a // NAME= : empty assignment
	}
	return "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
}

// runChaos plays the chaos quick tier (or the scenarios of part's
// workloads) with zkchaos against server, secured with secure, on a seed
// it draws and records, and takes each scenario's verdict from the
// report's summary.json.
func runChaos(ctx context.Context, part, server string, secure bool, timeout time.Duration) Run {
	began := time.Now()
	r := Run{Package: chaosItem, Server: server, Secure: secure, Part: part, Tests: map[string]string{}, Date: began.UTC().Format("2006-01-02 15:04 MST")}
	dir, err := os.MkdirTemp("", "zkmatrix-chaos-")
	if err != nil {
		r.Result, r.Output = "fail", err.Error()
		return r
	}
	defer os.RemoveAll(dir)
	env := runEnv(server, "", false) // zkchaos takes -secure, not the harness's variable
	args := chaosArgs(part, secure, rand.Uint64()|1, filepath.Join(dir, "report"))
	r.Exec = execLine(env, args)
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(cctx, args[0], args[1:]...)
	cmd.Env = withEnv(os.Environ(), env)
	var output bytes.Buffer
	cmd.Stdout, cmd.Stderr = &output, &output
	err = cmd.Run()
	r.Seconds = time.Since(began).Seconds()
	var sum chaosSummary
	if b, rerr := os.ReadFile(filepath.Join(dir, "report", report.FileSummary)); rerr == nil {
		sum, rerr = parseChaosSummary(b)
		err = errors.Join(err, rerr)
	} else {
		err = errors.Join(err, rerr)
	}
	r.Result = chaosVerdicts(sum, err, &r)
	if r.Result != "pass" {
		r.Output = tail(output.String(), 60)
		if err != nil {
			r.Output += "\nzkmatrix: " + err.Error()
		}
	}
	return r
}

// chaosSummary is what zkmatrix reads of zkchaos's summary.json (the
// layout of report.SchemaVersion): the run's verdict, whether it ran every
// planned scenario, and each scenario's verdict.
type chaosSummary struct {
	SchemaVersion int             `json:"schema_version"`
	Verdict       string          `json:"verdict"`
	Complete      bool            `json:"complete"`
	Scenarios     []chaosScenario `json:"scenarios"`
}

type chaosScenario struct {
	Scenario string `json:"scenario"`
	Verdict  string `json:"verdict"`
}

// parseChaosSummary reads summary.json; a layout other than
// report.SchemaVersion is an error (its verdicts would be guesses).
func parseChaosSummary(b []byte) (chaosSummary, error) {
	var sum chaosSummary
	if err := json.Unmarshal(b, &sum); err != nil {
		return chaosSummary{}, fmt.Errorf("summary.json: %w", err)
	}
	if sum.SchemaVersion != report.SchemaVersion {
		return chaosSummary{}, fmt.Errorf("summary.json: schema_version %d, want %d", sum.SchemaVersion, report.SchemaVersion)
	}
	return sum, nil
}

// chaosArgs is the zkchaos command of a part (all workloads when empty).
func chaosArgs(part string, secure bool, seed uint64, out string) []string {
	args := []string{"go", "run", "-tags", "zkrecipes_hooks", "./lab/cmd/zkchaos", "-tier", "quick"}
	if part != "" {
		args = append(args, "-workloads", part)
	}
	if secure {
		args = append(args, "-secure")
	}
	return append(args, "-seed", strconv.FormatUint(seed, 10), "-out", out)
}

// chaosVerdicts records each scenario's verdict of sum in r.Tests (pass,
// fail, skip for not applicable, not exercised) and returns the run's
// result: pass only when zkchaos exited 0 (runErr nil) with a complete
// summary that passed; "not exercised" when that was its only fault.
func chaosVerdicts(sum chaosSummary, runErr error, r *Run) string {
	for _, sc := range sum.Scenarios {
		switch sc.Verdict {
		case report.VerdictNotApplicable:
			r.Tests[sc.Scenario] = "skip"
		case report.VerdictNotExercised:
			r.Tests[sc.Scenario] = notExercised
		default:
			r.Tests[sc.Scenario] = sc.Verdict
		}
	}
	switch {
	case len(sum.Scenarios) == 0:
		return "fail"
	case sum.Verdict == report.VerdictNotExercised:
		return notExercised
	case sum.Verdict != report.VerdictPass || !sum.Complete || runErr != nil:
		return "fail"
	}
	return "pass"
}

// notExercised is the verdict of a chaos scenario that tested nothing
// (no violation, but never a pass), and of a run whose only fault that was.
const notExercised = "not exercised"

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
	{regexp.MustCompile(`^TestTryLock`), "lock.Mutex"},
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

// tally counts verdicts, and names the runs they come from (numbers of the
// Runs table, from 1).
type tally struct {
	pass, fail, skip, noex int
	runs                   []int
}

func (t tally) String() string {
	var s string
	switch n := t.pass + t.fail + t.noex; {
	case n+t.skip == 0:
		return "not run"
	case t.fail > 0:
		s = fmt.Sprintf("**FAIL** %d/%d", t.fail, n)
	case t.noex > 0:
		s = fmt.Sprintf("**not exercised** %d/%d", t.noex, n)
	case t.pass == 0:
		s = fmt.Sprintf("skipped (%d)", t.skip)
	default:
		s = fmt.Sprintf("pass %d", t.pass)
		if t.skip > 0 {
			s += fmt.Sprintf(", %d skipped", t.skip)
		}
	}
	if len(t.runs) > 0 {
		var refs []string
		for _, r := range t.runs {
			refs = append(refs, fmt.Sprintf("#%d", r))
		}
		s += " (" + strings.Join(refs, ", ") + ")"
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
	case notExercised:
		t.noex++
	}
}

// from records run n as a source of the tally (once).
func (t *tally) from(n int) {
	for _, r := range t.runs {
		if r == n {
			return
		}
	}
	t.runs = append(t.runs, n)
	sort.Ints(t.runs)
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

// column is one column of a table: a server release, plain or secured.
type column struct {
	server string
	secure bool
}

func (c column) key() string { return c.server + passNote(c.secure) }

func (c column) String() string {
	if c.secure {
		return "ZK " + c.server + " secured"
	}
	return "ZK " + c.server
}

// columns are the servers' plain columns, then their secured ones when
// any of runs is secured.
func columns(runs []Run) []column {
	var cols []column
	for _, s := range versions() {
		cols = append(cols, column{server: s})
	}
	for _, r := range runs {
		if r.Secure {
			for _, s := range versions() {
				cols = append(cols, column{server: s, secure: true})
			}
			break
		}
	}
	return cols
}

// grid is a table of tallies: row -> column key -> tally.
type grid map[string]map[string]*tally

func (g grid) at(row, col string) *tally {
	if g[row] == nil {
		g[row] = map[string]*tally{}
	}
	if g[row][col] == nil {
		g[row][col] = &tally{}
	}
	return g[row][col]
}

func (g grid) rows() []string {
	var rows []string
	for r := range g {
		rows = append(rows, r)
	}
	sort.Strings(rows)
	return rows
}

// chaosCells tallies the chaos runs per workload (row) and column; a
// scenario played by more than one run counts once, by its latest run.
func chaosCells(runs []Run) grid {
	type played struct {
		verdict string
		run     int
	}
	latest := map[string]map[string]played{} // column -> scenario -> verdict
	for i, run := range runs {
		if run.Package != chaosItem {
			continue
		}
		col := column{run.Server, run.Secure}.key()
		if latest[col] == nil {
			latest[col] = map[string]played{}
		}
		for sc, v := range run.Tests {
			latest[col][sc] = played{v, i + 1}
		}
		if len(run.Tests) == 0 { // the run failed before any scenario
			latest[col]["("+run.label()+")"] = played{"fail", i + 1}
		}
	}
	g := grid{}
	for col, scs := range latest {
		for sc, p := range scs {
			w := sc
			if i := strings.IndexByte(sc, '/'); i >= 0 {
				w = sc[:i]
			}
			for _, row := range []string{w, allScenarios} {
				t := g.at(row, col)
				t.add(p.verdict)
				t.from(p.run)
			}
		}
	}
	return g
}

// earlierCommands names the commands of the runs recorded without their
// own: Earlier, or for results written before Earlier was kept, their
// Command and Date (then those of every run).
func earlierCommands(res Results) string {
	if res.Earlier != "" {
		return res.Earlier
	}
	for _, r := range res.Runs {
		if r.Command == "" {
			return "`" + res.Command + "` (" + res.Date + ")"
		}
	}
	return ""
}

// allScenarios is the chaos table's total row (sorted last: '~').
const allScenarios = "~all"

func renderPage(res Results, notes string) string {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	p("# Compatibility matrix\n\n")
	p("Generated by `zkmatrix` (lab/cmd/zkmatrix) from the runs listed under Runs; do not edit above the notes\n")
	p("marker (the notes at the end are hand-written and kept). Each cell names the runs it comes from (#n): the\n")
	p("Runs table gives each run's start, time, result and the exact command that ran it (%s; go test with the\n", res.Go)
	p("race detector, as in the default tier; zkchaos without it, as `scripts/main.sh`).\n\n")
	p("The whole matrix: `flock /tmp/zkrecipes-ensemble.lock go run ./lab/cmd/zkmatrix`. One release at a time,\n")
	p("each into the same page: `flock /tmp/zkrecipes-ensemble.lock go run ./lab/cmd/zkmatrix -merge -servers 3.9.3`\n")
	p("(`-merge` keeps the earlier runs this one does not repeat; `-packages` and `-pass` narrow it further, and\n")
	p("`-packages zkchaos:lock,leader` plays the quick tier's scenarios of those workloads only, so that the tier\n")
	p("can be split over several shorter runs). The zkmatrix commands of the runs, in order: ")
	var cmds []string
	seen := map[string]bool{}
	for _, run := range res.Runs {
		if run.Command != "" && !seen[run.Command] {
			seen[run.Command] = true
			cmds = append(cmds, "`"+run.Command+"`")
		}
	}
	if len(cmds) == 0 {
		cmds = append(cmds, "none recorded")
	}
	p("%s.", strings.Join(cmds, "; "))
	if earlier := earlierCommands(res); earlier != "" {
		p(" Runs recorded before zkmatrix kept each run's command (\"not recorded\" below) came from: %s.", earlier)
	}
	p("\n\nZooKeeper releases: ")
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
	p("A cell counts the tests (subtests, where a test has them; scenarios, for the chaos tier) that passed;\n")
	p("**FAIL** n/m names how many of m failed, **not exercised** n/m how many tested nothing (no pass), and the\n")
	p("failures are listed below the tables. \"secured\" columns are the full tier's secured pass\n")
	p("(`ZKRECIPES_SECURE=1`: TLS, enforced digest authentication, the ACL on every recipe node; n/a: a package\n")
	p("that pass leaves out).\n\n")

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
	cells := grid{}
	for i, run := range res.Runs {
		if run.Package != "lab/interop" || run.Secure {
			continue
		}
		for test, v := range run.Tests {
			if !leaf(test, run.Tests) {
				continue
			}
			t := cells.at(recipe(test), run.Server+"/"+run.Peers)
			t.add(v)
			t.from(i + 1)
		}
	}
	recipes := cells.rows()
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

	// Integration packages x server release (x pass).
	var pkgRuns []Run
	for _, run := range res.Runs {
		if run.Package != "lab/interop" && run.Package != chaosItem {
			pkgRuns = append(pkgRuns, run)
		}
	}
	cols := columns(pkgRuns)
	p("\n## Packages against each ZooKeeper release\n\n| package |")
	for _, c := range cols {
		p(" %s |", c)
	}
	p("\n|---|")
	for range cols {
		p("---|")
	}
	p("\n")
	pkgCells := grid{}
	for i, run := range res.Runs {
		if run.Package == "lab/interop" || run.Package == chaosItem {
			continue
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
		t.from(i + 1)
		pkgCells.at(run.Package, "")
		pkgCells[run.Package][column{run.Server, run.Secure}.key()] = t
	}
	for _, pkg := range pkgCells.rows() {
		p("| `%s` |", pkg)
		for _, c := range cols {
			switch t := pkgCells[pkg][c.key()]; {
			case t != nil:
				p(" %s |", *t)
			case c.secure && !securedPackage(pkg):
				p(" n/a |")
			default:
				p(" not run |")
			}
		}
		p("\n")
	}

	// The chaos quick tier x server release.
	var chaosRuns []Run
	for _, run := range res.Runs {
		if run.Package == chaosItem {
			chaosRuns = append(chaosRuns, run)
		}
	}
	cols = columns(chaosRuns)
	p("\n## The chaos quick tier (`zkchaos`) against each ZooKeeper release\n\n")
	p("Scenarios per workload (every quick fault once); a tier split over runs (`zkchaos:w1,w2`) adds up here.\n\n| workload |")
	for _, c := range cols {
		p(" %s |", c)
	}
	p("\n|---|")
	for range cols {
		p("---|")
	}
	p("\n")
	cc := chaosCells(res.Runs)
	for _, w := range cc.rows() {
		name := "`" + w + "`"
		if w == allScenarios {
			name = "**all**"
		}
		p("| %s |", name)
		for _, c := range cols {
			t := tally{}
			if x := cc[w][c.key()]; x != nil {
				t = *x
			}
			p(" %s |", t)
		}
		p("\n")
	}
	if len(cc) == 0 {
		p("| (not run) |\n")
	}

	var failed []string
	for i, run := range res.Runs {
		if run.Result == "pass" {
			continue
		}
		var names []string
		for test, v := range run.Tests {
			if (v == "fail" || v == notExercised) && leaf(test, run.Tests) {
				names = append(names, test+map[bool]string{true: " (not exercised)"}[v == notExercised])
			}
		}
		sort.Strings(names)
		if len(names) == 0 {
			names = append(names, "no test failed: the run itself did ("+run.Result+")")
		}
		failed = append(failed, fmt.Sprintf("- #%d, ZooKeeper %s%s, %s: %s", i+1, run.Server, passNote(run.Secure), run.label(), strings.Join(names, ", ")))
	}
	p("\n## Runs\n\n| # | began | ZooKeeper | what | result | tests | seconds | command |\n|---|---|---|---|---|---|---|---|\n")
	for i, run := range res.Runs {
		date, cmd := run.Date, "not recorded"
		if date == "" {
			date = "not recorded"
		}
		if run.Exec != "" {
			cmd = "`" + strings.ReplaceAll(run.Exec, "|", "\\|") + "`"
		}
		p("| %d | %s | %s%s | %s | %s | %d | %.0f | %s |\n", i+1, date, run.Server, passNote(run.Secure), run.label(), run.Result, leaves(run.Tests), run.Seconds, cmd)
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

// leaves counts the tests of a run that have no subtests.
func leaves(tests map[string]string) int {
	n := 0
	for t := range tests {
		if leaf(t, tests) {
			n++
		}
	}
	return n
}
