// Command raceretry reads the output of `go test -race ./... ./lab/...`
// (package-list mode, not -json) on standard input and decides which
// failed packages scripts/test.sh may run once more: only those whose every
// failure is go-zookeeper v1.0.4's own lastZxid race (sendSetWatches
// against recvLoop), a known upstream bug in the pinned client.
//
// A failed package is retried only if all of these hold:
//
//   - it has at least one "--- FAIL" test, and every failing test that has
//     no failing subtest says nothing but "race detected during execution
//     of test" (no t.Error, no t.Log, no chaos violation line), or else
//     logged the Attest line (none of its own checks failed, which the
//     test can know only of itself) with nothing but that race line after
//     it; a failing parent says nothing of its own, or attests likewise;
//   - every data race reported in its output is a race report naming
//     zk.(*Conn).sendSetWatches;
//   - nothing else is in its output: no panic, no timeout, no build or
//     setup failure, no line the parser does not know (but the chaos
//     end-to-end test's seed announcement).
//
// It prints the packages to run again on standard output, one per line,
// and on standard error, per failed package, which tests are retried and
// why, or why the package is not. Its exit status is 0 when every failed
// package may be retried (and there is one), 1 otherwise: then no package
// gets a second chance.
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
)

// Signature is what a race report must name to be go-zookeeper's own
// lastZxid race.
const Signature = "zk.(*Conn).sendSetWatches"

// Attest is the line (logged by the test with t.Log) by which a test that
// logs as it goes says that none of its own checks failed: lab/chaos's
// TestEndToEnd logs every scenario's verdict, so its output is never
// "nothing but the race". The test logs it only when none of its own checks
// failed, which it must track itself: testing.T's Failed also counts the
// race detector's reports (and fails the test for them), so a test that
// asked it would never attest after a race. Only race-only lines may
// follow it.
const Attest = "raceretry: none of this test's own checks failed"

// seedLine is the one kind of line a test binary may print outside its
// tests: a chaos test's announcement of its seed (TestEndToEnd,
// TestSecuredQuickTier, TestExternalServers: "chaos: TestX seed N (...").
var seedLine = regexp.MustCompile(`^chaos: Test\w+ seed \d+ \(`)

// Package is the verdict on one failed package.
type Package struct {
	Name   string
	Tests  []string // failing tests without failing subtests
	Retry  bool
	Reason string // why it is retried, or why not
}

var (
	endLine  = regexp.MustCompile(`^(ok|FAIL|\?)\s+(\S+)(\s|$)`)
	failLine = regexp.MustCompile(`^(\s*)--- FAIL: (\S+)`)
	raceOnly = regexp.MustCompile(`^\s*(testing\.go:\d+: )?race detected during execution of test$`)
	passLine = regexp.MustCompile(`^(\s*)--- (PASS|SKIP): `)
)

// Analyze splits log into packages and returns the verdict on each failed
// one, in order.
func Analyze(log string) []Package {
	var out []Package
	var chunk []string
	sc := bufio.NewScanner(strings.NewReader(log))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		m := endLine.FindStringSubmatch(line)
		if m == nil || (m[1] == "FAIL" && !strings.Contains(m[2], "/") && !strings.Contains(m[2], ".")) {
			chunk = append(chunk, line)
			continue
		}
		if m[1] == "FAIL" {
			out = append(out, judge(m[2], line, chunk))
		}
		chunk = nil
	}
	return out
}

// judge decides on the package pkg from its output lines.
func judge(pkg, end string, lines []string) Package {
	p := Package{Name: pkg}
	no := func(format string, args ...any) Package {
		p.Retry, p.Reason = false, fmt.Sprintf(format, args...)
		return p
	}
	if strings.Contains(end, "[") { // [build failed], [setup failed], [no test files]...
		return no("%s", strings.TrimSpace(end[strings.Index(end, "["):]))
	}
	type test struct {
		name   string
		indent int
		body   []string
	}
	var tests []*test
	passed := -1 // indent of the last passing test's line, while inside it
	var races [][]string
	var report []string
	inRace := false
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if inRace {
			if t == "==================" {
				inRace = false
				races = append(races, report)
				report = nil
			} else {
				report = append(report, l)
			}
			continue
		}
		switch {
		case t == "==================":
			inRace = true
			continue
		case t == "FAIL" || t == "" || strings.HasPrefix(t, "exit status "):
			continue
		}
		if m := failLine.FindStringSubmatch(l); m != nil {
			tests = append(tests, &test{name: m[2], indent: len(m[1])})
			passed = -1
			continue
		}
		if passLine.MatchString(l) {
			passed = len(passLine.FindStringSubmatch(l)[1])
			continue
		}
		if seedLine.MatchString(l) {
			continue
		}
		// A line belongs to the nearest failing test it is indented under
		// (a parent's logs may follow its subtests' reports), and to none
		// while it is under a passing subtest.
		in := len(l) - len(strings.TrimLeft(l, " \t"))
		if passed >= 0 && in > passed {
			return no("output outside any failing test: %q", t)
		}
		passed = -1
		var owner *test
		for i := len(tests) - 1; i >= 0; i-- {
			if tests[i].indent < in {
				owner = tests[i]
				break
			}
		}
		if owner == nil {
			return no("output outside any failing test: %q", t)
		}
		owner.body = append(owner.body, l)
	}
	if inRace {
		return no("a race report that does not end")
	}
	for _, r := range races {
		if !strings.Contains(strings.Join(r, "\n"), Signature) {
			return no("a data race that is not go-zookeeper's lastZxid race (no %s in the report)", Signature)
		}
	}
	for i, t := range tests {
		// A test followed by a deeper one has failing subtests: it is judged
		// by them, and must say nothing of its own.
		attested, rest := attestation(t.body)
		if i+1 < len(tests) && tests[i+1].indent > t.indent {
			if len(rest) > 0 && !attested {
				return no("%s failed with more than its subtests: %q", t.name, strings.TrimSpace(rest[0]))
			}
			if b, ok := notRace(rest); !ok {
				return no("%s failed with more than its subtests: %q", t.name, b)
			}
			continue
		}
		p.Tests = append(p.Tests, t.name)
		if len(rest) == 0 {
			return no("%s failed without saying why", t.name)
		}
		if !attested {
			if b, ok := notRace(t.body); !ok {
				return no("%s failed with something else than a race: %q", t.name, b)
			}
			continue
		}
		if b, ok := notRace(rest); !ok {
			return no("%s failed with something else than a race after its attestation: %q", t.name, b)
		}
	}
	switch {
	case len(p.Tests) == 0:
		return no("no failing test (the package failed outside its tests)")
	case len(races) == 0:
		return no("its tests report a race but no race report is in the output")
	}
	p.Retry, p.Reason = true, fmt.Sprintf("%s failed only with go-zookeeper's lastZxid race (%d race report(s), each naming %s)", strings.Join(p.Tests, ", "), len(races), Signature)
	return p
}

// attestation reports whether body holds the Attest line and returns
// what follows its last one (the whole body when there is none).
func attestation(body []string) (bool, []string) {
	for i := len(body) - 1; i >= 0; i-- {
		if strings.HasSuffix(strings.TrimSpace(body[i]), ": "+Attest) {
			return true, body[i+1:]
		}
	}
	return false, body
}

// notRace returns the first line of lines that is not the race-only line.
func notRace(lines []string) (string, bool) {
	for _, b := range lines {
		if !raceOnly.MatchString(b) {
			return strings.TrimSpace(b), false
		}
	}
	return "", true
}

func main() {
	raw, err := io.ReadAll(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "raceretry:", err)
		os.Exit(2)
	}
	pkgs := Analyze(string(raw))
	all := len(pkgs) > 0
	for _, p := range pkgs {
		if p.Retry {
			fmt.Fprintf(os.Stderr, "raceretry: %s may run again: %s\n", p.Name, p.Reason)
		} else {
			all = false
			fmt.Fprintf(os.Stderr, "raceretry: %s stays failed: %s\n", p.Name, p.Reason)
		}
	}
	if !all {
		if len(pkgs) == 0 {
			fmt.Fprintln(os.Stderr, "raceretry: no failed package found in the log")
		}
		os.Exit(1)
	}
	for _, p := range pkgs {
		fmt.Println(p.Name)
	}
}
