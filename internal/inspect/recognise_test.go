package inspect

import (
	"slices"
	"strings"
	"testing"

	"github.com/zkrecipes/zkrecipes/recipes"
)

const (
	g1 = "0e02b2c3-58cc-4372-a567-f47ac10bd479"
	g2 = "f47ac10b-58cc-4372-a567-0e02b2c3d479"
	g3 = "11111111-2222-4333-8444-555555555555"
	k1 = "0e02b2c358cc4372a567f47ac10bd479"
	k2 = "f47ac10b58cc4372a5670e02b2c3d479"
)

func names(cs []recipes.Contender) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Name
	}
	return out
}

func TestRecognise(t *testing.T) {
	for _, tc := range []struct {
		name     string
		exists   bool
		children []string
		kind     Kind
		dialect  string
		order    []string // contenders, items or members, in order
		holds    []bool
		foreign  []string
		sub      string
		claims   bool
		ready    bool
	}{
		{name: "absent", kind: KindAbsent},
		{name: "empty", exists: true, kind: KindEmpty},
		{name: "curator lock, waiters in sequence order", exists: true,
			children: []string{"_c_" + g2 + "-lock-0000000012", "_c_" + g1 + "-lock-0000000010", "_c_" + g3 + "-lock-0000000011"},
			kind:     KindLock, dialect: "curator",
			order: []string{"_c_" + g1 + "-lock-0000000010", "_c_" + g3 + "-lock-0000000011", "_c_" + g2 + "-lock-0000000012"},
			holds: []bool{true, false, false}},
		{name: "curator lock across the counter's wrap", exists: true,
			children: []string{"_c_" + g2 + "-lock--2147483648", "_c_" + g1 + "-lock-2147483647"},
			kind:     KindLock, dialect: "curator",
			order: []string{"_c_" + g1 + "-lock-2147483647", "_c_" + g2 + "-lock--2147483648"},
			holds: []bool{true, false}},
		{name: "lock with a foreign node", exists: true,
			children: []string{"_c_" + g1 + "-lock-0000000001", "junk"},
			kind:     KindLock, dialect: "curator", order: []string{"_c_" + g1 + "-lock-0000000001"},
			holds: []bool{true}, foreign: []string{"junk"}},
		{name: "curator rwlock: readers share, writer waits", exists: true,
			children: []string{"_c_" + g3 + "-__WRIT__0000000003", "_c_" + g1 + "-__READ__0000000001", "_c_" + g2 + "-__READ__0000000002"},
			kind:     KindRWLock, dialect: "curator",
			order: []string{"_c_" + g1 + "-__READ__0000000001", "_c_" + g2 + "-__READ__0000000002", "_c_" + g3 + "-__WRIT__0000000003"},
			holds: []bool{true, true, false}},
		{name: "curator rwlock: writer holds, reader waits", exists: true,
			children: []string{"_c_" + g1 + "-__WRIT__0000000001", "_c_" + g2 + "-__READ__0000000002"},
			kind:     KindRWLock, dialect: "curator", holds: []bool{true, false},
			order: []string{"_c_" + g1 + "-__WRIT__0000000001", "_c_" + g2 + "-__READ__0000000002"}},
		{name: "leader latch", exists: true,
			children: []string{"_c_" + g2 + "-latch-0000000005", "_c_" + g1 + "-latch-0000000004"},
			kind:     KindElection, dialect: "curator", holds: []bool{true, false},
			order: []string{"_c_" + g1 + "-latch-0000000004", "_c_" + g2 + "-latch-0000000005"}},
		{name: "kazoo lock", exists: true,
			children: []string{k2 + "__lock__0000000001", k1 + "__lock__0000000000"},
			kind:     KindLock, dialect: "kazoo", holds: []bool{true, false},
			order: []string{k1 + "__lock__0000000000", k2 + "__lock__0000000001"}},
		{name: "kazoo rwlock", exists: true,
			children: []string{k2 + "__lock__0000000002", k1 + "__rlock__0000000001"},
			kind:     KindRWLock, dialect: "kazoo", holds: []bool{true, false},
			order: []string{k1 + "__rlock__0000000001", k2 + "__lock__0000000002"}},
		{name: "zookeeper WriteLock", exists: true,
			children: []string{"x-72057594037927937-0000000004", "x--5-0000000003", "x-1-junk"},
			kind:     KindLock, dialect: "zookeeper", holds: []bool{true, false},
			order: []string{"x--5-0000000003", "x-72057594037927937-0000000004"}, foreign: []string{"x-1-junk"}},
		{name: "zookeeper LeaderElectionSupport", exists: true,
			children: []string{"n_0000000002", "n_0000000001"},
			kind:     KindElection, dialect: "zookeeper", holds: []bool{true, false},
			order: []string{"n_0000000001", "n_0000000002"}},
		{name: "curator semaphore v2", exists: true, children: []string{"locks", "leases"},
			kind: KindSemaphore, dialect: "curator", sub: "leases"},
		{name: "kazoo semaphore", exists: true, children: []string{"lock", k2, k1},
			kind: KindSemaphore, dialect: "kazoo", order: []string{k1, k2}},
		{name: "queue with claims", exists: true, children: []string{"qn-0000000002", "taken", "qn-0000000001"},
			kind: KindQueue, dialect: "curator", order: []string{"qn-0000000001", "qn-0000000002"}, claims: true},
		{name: "priority queue", exists: true, children: []string{"qn-005-0000000001", "qn-001-0000000002"},
			kind: KindQueue, dialect: "curator", order: []string{"qn-001-0000000002", "qn-005-0000000001"}},
		{name: "kazoo queue", exists: true, children: []string{"entry-100-0000000002", "entry-001-0000000003"},
			kind: KindQueue, dialect: "kazoo", order: []string{"entry-001-0000000003", "entry-100-0000000002"}},
		{name: "kazoo locking queue", exists: true, children: []string{"entries", "taken"},
			kind: KindQueue, dialect: "kazoo", sub: "entries", claims: true},
		{name: "queue of claims only", exists: true, children: []string{"taken"},
			kind: KindQueue, dialect: "curator", claims: true},
		{name: "curator double barrier", exists: true, children: []string{g2, "ready", g1},
			kind: KindDoubleBarrier, dialect: "curator", order: []string{g1, g2}, ready: true},
		{name: "kazoo double barrier", exists: true, children: []string{k1},
			kind: KindDoubleBarrier, dialect: "kazoo", order: []string{k1}},
		{name: "ready left behind", exists: true, children: []string{"ready"},
			kind: KindDoubleBarrier, dialect: "curator", ready: true},
		{name: "unknown", exists: true, children: []string{"b", "a"}, kind: KindUnknown, foreign: []string{"a", "b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := Recognise(tc.exists, tc.children)
			if l.Kind != tc.kind {
				t.Fatalf("kind %s, want %s", l.Kind, tc.kind)
			}
			dialect := l.Dialect.String()
			if l.ZooKeeper {
				dialect = "zookeeper"
			}
			if tc.dialect != "" && dialect != tc.dialect {
				t.Errorf("dialect %s, want %s", l.Dialect, tc.dialect)
			}
			var order []string
			switch {
			case len(l.Contenders) > 0:
				order = names(l.Contenders)
			case len(l.Items) > 0:
				for _, it := range l.Items {
					order = append(order, it.Name)
				}
			default:
				order = l.Members
			}
			if !slices.Equal(order, tc.order) {
				t.Errorf("order %v, want %v", order, tc.order)
			}
			if tc.holds != nil {
				if got := Holds(l.Kind, l.Contenders); !slices.Equal(got, tc.holds) {
					t.Errorf("holds %v, want %v", got, tc.holds)
				}
			}
			if !slices.Equal(l.Foreign, tc.foreign) {
				t.Errorf("foreign %v, want %v", l.Foreign, tc.foreign)
			}
			if l.Sub != tc.sub || l.Claims != tc.claims || l.Ready != tc.ready {
				t.Errorf("sub %q claims %v ready %v, want %q %v %v", l.Sub, l.Claims, l.Ready, tc.sub, tc.claims, tc.ready)
			}
		})
	}
}

func TestIsTransaction(t *testing.T) {
	for _, tc := range []struct {
		children []string
		grand    map[string][]string
		want     bool
	}{
		{[]string{"decision"}, nil, true},
		{[]string{"a", "b"}, map[string][]string{"a": {"vote"}}, true},
		{[]string{"a"}, map[string][]string{"a": {"alive"}}, true},
		{[]string{"a"}, map[string][]string{"a": {"done", "vote"}}, true},
		{[]string{"a"}, map[string][]string{"a": {"other"}}, false},
		{[]string{"a"}, nil, false},
		{nil, nil, false},
	} {
		if got := IsTransaction(tc.children, tc.grand); got != tc.want {
			t.Errorf("IsTransaction(%v, %v) = %v, want %v", tc.children, tc.grand, got, tc.want)
		}
	}
}

func TestParseCons(t *testing.T) {
	const cons = ` /127.0.0.1:52062[1](queued=0,recved=5,sent=5,sid=0x1000a2b3c4d0001,lop=PING,est=1700000000000,to=4000,lcxid=0x2,lzxid=0x10,lresp=1,llat=0,minlat=0,avglat=0.2,maxlat=1)
 /127.0.0.1:52070[0](queued=0,recved=1,sent=0)

 /10.0.0.2:40000[1](queued=0,recved=1,sent=1,sid=0xffffffffffffffff)
`
	ids, ok := ParseCons(cons)
	if !ok {
		t.Fatal("not parsed")
	}
	want := map[int64]bool{0x1000a2b3c4d0001: true, -1: true}
	if len(ids) != len(want) {
		t.Fatalf("ids %v, want %v", ids, want)
	}
	for id := range want {
		if !ids[id] {
			t.Errorf("missing %x in %v", id, ids)
		}
	}
	for _, bad := range []string{"", "cons is not executed because it is not in the whitelist.\n", " /1.2.3.4:1[1](sid=0xzz)"} {
		if _, ok := ParseCons(bad); ok {
			t.Errorf("ParseCons(%q) ok", bad)
		}
	}
}

func TestZooKeeperNames(t *testing.T) {
	for _, tc := range []struct {
		name string
		seq  int32
		ok   bool
	}{
		{"x-123-0000000007", 7, true},
		{"x--123-0000000007", 7, true},
		{"x-123--000000007", -7, true},
		{"x-123--2147483648", -2147483648, true},
		{"x--0000000007", 0, false},
		{"x-12a-0000000007", 0, false},
		{"x-123-000000007", 0, false},
		{"y-123-0000000007", 0, false},
	} {
		c, ok := zkWriteLock(tc.name)
		if ok != tc.ok || (ok && c.Seq != tc.seq) {
			t.Errorf("zkWriteLock(%q) = %+v, %v; want seq %d, %v", tc.name, c, ok, tc.seq, tc.ok)
		}
	}
	if c, ok := zkElection("n_0000000042"); !ok || c.Seq != 42 {
		t.Errorf("zkElection = %+v, %v", c, ok)
	}
	if _, ok := zkElection("n_42"); ok {
		t.Error("zkElection(n_42) ok")
	}
}

func TestPrintable(t *testing.T) {
	for in, want := range map[string]string{
		"":                 "",
		"worker-1":         "worker-1",
		"a\tb\nc":          "a\tb\nc",
		"\x00\x00\x00\x05": "0x00000005",
		"\xff":             "0xff",
		"caf\u00e9":        "caf\u00e9",
	} {
		if got := Printable([]byte(in)); got != want {
			t.Errorf("Printable(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRevocable(t *testing.T) {
	lockRep := &Report{Path: "/l", Kind: KindLock, Dialect: "curator", Contenders: []Node{
		{Name: "a", Holds: true}, {Name: "b"}, {Name: "c"},
	}}
	rw := &Report{Path: "/rw", Kind: KindRWLock, Dialect: "curator", Contenders: []Node{
		{Name: "r1", Holds: true}, {Name: "r2", Holds: true}, {Name: "w"},
	}}
	for _, tc := range []struct {
		rep  *Report
		node string
		want []string
		err  bool
	}{
		{lockRep, "", []string{"a"}, false},
		{lockRep, "c", []string{"c"}, false},
		{lockRep, "zz", nil, true},
		{rw, "", []string{"r1", "r2"}, false},
		{&Report{Kind: KindLock, Dialect: "curator"}, "", nil, true},
		{&Report{Kind: KindLock, Dialect: "kazoo", Contenders: []Node{{Name: "a", Holds: true}}}, "", nil, true},
		{&Report{Kind: KindElection, Dialect: "curator", Contenders: []Node{{Name: "a", Holds: true}}}, "", nil, true},
	} {
		ns, err := Revocable(tc.rep, tc.node)
		if tc.err {
			if err == nil || !strings.Contains(err.Error(), "nothing to revoke") {
				t.Errorf("Revocable(%s, %q) = %v, %v; want ErrNotHeld", tc.rep.Kind, tc.node, ns, err)
			}
			continue
		}
		var got []string
		for _, n := range ns {
			got = append(got, n.Name)
		}
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("Revocable(%s, %q) = %v, %v; want %v", tc.rep.Kind, tc.node, got, err, tc.want)
		}
	}
}

// FuzzRecognise checks Recognise's invariants on any names: it never
// panics; every child is accounted for exactly once (by the layout or as
// foreign); contenders are in the recipes' order and Holds marks a prefix
// for a lock or election.
func FuzzRecognise(f *testing.F) {
	f.Add("_c_"+g1+"-lock-0000000001", "_c_"+g2+"-lock-0000000000", "x")
	f.Add(k1+"__rlock__0000000001", k2+"__lock__0000000000", "lock")
	f.Add("x-5-0000000001", "n_0000000002", "x--1--0000000001")
	f.Add("qn-0000000001", "taken", "entries")
	f.Add(g1, "ready", "leases")
	f.Add("_c_"+g1+"-__READ__0000000001", "_c_"+g1+"-latch-0000000001", "entry-001-0000000001")
	f.Fuzz(func(t *testing.T, a, b, c string) {
		children := []string{a, b, c}
		slices.Sort(children)
		children = slices.Compact(children)
		l := Recognise(true, children)
		fixed := map[Kind][]string{
			KindSemaphore:     {"leases", "locks", "lock"},
			KindQueue:         {"taken", "entries"},
			KindDoubleBarrier: {"ready"},
		}[l.Kind]
		var seen []string
		seen = append(seen, names(l.Contenders)...)
		for _, it := range l.Items {
			seen = append(seen, it.Name)
		}
		seen = append(seen, l.Members...)
		seen = append(seen, l.Foreign...)
		for _, name := range fixed {
			if slices.Contains(children, name) && !slices.Contains(seen, name) {
				seen = append(seen, name)
			}
		}
		slices.Sort(seen)
		if !slices.Equal(seen, children) {
			t.Fatalf("%s: children %q accounted as %q", l.Kind, children, seen)
		}
		cs := slices.Clone(l.Contenders)
		if len(cs) > 0 {
			recipes.SortBySeq(cs, cs[0].Seq)
		}
		if !slices.Equal(names(cs), names(l.Contenders)) {
			t.Fatalf("contenders out of order: %v", names(l.Contenders))
		}
		if l.Kind == KindLock || l.Kind == KindElection {
			h := Holds(l.Kind, l.Contenders)
			if len(h) > 0 && (!h[0] || slices.Contains(h[1:], true)) {
				t.Fatalf("holds %v: want the head only", h)
			}
		}
	})
}

// FuzzParseCons: any server answer parses without panicking, and every id
// found was written in it as "sid=0x<hex>".
func FuzzParseCons(f *testing.F) {
	f.Add(" /127.0.0.1:1[1](queued=0,sid=0x10,lop=PING)\n")
	f.Add("cons is not executed because it is not in the whitelist.\n")
	f.Add("[0]sid=0xffffffffffffffff)")
	f.Fuzz(func(t *testing.T, text string) {
		ids, ok := ParseCons(text)
		if !ok {
			return
		}
		lower := strings.ToLower(text)
	ids:
		for id := range ids {
			hex := strings.TrimPrefix(SessionHex(id), "0x")
			for _, part := range strings.Split(lower, "sid=0x")[1:] {
				if strings.HasPrefix(strings.TrimLeft(part, "0"), hex) || (id == 0 && strings.HasPrefix(part, "0")) {
					continue ids
				}
			}
			t.Fatalf("id %s not in %q", SessionHex(id), text)
		}
	})
}
