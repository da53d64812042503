package twophase

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/zkrecipes/recipes"
)

func TestRule(t *testing.T) {
	v := func(name string, vote Decision, vanished bool) siteView {
		return siteView{Name: name, Vote: vote, Vanished: vanished}
	}
	for _, tc := range []struct {
		name    string
		sites   []siteView
		expired bool
		want    Decision
		done    bool
		reason  string
	}{
		{"no sites", nil, false, Abort, true, "no sites"},
		{"all commit", []siteView{v("a", Commit, false), v("b", Commit, false)}, false, Commit, true, ""},
		{"all commit after deadline", []siteView{v("a", Commit, false), v("b", Commit, false)}, true, Commit, true, ""},
		{"all commit, one vanished after voting", []siteView{v("a", Commit, true), v("b", Commit, false)}, false, Commit, true, ""},
		{"waiting", []siteView{v("a", Commit, false), v("b", 0, false)}, false, 0, false, ""},
		{"nobody voted yet", []siteView{v("a", 0, false), v("b", 0, false)}, false, 0, false, ""},
		{"one abort", []siteView{v("a", Commit, false), v("b", Abort, false)}, false, Abort, true, "site b voted abort"},
		{"abort before missing", []siteView{v("a", 0, false), v("b", Abort, false)}, false, Abort, true, "site b voted abort"},
		{"vanished before voting", []siteView{v("a", Commit, false), v("b", 0, true)}, false, Abort, true, "site b lost"},
		{"deadline with a vote missing", []siteView{v("a", Commit, false), v("b", 0, false), v("c", 0, false)}, true, Abort, true, "from b, c"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, reason, done := rule(tc.sites, tc.expired)
			if d != tc.want || done != tc.done || !strings.Contains(reason, tc.reason) {
				t.Fatalf("rule = %v, %q, %v; want %v, %q, %v", d, reason, done, tc.want, tc.reason, tc.done)
			}
		})
	}
}

// TestRuleCommitsOnlyUnanimously enumerates every combination of three
// sites' states: Commit comes only from three commit votes.
func TestRuleCommitsOnlyUnanimously(t *testing.T) {
	states := []siteView{{Vote: 0}, {Vote: 0, Vanished: true}, {Vote: Commit}, {Vote: Abort}, {Vote: Commit, Vanished: true}}
	for i := range states {
		for j := range states {
			for k := range states {
				for _, expired := range []bool{false, true} {
					sites := []siteView{states[i], states[j], states[k]}
					d, _, done := rule(sites, expired)
					unanimous := true
					for _, s := range sites {
						unanimous = unanimous && s.Vote == Commit
					}
					if (d == Commit) != unanimous {
						t.Fatalf("%v expired=%v: %v", sites, expired, d)
					}
					if expired && !done {
						t.Fatalf("%v: still open after the deadline", sites)
					}
				}
			}
		}
	}
}

func TestDecisionEncoding(t *testing.T) {
	for _, tc := range []struct {
		data   string
		want   Decision
		reason string
		err    error
	}{
		{"commit", Commit, "", nil},
		{"abort", Abort, "", nil},
		{"abort\nsite b voted abort", Abort, "site b voted abort", nil},
		{"commit\n", Commit, "", nil},
		{"", 0, "", ErrCorrupt},
		{"Commit", 0, "", ErrCorrupt},
		{"yes", 0, "", ErrCorrupt},
		{"abort ", 0, "", ErrCorrupt},
	} {
		d, reason, err := parseDecision([]byte(tc.data))
		if d != tc.want || reason != tc.reason || !errors.Is(err, tc.err) {
			t.Errorf("parse %q = %v, %q, %v", tc.data, d, reason, err)
		}
	}
	for _, d := range []Decision{Commit, Abort} {
		for _, reason := range []string{"", "why\nnot"} {
			got, r, err := parseDecision(encodeDecision(d, reason))
			if err != nil || got != d || r != reason {
				t.Errorf("round trip %v %q: %v %q %v", d, reason, got, r, err)
			}
		}
	}
}

func FuzzParseDecision(f *testing.F) {
	for _, s := range []string{"commit", "abort\nx", "", "\n", "commitabort"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		d, reason, err := parseDecision(data)
		if err != nil {
			return
		}
		if !d.valid() {
			t.Fatalf("%q parsed to %v", data, d)
		}
		if got := encodeDecision(d, reason); len(reason) > 0 && string(got) != string(data) {
			t.Fatalf("%q re-encodes to %q", data, got)
		}
	})
}

func TestDecisionString(t *testing.T) {
	for d, want := range map[Decision]string{Commit: "commit", Abort: "abort", 0: "none", 7: "decision(7)"} {
		if got := d.String(); got != want {
			t.Errorf("%d.String() = %q, want %q", int(d), got, want)
		}
	}
}

func TestNames(t *testing.T) {
	for _, tc := range []struct {
		name   string
		txOK   bool
		siteOK bool
	}{
		{"a", true, true},
		{"tx-0001", true, true},
		{"décision", true, true},
		{"decision", true, false},
		{"", false, false},
		{"a/b", false, false},
		{".", false, false},
		{"..", false, false},
		{"...", true, true},
		{"nul\x00", false, false},
		{"ctl\x1f", false, false},
		{"del\u007f", false, false},
		{"private\ue000", false, false},
	} {
		if err := validateTxID(tc.name); (err == nil) != tc.txOK || (err != nil && !errors.Is(err, ErrBadTxID)) {
			t.Errorf("validateTxID(%q) = %v", tc.name, err)
		}
		if err := validateSite(tc.name); (err == nil) != tc.siteOK || (err != nil && !errors.Is(err, ErrBadSite)) {
			t.Errorf("validateSite(%q) = %v", tc.name, err)
		}
	}
}

func TestNormalizeSites(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		want string
		ok   bool
	}{
		{[]string{"b", "a", "c"}, "[a b c]", true},
		{[]string{"a"}, "[a]", true},
		{nil, "", false},
		{[]string{"a", "b", "a"}, "", false},
		{[]string{"a", "decision"}, "", false},
		{[]string{"a", ""}, "", false},
	} {
		in := append([]string(nil), tc.in...)
		got, err := normalizeSites(tc.in)
		if (err == nil) != tc.ok {
			t.Errorf("normalizeSites(%q): %v", tc.in, err)
			continue
		}
		if err != nil && !errors.Is(err, ErrBadSite) {
			t.Errorf("normalizeSites(%q): %v does not wrap ErrBadSite", tc.in, err)
		}
		if tc.ok && strings.Join(got, " ") != strings.Trim(tc.want, "[]") {
			t.Errorf("normalizeSites(%q) = %q", tc.in, got)
		}
		if strings.Join(in, ",") != strings.Join(tc.in, ",") {
			t.Errorf("normalizeSites modified its argument")
		}
	}
}

func TestOptions(t *testing.T) {
	c := newCoordinatorConfig(nil)
	p := newParticipantConfig(nil)
	if c.voteTimeout != DefaultVoteTimeout || p.deadline != DefaultDeadline || c.retention != DefaultRetention {
		t.Fatalf("defaults: %+v %+v", c, p)
	}
	c = newCoordinatorConfig([]CoordinatorOption{WithVoteTimeout(time.Second), WithRetention(time.Minute), nil})
	p = newParticipantConfig([]SiteOption{nil, WithDeadline(2 * time.Second)})
	if c.voteTimeout != time.Second || p.deadline != 2*time.Second || c.retention != time.Minute {
		t.Fatalf("set: %+v %+v", c, p)
	}
	c = newCoordinatorConfig([]CoordinatorOption{WithVoteTimeout(-1), WithRetention(0)})
	p = newParticipantConfig([]SiteOption{WithDeadline(-1)})
	if c.voteTimeout != DefaultVoteTimeout || p.deadline != 0 || c.retention != DefaultRetention {
		t.Fatalf("non-positive: %+v %+v", c, p)
	}
	// An option of one kind cannot be given to the other constructor.
	co, po := reflect.TypeOf(CoordinatorOption(nil)), reflect.TypeOf(SiteOption(nil))
	for _, o := range []any{WithVoteTimeout(1), WithRetention(1)} {
		if reflect.TypeOf(o).AssignableTo(po) {
			t.Errorf("%T is a SiteOption", o)
		}
	}
	if reflect.TypeOf(WithDeadline(1)).AssignableTo(co) {
		t.Error("WithDeadline is a CoordinatorOption")
	}
}

// TestNewValidates: the constructors check their arguments once and fail
// with a sentinel, returning no value. They send nothing, so an
// unconnected Session serves as a non-nil one.
func TestNewValidates(t *testing.T) {
	s := new(recipes.Session)
	for _, tc := range []struct {
		name        string
		s           *recipes.Session
		root, site  string
		coordinator []error // NewCoordinator's; nil: success
		participant []error // NewSite's; nil: success
	}{
		{"valid", s, "/app/tx", "bank-a", nil, nil},
		{"nil session", nil, "/app/tx", "bank-a", []error{recipes.ErrNilSession}, []error{recipes.ErrNilSession}},
		{"empty root", s, "", "bank-a", []error{recipes.ErrInvalidPath}, []error{recipes.ErrInvalidPath}},
		{"root of the tree", s, "/", "bank-a", []error{recipes.ErrInvalidPath}, []error{recipes.ErrInvalidPath}},
		{"relative root", s, "app", "bank-a", []error{recipes.ErrInvalidPath}, []error{recipes.ErrInvalidPath}},
		{"reserved root", s, "/zookeeper/tx", "bank-a", []error{recipes.ErrInvalidPath}, []error{recipes.ErrInvalidPath}},
		// A valid path, but a transaction's create under it is over the
		// limit: under a root of 1+n bytes, with no data and no ACL (s has
		// none), it is n+27 bytes on the wire.
		{"root too long", s, "/" + strings.Repeat("r", recipes.DefaultMaxData-26), "bank-a",
			[]error{recipes.ErrDataTooLarge}, []error{recipes.ErrDataTooLarge}},
		{"root at the limit", s, "/" + strings.Repeat("r", recipes.DefaultMaxData-27), "bank-a", nil, nil},
		{"empty site", s, "/app/tx", "", nil, []error{ErrBadSite, recipes.ErrBadArgument}},
		{"site with slash", s, "/app/tx", "a/b", nil, []error{ErrBadSite, recipes.ErrBadArgument}},
		{"dot site", s, "/app/tx", "..", nil, []error{ErrBadSite, recipes.ErrBadArgument, recipes.ErrInvalidPath}},
		{"reserved site", s, "/app/tx", decisionNode, nil, []error{ErrBadSite, recipes.ErrBadArgument}},
		{"site with NUL", s, "/app/tx", "a\x00", nil, []error{ErrBadSite, recipes.ErrBadArgument, recipes.ErrInvalidPath}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := NewCoordinator(tc.s, tc.root, WithVoteTimeout(time.Second), nil)
			checkNew(t, "NewCoordinator", c != nil, err, tc.coordinator)
			p, err := NewSite(tc.s, tc.root, tc.site, WithDeadline(time.Second), nil)
			checkNew(t, "NewSite", p != nil, err, tc.participant)
		})
	}
}

func checkNew(t *testing.T, name string, made bool, err error, want []error) {
	t.Helper()
	if len(want) == 0 {
		if err != nil || !made {
			t.Errorf("%s: %v, made %v; want a value", name, err, made)
		}
		return
	}
	if made {
		t.Errorf("%s made a value with error %v", name, err)
	}
	for _, w := range want {
		if !errors.Is(err, w) {
			t.Errorf("%s: error %v is not %v", name, err, w)
		}
	}
}

func TestBeginAndCollectOps(t *testing.T) {
	acl := func(string) []zk.ACL { return zk.WorldACL(zk.PermAll) } // 4 + (4 + 4+5 + 4+6) = 27 bytes
	// 8 + (9 + 4+3 + 4+2 + 27 + 4) + (9 + 4+5 + 4+0 + 27 + 4) + 9: the
	// frame the server compares with its limit.
	if got, err := recipes.MultiSize(beginOps("/tx", []string{"a"}, []byte("pp"), acl)...); err != nil || got != 8+53+53+9 {
		t.Fatalf("begin multi = %d, %v; want %d", got, err, 8+53+53+9)
	}
	// Per site: deletes of /tx/a/alive, /tx/a/vote, /tx/a/done, /tx/a;
	// then /tx/decision and /tx.
	ops := collectOps("/tx", []string{"a"})
	var paths []string
	for _, op := range ops {
		paths = append(paths, op.(*zk.DeleteRequest).Path)
	}
	if want := []string{"/tx/a/alive", "/tx/a/vote", "/tx/a/done", "/tx/a", "/tx/decision", "/tx"}; !slices.Equal(paths, want) {
		t.Fatalf("collect ops %q, want %q", paths, want)
	}
	// With many sites, Collect's multi is the larger one: Begin must
	// check it too.
	sites := make([]string, 100)
	for i := range sites {
		sites[i] = fmt.Sprintf("site-%03d", i)
	}
	b, _ := recipes.MultiSize(beginOps("/r/t", sites, nil, acl)...)
	c, _ := recipes.MultiSize(collectOps("/r/t", sites)...)
	if c <= b {
		t.Fatalf("collect multi %d <= begin multi %d", c, b)
	}
}

// TestIsTx: a child of the root is a transaction only with a valid id and
// at least one site node under it (Begin creates them together).
func TestIsTx(t *testing.T) {
	for _, tc := range []struct {
		tx   string
		kids []string
		want bool
	}{
		{"t1", []string{"a"}, true},
		{"t1", []string{"a", "b", decisionNode}, true},
		{decisionNode, []string{"a"}, true}, // a transaction may be called "decision"
		{decisionNode, nil, false},          // a planted node
		{"t1", nil, false},
		{"t1", []string{decisionNode}, false},
	} {
		if got := isTx(tc.tx, tc.kids); got != tc.want {
			t.Errorf("isTx(%q, %q) = %v, want %v", tc.tx, tc.kids, got, tc.want)
		}
	}
}
