package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/zkrecipes/zkrecipes/chaos/checkers"
	"github.com/zkrecipes/zkrecipes/chaos/report"
)

// TestParseEvents: verdicts per test and subtest, the package's failure, and
// only failing tests' output kept.
func TestParseEvents(t *testing.T) {
	in := `{"Action":"run","Test":"TestA"}
{"Action":"output","Test":"TestA","Output":"a ok\n"}
{"Action":"pass","Test":"TestA"}
{"Action":"output","Test":"TestB/testing","Output":"boom\n"}
{"Action":"fail","Test":"TestB/testing"}
{"Action":"pass","Test":"TestB/debian12"}
{"Action":"fail","Test":"TestB"}
{"Action":"skip","Test":"TestC"}
{"Action":"output","Output":"FAIL\n"}
{"Action":"fail"}
`
	var r Run
	r.Tests = map[string]string{}
	out := parseEvents(strings.NewReader(in), &r)
	want := map[string]string{"TestA": "pass", "TestB/testing": "fail", "TestB/debian12": "pass", "TestB": "fail", "TestC": "skip"}
	for k, v := range want {
		if r.Tests[k] != v {
			t.Errorf("%s = %q, want %q", k, r.Tests[k], v)
		}
	}
	if r.Result != "fail" {
		t.Errorf("package result %q, want fail", r.Result)
	}
	if !strings.Contains(out, "boom") || strings.Contains(out, "a ok") {
		t.Errorf("output %q: want the failing test's only", out)
	}
}

// TestRenderPage: interop cells by recipe, peer release and server, leaves
// only (a parent test is not counted), packages by server and pass (n/a
// where the secured pass leaves a package out), chaos scenarios by
// workload, each cell naming its runs, failures listed, cells not run said
// so, each run's date and command, and the notes kept.
func TestRenderPage(t *testing.T) {
	res := Results{Date: "2026-11-28 00:00 UTC", Command: "cmd", Go: "go1.26", Earlier: "`old` (d0)", Runs: []Run{
		{Package: "lab/interop", Server: "3.9.6", Peers: "testing", Result: "fail", Date: "d1", Exec: "X=1 go test ./lab/interop", Command: "zkmatrix -a",
			Tests: map[string]string{"TestMutexWithKazooLock": "fail", "TestMutexWithKazooLock/testing": "fail", "TestMutexWithCuratorMutex/testing": "pass", "TestMutexWithCuratorMutex": "pass"}},
		{Package: "lab/interop", Server: "3.9.6", Peers: "debian12", Result: "pass",
			Tests: map[string]string{"TestMutexWithCuratorMutex/debian12": "pass", "TestMutexWithCuratorMutex": "pass", "TestGroupWithKazooParty/debian12": "skip"}},
		{Package: "lab/integration/lock", Server: "3.8.0", Result: "pass", Tests: map[string]string{"TestX": "pass", "TestY": "skip"}},
		{Package: "lab/integration/lock", Server: "3.9.6", Secure: true, Result: "pass", Tests: map[string]string{"TestX": "pass"}, Command: "zkmatrix -b"},
		{Package: "lab/integration/inspect", Server: "3.9.6", Result: "pass", Tests: map[string]string{"TestI": "pass"}},
		{Package: chaosItem, Part: "lock,leader", Server: "3.9.3", Result: notExercised, Command: "zkmatrix -b",
			Tests: map[string]string{"lock/kill-leader": "pass", "lock/partition": notExercised, "leader/kill-leader": "pass"}},
		{Package: chaosItem, Part: "queue", Server: "3.9.3", Result: "pass", Tests: map[string]string{"queue/kill-leader": "pass"}},
	}}
	notes := "## Notes\n\nhand-written"
	page := renderPage(res, notes)
	for _, want := range []string{
		"| `lock.Mutex` | not run | not run | not run | not run | pass 1 (#2) | **FAIL** 1/2 (#1) |",
		"| `group` | not run | not run | not run | not run | skipped (1) (#2) | not run |",
		"| package | ZK 3.8.0 | ZK 3.9.3 | ZK 3.9.6 | ZK 3.8.0 secured | ZK 3.9.3 secured | ZK 3.9.6 secured |",
		"| `lab/integration/lock` | pass 1, 1 skipped (#3) | not run | not run | not run | not run | pass 1 (#4) |",
		"| `lab/integration/inspect` | not run | not run | pass 1 (#5) | n/a | n/a | n/a |",
		"| workload | ZK 3.8.0 | ZK 3.9.3 | ZK 3.9.6 |\n",
		"| `lock` | not run | **not exercised** 1/2 (#6) | not run |",
		"| `queue` | not run | pass 1 (#7) | not run |",
		"| **all** | not run | **not exercised** 1/4 (#6, #7) | not run |",
		"- #1, ZooKeeper 3.9.6, lab/interop peers testing: TestMutexWithKazooLock/testing",
		"- #6, ZooKeeper 3.9.3, zkchaos quick tier, workloads lock,leader: lock/partition (not exercised)",
		"`zkmatrix -a`; `zkmatrix -b`.",
		"came from: `old` (d0).",
		"| 1 | d1 | 3.9.6 | lab/interop peers testing | fail | 2 | 0 | `X=1 go test ./lab/interop` |",
		"| 2 | not recorded | 3.9.6 | lab/interop peers debian12 | pass | 2 | 0 | not recorded |",
		"| 4 | not recorded | 3.9.6 secured | lab/integration/lock | pass |",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q:\n%s", want, page)
		}
	}
	if keptNotes(page) != notes {
		t.Errorf("notes not kept: %q", keptNotes(page))
	}
	// No secured run, no secured column; no chaos run, "(not run)".
	page = renderPage(Results{Runs: res.Runs[2:3]}, "")
	if strings.Contains(page, "secured |") || !strings.Contains(page, "| workload | ZK 3.8.0 | ZK 3.9.3 | ZK 3.9.6 |\n|---|---|---|---|\n| (not run) |") {
		t.Errorf("page without secured or chaos runs:\n%s", page)
	}
}

// TestChaosCells: a scenario played by two runs counts once, by the later;
// a run with no scenario counts as one failure.
func TestChaosCells(t *testing.T) {
	runs := []Run{
		{Package: chaosItem, Server: "3.9.3", Tests: map[string]string{"lock/a": "fail", "lock/b": "pass"}},
		{Package: "lab/integration/lock", Server: "3.9.3", Tests: map[string]string{"lock/a": "pass"}},
		{Package: chaosItem, Server: "3.9.3", Part: "lock", Tests: map[string]string{"lock/a": "pass"}},
		{Package: chaosItem, Server: "3.9.6", Secure: true, Part: "queue", Result: "fail", Tests: map[string]string{}},
	}
	g := chaosCells(runs)
	if got := g["lock"]["3.9.3"].String(); got != "pass 2 (#1, #3)" {
		t.Errorf("lock on 3.9.3: %s", got)
	}
	if got := g[allScenarios]["3.9.6 secured"].String(); got != "**FAIL** 1/1 (#4)" {
		t.Errorf("all on 3.9.6 secured: %s", got)
	}
	if g["lock"]["3.9.6"] != nil || len(g) != 3 {
		t.Errorf("cells %v", g)
	}
}

// TestMergeRuns: a run replaces the earlier run of the same package,
// server, peers, pass and chaos part, and keeps the others; the command of
// kept runs recorded without their own moves to Earlier, once.
func TestMergeRuns(t *testing.T) {
	prev := Results{Date: "d1", Command: "c1", Runs: []Run{
		{Package: "lab/interop", Server: "3.8.0", Peers: "testing", Result: "fail"},
		{Package: "lab/interop", Server: "3.9.6", Peers: "testing", Result: "pass"},
		{Package: "lab/integration/lock", Server: "3.9.6", Result: "pass", Command: "c0"},
		{Package: chaosItem, Server: "3.9.6", Part: "lock", Result: "pass", Command: "c0"},
	}}
	cur := Results{Date: "d2", Command: "c2", Runs: []Run{
		{Package: "lab/interop", Server: "3.8.0", Peers: "testing", Result: "pass", Command: "c2"},
		{Package: "lab/integration/lock", Server: "3.9.6", Secure: true, Result: "pass", Command: "c2"},
		{Package: chaosItem, Server: "3.9.6", Part: "queue", Result: "pass", Command: "c2"},
	}}
	m := mergeRuns(prev, cur)
	var got []string
	for _, r := range m.Runs {
		got = append(got, runKey(r)+"="+r.Result)
	}
	want := []string{
		"lab/interop|3.9.6|testing|false|=pass",
		"lab/integration/lock|3.9.6||false|=pass",
		"zkchaos|3.9.6||false|lock=pass",
		"lab/interop|3.8.0|testing|false|=pass",
		"lab/integration/lock|3.9.6||true|=pass",
		"zkchaos|3.9.6||false|queue=pass",
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("merged\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if m.Date != "d2" || m.Command != "c2" || m.Earlier != "`c1` (d1)" {
		t.Errorf("date %q command %q earlier %q", m.Date, m.Command, m.Earlier)
	}
	// Merged again: Earlier stays as it was; without legacy runs it goes.
	m2 := mergeRuns(m, Results{Date: "d3", Command: "c3"})
	if m2.Earlier != "`c1` (d1)" {
		t.Errorf("earlier after a second merge: %q", m2.Earlier)
	}
	m3 := mergeRuns(Results{Command: "c1", Runs: prev.Runs[2:]}, Results{Command: "c3"})
	if m3.Earlier != "" {
		t.Errorf("earlier without legacy runs: %q", m3.Earlier)
	}
	// Combining two results files (-combine), each with runs recorded
	// without their command: both files' earlier commands are named.
	other := Results{Date: "d4", Command: "c4", Runs: []Run{{Package: "testenv", Server: "3.8.0"}}}
	m4 := mergeRuns(other, m)
	if m4.Earlier != "`c4` (d4); `c1` (d1)" || len(m4.Runs) != 7 {
		t.Errorf("combined: earlier %q, %d runs", m4.Earlier, len(m4.Runs))
	}
}

// TestPlan: lab/interop once per peer release, the secured pass only the
// packages it secures (no interop, testenv, security or inspect), chaos
// parts last.
func TestPlan(t *testing.T) {
	pkgs := []string{"lab/integration/lock", "lab/integration/inspect", "lab/integration/security", "lab/integration/security/enforce", "lab/interop", "testenv"}
	show := func(jobs []job) string {
		var s []string
		for _, j := range jobs {
			if j.chaos {
				s = append(s, "chaos:"+j.part)
				continue
			}
			s = append(s, j.pkg+"@"+j.peers)
		}
		return strings.Join(s, " ")
	}
	for _, c := range []struct {
		secure bool
		want   string
	}{
		{false, "lab/integration/lock@ lab/integration/inspect@ lab/integration/security@ lab/integration/security/enforce@ lab/interop@debian12 lab/interop@testing testenv@ chaos: chaos:lock,leader"},
		{true, "lab/integration/lock@ chaos: chaos:lock,leader"},
	} {
		if got := show(plan(pkgs, []string{"", "lock,leader"}, []string{"debian12", "testing"}, c.secure)); got != c.want {
			t.Errorf("secure %t: %s\nwant %s", c.secure, got, c.want)
		}
	}
}

// TestSplitItems: chaos items out of -packages, their workloads tidied.
func TestSplitItems(t *testing.T) {
	pat, parts := splitItems(strings.Fields("./lab/integration/... zkchaos ./testenv zkchaos:lock,,leader zkchaosx"))
	if strings.Join(pat, " ") != "./lab/integration/... ./testenv zkchaosx" || strings.Join(parts, "|") != "|lock,leader" {
		t.Errorf("patterns %q parts %q", pat, parts)
	}
}

// TestParsePasses: plain, secured, both once each; anything else refused.
func TestParsePasses(t *testing.T) {
	for _, c := range []struct {
		in   string
		want string // "" for an error
	}{
		{"plain", "[false]"}, {"secured", "[true]"}, {"plain,secured", "[false true]"},
		{"secured,plain,secured", "[true false]"}, {"", ""}, {"secure", ""},
	} {
		got, err := parsePasses(c.in)
		if c.want == "" {
			if err == nil {
				t.Errorf("%q: no error", c.in)
			}
			continue
		}
		if err != nil || fmt.Sprint(got) != c.want {
			t.Errorf("%q: %v %v, want %s", c.in, got, err, c.want)
		}
	}
}

// TestExecLine: the command of a run can be pasted into a shell: the
// environment first, quoted where needed, an empty assignment bare.
func TestExecLine(t *testing.T) {
	got := execLine(runEnv("3.9.6", "testing", false), []string{"go", "test", "-run", "^(A|B)$", "./lab/interop"})
	want := "ZKRECIPES_ZK_VERSION=3.9.6 ZKRECIPES_PEERS=testing ZKRECIPES_SECURE= go test -run '^(A|B)$' ./lab/interop"
	if got != want {
		t.Errorf("execLine = %q\nwant %q", got, want)
	}
	if got := execLine(runEnv("3.8.0", "", true), []string{"a'b"}); got != `ZKRECIPES_ZK_VERSION=3.8.0 ZKRECIPES_SECURE=1 'a'\''b'` {
		t.Errorf("execLine = %q", got)
	}
}

// TestWithEnv: the run's assignments replace the caller's of the same name.
func TestWithEnv(t *testing.T) {
	got := withEnv([]string{"PATH=/bin", "ZKRECIPES_SECURE=1", "ZKRECIPES_ZK_VERSION=3.8.0"}, runEnv("3.9.3", "", false))
	want := "PATH=/bin ZKRECIPES_ZK_VERSION=3.9.3 ZKRECIPES_SECURE="
	if strings.Join(got, " ") != want {
		t.Errorf("withEnv = %q, want %q", got, want)
	}
}

// TestChaosArgs: the quick tier, the part's workloads, -secure, the seed
// and the report directory.
func TestChaosArgs(t *testing.T) {
	for _, c := range []struct {
		part   string
		secure bool
		want   string
	}{
		{"", false, "go run -tags zkrecipes_hooks ./lab/cmd/zkchaos -tier quick -seed 7 -out /r"},
		{"lock,leader", true, "go run -tags zkrecipes_hooks ./lab/cmd/zkchaos -tier quick -workloads lock,leader -secure -seed 7 -out /r"},
	} {
		if got := strings.Join(chaosArgs(c.part, c.secure, 7, "/r"), " "); got != c.want {
			t.Errorf("chaosArgs(%q, %t) = %s", c.part, c.secure, got)
		}
	}
}

// TestChaosVerdicts: each scenario's verdict (not applicable as a skip);
// the run passes only when zkchaos exited 0 with a complete passing
// summary; a summary.json of another layout is an error.
func TestChaosVerdicts(t *testing.T) {
	pass := report.ScenarioResult{Scenario: "lock/a", Results: []checkers.Result{{Checker: "mutex"}}}
	na := report.ScenarioResult{Scenario: "lock/b", NotApplicable: "server fault"}
	bad := report.ScenarioResult{Scenario: "lock/c", Err: "boom"}
	exitErr := errors.New("exit status 1")
	for _, c := range []struct {
		name  string
		sum   report.Summary
		err   error
		want  string
		tests string
	}{
		{"pass", report.Summary{Scenarios: []report.ScenarioResult{pass, na}}, nil, "pass", "lock/a=pass lock/b=skip"},
		{"a failing scenario", report.Summary{Scenarios: []report.ScenarioResult{pass, bad}}, exitErr, "fail", "lock/a=pass lock/c=fail"},
		{"passing summary, failed exit", report.Summary{Scenarios: []report.ScenarioResult{pass}}, exitErr, "fail", "lock/a=pass"},
		{"cut short", report.Summary{Scenarios: []report.ScenarioResult{pass}, Cut: true}, nil, "fail", "lock/a=pass"},
		{"no summary", report.Summary{}, exitErr, "fail", ""},
	} {
		// Through the file zkchaos writes: the reader must follow the
		// writer's layout (a Summary read as is from summary.json lost
		// every check and the seed, and every run was a failure).
		var buf bytes.Buffer
		if err := report.WriteSummaryJSON(&buf, c.sum); err != nil {
			t.Fatal(err)
		}
		sum, err := parseChaosSummary(buf.Bytes())
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		r := Run{Tests: map[string]string{}}
		got := chaosVerdicts(sum, c.err, &r)
		var tests []string
		for k, v := range r.Tests {
			tests = append(tests, k+"="+v)
		}
		sort.Strings(tests)
		if got != c.want || strings.Join(tests, " ") != c.tests {
			t.Errorf("%s: %s %v, want %s %s", c.name, got, tests, c.want, c.tests)
		}
	}
	if _, err := parseChaosSummary([]byte(`{"schema_version":1,"seed":7}`)); err == nil {
		t.Error("a version 1 summary.json parsed")
	}
}

// TestTallyString: the verdict first, failures before not exercised, then
// the runs.
func TestTallyString(t *testing.T) {
	for _, c := range []struct {
		t    tally
		want string
	}{
		{tally{}, "not run"},
		{tally{pass: 3, runs: []int{2}}, "pass 3 (#2)"},
		{tally{pass: 3, skip: 1}, "pass 3, 1 skipped"},
		{tally{pass: 3, fail: 1, noex: 1, runs: []int{1, 4}}, "**FAIL** 1/5 (#1, #4)"},
		{tally{pass: 3, noex: 1}, "**not exercised** 1/4"},
		{tally{skip: 2}, "skipped (2)"},
	} {
		if got := c.t.String(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.t, got, c.want)
		}
	}
}

// TestCommandLine: arguments with spaces are quoted, so the page's command
// can be pasted.
func TestCommandLine(t *testing.T) {
	old := os.Args
	defer func() { os.Args = old }()
	os.Args = []string{"zkmatrix", "-servers", "3.9.6", "-packages", "./lab/interop ./testenv"}
	want := "flock /tmp/zkrecipes-ensemble.lock go run ./lab/cmd/zkmatrix -servers 3.9.6 -packages './lab/interop ./testenv'"
	if got := commandLine(); got != want {
		t.Errorf("commandLine() = %q, want %q", got, want)
	}
}

// TestEarlierCommands: Earlier when kept; for results written before it
// was, their Command and Date if a run has no command of its own; else
// nothing.
func TestEarlierCommands(t *testing.T) {
	legacy := []Run{{Package: "testenv"}, {Package: "lab/interop", Command: "c2"}}
	for _, c := range []struct {
		res  Results
		want string
	}{
		{Results{Earlier: "`c0` (d0)", Command: "c1", Date: "d1", Runs: legacy}, "`c0` (d0)"},
		{Results{Command: "c1", Date: "d1", Runs: legacy}, "`c1` (d1)"},
		{Results{Command: "c1", Date: "d1", Runs: legacy[1:]}, ""},
	} {
		if got := earlierCommands(c.res); got != c.want {
			t.Errorf("earlierCommands = %q, want %q", got, c.want)
		}
	}
}
