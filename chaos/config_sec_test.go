package chaos

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/chaos/checkers"
	"github.com/zkrecipes/zkrecipes/chaos/report"
	"github.com/zkrecipes/zkrecipes/chaos/workloads"
)

func TestRedactArgs(t *testing.T) {
	for _, tc := range []struct{ in, want []string }{
		{[]string{"zkchaos", "-digest", "app:s3cret", "-secure"}, []string{"zkchaos", "-digest", "app:[REDACTED]", "-secure"}},
		{[]string{"zkchaos", "--digest=app:s3:cret"}, []string{"zkchaos", "--digest=app:[REDACTED]"}},
		{[]string{"zkchaos", "-digest", "nocolon"}, []string{"zkchaos", "-digest", "[REDACTED]"}},
		{[]string{"zkchaos", "-digest"}, []string{"zkchaos", "-digest"}},
		{[]string{"zkchaos", "-seed", "7", "app:s3cret"}, []string{"zkchaos", "-seed", "7", "app:s3cret"}},
	} {
		in := append([]string(nil), tc.in...)
		if got := RedactArgs(tc.in); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("RedactArgs(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if !reflect.DeepEqual(tc.in, in) {
			t.Errorf("RedactArgs changed its argument: %q", tc.in)
		}
	}
}

func TestSelectWorkloads(t *testing.T) {
	ws, err := SelectWorkloads(workloads.All(), " leader, lock ")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, w := range ws {
		names = append(names, w.Name())
	}
	if strings.Join(names, ",") != "lock,leader" {
		t.Errorf("selected %v, want lock,leader (in the order of All)", names)
	}
	if all, err := SelectWorkloads(workloads.All(), ""); err != nil || len(all) != len(workloads.All()) {
		t.Errorf("empty selection: %d workloads, %v", len(all), err)
	}
	if _, err := SelectWorkloads(workloads.All(), "lock,nope"); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "nope") {
		t.Errorf("unknown workload: %v, want ErrConfig naming it", err)
	}
}

func TestSecurityConfig(t *testing.T) {
	c, err := Config{}.WithDefaults()
	if err != nil || c.Root != "/chaos" {
		t.Fatalf("default root %q, %v", c.Root, err)
	}
	c, err = Config{Servers: []string{"127.0.0.1:2181"}}.WithDefaults()
	if err != nil || !strings.HasPrefix(c.Root, "/zkchaos-") || len(c.Root) != len("/zkchaos-")+8 {
		t.Fatalf("external default root %q, %v", c.Root, err)
	}
	if u, p := (Config{Secure: true}).credentials(); u != "zkchaos" || len(p) != 32 {
		t.Errorf("secure credentials %q/%d chars, want zkchaos and a 32-digit password", u, len(p))
	}
	if u, p := (Config{Digest: "app:a:b"}).credentials(); u != "app" || p != "a:b" {
		t.Errorf("digest credentials %q %q", u, p)
	}
	if u, _ := (Config{}).credentials(); u != "" {
		t.Errorf("plain run has user %q", u)
	}
	for _, bad := range []Config{
		{Root: "/"}, {Root: "chaos"}, {Root: "/a/"}, {Root: "/a//b"}, {Root: "/zookeeper"}, {Root: "/zookeeper/quota"}, {Root: "/a/../b"},
		{Digest: "nopassword"}, {Digest: ":pw"},
		{TLSCA: "ca.pem"},
		{Secure: true, Servers: []string{"h:1"}, Digest: "u:p"},
		{Secure: true, Servers: []string{"h:1"}, TLSCA: "ca.pem"},
	} {
		if _, err := bad.WithDefaults(); !errors.Is(err, ErrConfig) {
			t.Errorf("%+v: %v, want ErrConfig", bad, err)
		}
	}
	if _, err := (Config{Secure: true, Servers: []string{"h:1"}, TLSCA: "ca.pem", Digest: "u:p", Root: "/a/b"}).WithDefaults(); err != nil {
		t.Errorf("a secure external config: %v", err)
	}
}

func TestSameACL(t *testing.T) {
	want := append(zk.DigestACL(zk.PermAll, "u", "p"), zk.WorldACL(zk.PermRead)...)
	rev := []zk.ACL{want[1], want[0]}
	if !sameACL(want, rev) {
		t.Error("order matters")
	}
	for _, bad := range [][]zk.ACL{
		zk.WorldACL(zk.PermAll),
		append(zk.DigestACL(zk.PermAll, "u", "p"), zk.WorldACL(zk.PermAll)...),
		append(zk.DigestACL(zk.PermAll, "u", "other"), zk.WorldACL(zk.PermRead)...),
		zk.DigestACL(zk.PermAll, "u", "p"),
	} {
		if sameACL(bad, want) {
			t.Errorf("%v taken for %v", bad, want)
		}
	}
	s := newACLSampler(nil, want)
	if r := s.result(); !r.Inconclusive || r.Checked != 0 {
		t.Errorf("no read: %+v, want inconclusive", r)
	}
	s.seen["/r/a"], s.seen["/r/b"] = rev, zk.WorldACL(zk.PermAll)
	r := s.result()
	if r.Checked != 2 || len(r.Violations) != 1 || !strings.Contains(r.Violations[0].Msg, "/r/b") {
		t.Fatalf("result %+v, want one violation for /r/b", r)
	}
	if _, hash, _ := strings.Cut(want[0].ID, ":"); strings.Contains(r.Violations[0].Msg, hash) {
		t.Errorf("violation %q shows the digest hash", r.Violations[0].Msg)
	}
}

func TestNotApplicableIsNoPass(t *testing.T) {
	pass := report.ScenarioResult{Scenario: "lock/cut-short", Results: []checkers.Result{{Checker: "mutual-exclusion", Checked: 3}}}
	na := report.ScenarioResult{Scenario: "lock/kill-leader", NotApplicable: "kill-leader: server fault"}
	s := report.Summary{Scenarios: []report.ScenarioResult{pass, na}, Root: "/r"}
	if s.Passed() != 1 || s.NotApplicable() != 1 || s.Failed() {
		t.Errorf("passed %d, not applicable %d, failed %v", s.Passed(), s.NotApplicable(), s.Failed())
	}
	if l := na.Line(); !strings.HasPrefix(l, "N/A") || !strings.Contains(l, "server fault") {
		t.Errorf("line %q", l)
	}
	var b strings.Builder
	if err := s.WriteTable(&b); err != nil || !strings.Contains(b.String(), "1 passed, 1 not applicable") ||
		!strings.Contains(b.String(), "not applicable: kill-leader: server fault") || !strings.Contains(b.String(), "root /r: removed") {
		t.Errorf("table %q, %v", b.String(), err)
	}
	s.RootLeft = []string{"/r/x"}
	if !s.Failed() || !strings.Contains(s.RootLine(), "1 nodes LEFT") {
		t.Errorf("a node left: failed %v, %q", s.Failed(), s.RootLine())
	}
	s.RootLeft, s.RootErr = nil, "connection closed"
	if !s.Failed() {
		t.Error("an unlisted root passed")
	}
}
