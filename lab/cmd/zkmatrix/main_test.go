package main

import (
	"os"
	"strings"
	"testing"
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
// only (a parent test is not counted), packages by server, failures listed,
// cells not run said so, and the notes kept.
func TestRenderPage(t *testing.T) {
	res := Results{Date: "2026-11-28 00:00 UTC", Command: "cmd", Go: "go1.26", Runs: []Run{
		{Package: "lab/interop", Server: "3.9.6", Peers: "testing", Result: "fail",
			Tests: map[string]string{"TestMutexWithKazooLock": "fail", "TestMutexWithKazooLock/testing": "fail", "TestMutexWithCuratorMutex/testing": "pass", "TestMutexWithCuratorMutex": "pass"}},
		{Package: "lab/interop", Server: "3.9.6", Peers: "debian12", Result: "pass",
			Tests: map[string]string{"TestMutexWithCuratorMutex/debian12": "pass", "TestMutexWithCuratorMutex": "pass", "TestGroupWithKazooParty/debian12": "skip"}},
		{Package: "lab/integration/lock", Server: "3.8.0", Result: "pass", Tests: map[string]string{"TestX": "pass", "TestY": "skip"}},
	}}
	notes := "## Notes\n\nhand-written"
	page := renderPage(res, notes)
	for _, want := range []string{
		"| `lock.Mutex` | not run | not run | not run | not run | pass 1 | **FAIL** 1/2 |",
		"| `group` | not run | not run | not run | not run | skipped (1) | not run |",
		"| `lab/integration/lock` | pass 1, 1 skipped | not run | not run |",
		"- ZooKeeper 3.9.6, `lab/interop` peers testing: TestMutexWithKazooLock/testing",
		"Command: `cmd`",
		"| 3.9.6 | `lab/interop` | testing | fail |",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q:\n%s", want, page)
		}
	}
	if keptNotes(page) != notes {
		t.Errorf("notes not kept: %q", keptNotes(page))
	}
}

// TestMergeRuns: a run replaces the earlier run of the same package, server
// and peers, and keeps the others.
func TestMergeRuns(t *testing.T) {
	prev := Results{Date: "d1", Command: "c1", Runs: []Run{
		{Package: "lab/interop", Server: "3.8.0", Peers: "testing", Result: "fail"},
		{Package: "lab/interop", Server: "3.9.6", Peers: "testing", Result: "pass"},
	}}
	cur := Results{Date: "d2", Command: "c2", Runs: []Run{{Package: "lab/interop", Server: "3.8.0", Peers: "testing", Result: "pass"}}}
	m := mergeRuns(prev, cur)
	if len(m.Runs) != 2 || m.Runs[0].Server != "3.9.6" || m.Runs[1].Result != "pass" {
		t.Fatalf("merged %+v", m.Runs)
	}
	if !strings.Contains(m.Date, "d1") || !strings.Contains(m.Date, "d2") || !strings.Contains(m.Command, "c1") {
		t.Errorf("date %q command %q: want both runs'", m.Date, m.Command)
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
