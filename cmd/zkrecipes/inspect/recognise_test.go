package inspect

import (
	"errors"
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
		grand    map[string][]string // children of the fixed-name children
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
		{name: "curator semaphore v2 in use", exists: true, children: []string{"locks", "leases"},
			grand: map[string][]string{"leases": {"_c_" + g1 + "-lease-0000000001", "lease-0000000002"}, "locks": {"_c_" + g2 + "-lock-0000000007"}},
			kind:  KindSemaphore, dialect: "curator", sub: "leases"},
		{name: "curator semaphore v2 in use, a stranger beside", exists: true, children: []string{"locks", "leases", "x"},
			grand: map[string][]string{"leases": {"_c_" + g1 + "-lease-0000000001"}},
			kind:  KindSemaphore, dialect: "curator", sub: "leases", foreign: []string{"x"}},
		{name: "idle leases beside a stranger: unknown", exists: true, children: []string{"leases", "x"},
			kind: KindUnknown, foreign: []string{"leases", "x"}},
		{name: "app directory with locks (docs/command.md layout)", exists: true, children: []string{"locks", "leader", "jobs"},
			grand: map[string][]string{"locks": {"report", "catalog"}},
			kind:  KindUnknown, foreign: []string{"jobs", "leader", "locks"}},
		{name: "app directory with locks alone", exists: true, children: []string{"locks"},
			grand: map[string][]string{"locks": {"report"}},
			kind:  KindUnknown, foreign: []string{"locks"}},
		{name: "leases whose children are not leases", exists: true, children: []string{"leases", "locks"},
			grand: map[string][]string{"leases": {"db"}},
			kind:  KindUnknown, foreign: []string{"leases", "locks"}},
		{name: "kazoo semaphore", exists: true, children: []string{"lock", k2, k1},
			kind: KindSemaphore, dialect: "kazoo", order: []string{k1, k2}},
		{name: "kazoo semaphore with a queued acquirer", exists: true, children: []string{"lock", k1},
			grand: map[string][]string{"lock": {k2 + "__lock__0000000003"}},
			kind:  KindSemaphore, dialect: "kazoo", order: []string{k1}},
		{name: "a directory with a lock child", exists: true, children: []string{"lock", "config"},
			grand: map[string][]string{"lock": {"orders"}},
			kind:  KindUnknown, foreign: []string{"config", "lock"}},
		{name: "queue with claims", exists: true, children: []string{"qn-0000000002", "taken", "qn-0000000001"},
			kind: KindQueue, dialect: "curator", order: []string{"qn-0000000001", "qn-0000000002"}, claims: true},
		{name: "priority queue", exists: true, children: []string{"qn-005-0000000001", "qn-001-0000000002"},
			kind: KindQueue, dialect: "curator", order: []string{"qn-001-0000000002", "qn-005-0000000001"}},
		{name: "kazoo queue", exists: true, children: []string{"entry-100-0000000002", "entry-001-0000000003"},
			kind: KindQueue, dialect: "kazoo", order: []string{"entry-001-0000000003", "entry-100-0000000002"}},
		{name: "kazoo locking queue", exists: true, children: []string{"entries", "taken"},
			kind: KindQueue, dialect: "kazoo", sub: "entries", claims: true},
		{name: "kazoo locking queue with items", exists: true, children: []string{"entries", "taken"},
			grand: map[string][]string{"entries": {"entry-001-0000000001"}, "taken": {"entry-001-0000000001"}},
			kind:  KindQueue, dialect: "kazoo", sub: "entries", claims: true},
		{name: "entries that are not items", exists: true, children: []string{"entries", "users"},
			grand: map[string][]string{"entries": {"2026-11-01"}},
			kind:  KindUnknown, foreign: []string{"entries", "users"}},
		{name: "queue whose taken is not claims", exists: true, children: []string{"qn-0000000001", "taken"},
			grand: map[string][]string{"taken": {"seats"}},
			kind:  KindQueue, dialect: "curator", order: []string{"qn-0000000001"}, foreign: []string{"taken"}},
		{name: "queue of claims only", exists: true, children: []string{"taken"},
			kind: KindQueue, dialect: "curator", claims: true},
		{name: "taken that holds no claims", exists: true, children: []string{"taken"},
			grand: map[string][]string{"taken": {"seat-1"}},
			kind:  KindUnknown, foreign: []string{"taken"}},
		{name: "curator double barrier", exists: true, children: []string{g2, "ready", g1},
			kind: KindDoubleBarrier, dialect: "curator", order: []string{g1, g2}, ready: true},
		{name: "kazoo double barrier", exists: true, children: []string{k1},
			kind: KindDoubleBarrier, dialect: "kazoo", order: []string{k1}},
		{name: "ready left behind", exists: true, children: []string{"ready"},
			kind: KindDoubleBarrier, dialect: "curator", ready: true},
		{name: "a ready with children is no barrier's", exists: true, children: []string{"ready"},
			grand: map[string][]string{"ready": {"x"}},
			kind:  KindUnknown, foreign: []string{"ready"}},
		{name: "unknown", exists: true, children: []string{"b", "a"}, kind: KindUnknown, foreign: []string{"a", "b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := Recognise(tc.exists, tc.children, tc.grand)
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
		{lockRep, "a", []string{"a"}, false},
		{lockRep, "zz", nil, true},
		{rw, "", []string{"r1", "r2"}, false},
		{&Report{Kind: KindLock, Dialect: "curator"}, "", nil, true},
		{&Report{Kind: KindLock, Dialect: "kazoo", Contenders: []Node{{Name: "a", Holds: true}}}, "", nil, true},
		{&Report{Kind: KindElection, Dialect: "curator", Contenders: []Node{{Name: "a", Holds: true}}}, "", nil, true},
	} {
		ns, err := Revocable(tc.rep, tc.node, false)
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
	f.Add("_c_"+g1+"-lock-0000000001", "_c_"+g2+"-lock-0000000000", "x", "")
	f.Add(k1+"__rlock__0000000001", k2+"__lock__0000000000", "lock", k1+"__lock__0000000003")
	f.Add("x-5-0000000001", "n_0000000002", "x--1--0000000001", "")
	f.Add("qn-0000000001", "taken", "entries", "qn-0000000001")
	f.Add(g1, "ready", "leases", "lease-0000000001")
	f.Add("locks", "leases", "jobs", "report")
	f.Add("_c_"+g1+"-__READ__0000000001", "_c_"+g1+"-latch-0000000001", "entry-001-0000000001", "")
	f.Fuzz(func(t *testing.T, a, b, c, grand string) {
		children := []string{a, b, c}
		slices.Sort(children)
		children = slices.Compact(children)
		// grand, when not empty, is a child of each fixed-name child.
		sub := map[string][]string{}
		if grand != "" {
			for _, name := range fixedChildren {
				sub[name] = []string{grand}
			}
		}
		l := Recognise(true, children, sub)
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

func TestParseMembership(t *testing.T) {
	const config = `server.1=zk1:2888:3888:participant
server.3=[fd00::3]:2888:3888:observer;[fd00::3]:2181
server.2=10.0.0.2:2888:3888:participant;0.0.0.0:2181
server.4=a:1:2|b:1:2;2182
server.x=bad
version=100000000`
	got := ParseMembership(config)
	want := []Member{{ID: 1, Host: "zk1"}, {ID: 2, Host: "10.0.0.2", Client: "0.0.0.0:2181"},
		{ID: 3, Host: "fd00::3", Client: "[fd00::3]:2181"}, {ID: 4, Host: "a", Client: ":2182"}}
	if !slices.Equal(got, want) {
		t.Fatalf("ParseMembership = %+v, want %+v", got, want)
	}
	for i, addr := range []string{"", "10.0.0.2:2181", "[fd00::3]:2181", "a:2182"} {
		if d := want[i].dialAddr(); d != addr {
			t.Errorf("%+v.dialAddr() = %q, want %q", want[i], d, addr)
		}
	}
	if got := ParseMembership(""); len(got) != 0 {
		t.Errorf("empty config (a standalone server): %+v", got)
	}
}

func TestParseConf(t *testing.T) {
	// As a 3.8 server of a 3-server ensemble answers (abridged), and a
	// standalone one.
	const quorum = "clientPort=2181\nserverId=2\ninitLimit=50\nmembership: \nserver.1=zk1:2888:3888:participant\nserver.2=zk2:2888:3888:participant\nversion=0"
	id, ms, ok := ParseConf(quorum)
	if !ok || id != 2 || len(ms) != 2 || ms[1].Host != "zk2" {
		t.Errorf("quorum conf: %d %+v %v", id, ms, ok)
	}
	id, ms, ok = ParseConf("clientPort=2181\nmaxSessionTimeout=60000\nserverId=0\n")
	if !ok || id != 0 || len(ms) != 0 {
		t.Errorf("standalone conf: %d %+v %v", id, ms, ok)
	}
	for _, bad := range []string{"", "conf is not executed because it is not in the whitelist.\n", "serverId=x\n"} {
		if _, _, ok := ParseConf(bad); ok {
			t.Errorf("ParseConf(%q) ok", bad)
		}
	}
}

func TestCover(t *testing.T) {
	three := ParseMembership("server.1=zk1:2888:3888:participant\nserver.2=zk2:2888:3888:participant\nserver.3=zk3:2888:3888:participant;2181")
	ans := func(addr string, id int64, sessions ...int64) Answer {
		a := Answer{Addr: addr, ID: id, Identified: true, Sessions: map[int64]bool{}}
		for _, s := range sessions {
			a.Sessions[s] = true
		}
		return a
	}
	for _, tc := range []struct {
		name      string
		config    []Member
		answers   []Answer
		known     bool
		asked     int
		members   int
		connected []int64
		missing   []int64
		why       string // a part of Why, or of Missing
	}{
		{name: "every member asked", config: three, answers: []Answer{ans("a", 1, 10), ans("b", 2, 11), ans("c", 3)},
			known: true, asked: 3, members: 3, connected: []int64{10, 11}},
		{name: "one of three named (the finding)", config: three, answers: []Answer{ans("a", 1, 10)},
			asked: 1, members: 3, connected: []int64{10}, missing: []int64{2, 3}, why: "server 2 (zk2): not in -servers, and the ensemble's configuration gives no client address"},
		{name: "two addresses of one server", config: three, answers: []Answer{ans("a", 1, 10), ans("a2", 1, 10), ans("c", 3)},
			asked: 2, members: 3, connected: []int64{10}, missing: []int64{2}, why: "1 of the 3|2 of the 3"},
		{name: "a learned address answering as another member does not cover", config: three,
			answers: []Answer{ans("a", 1), ans("b", 2), func() Answer { a := ans("zk3:2181", 1); a.Learned, a.For = true, 3; return a }()},
			asked:   2, members: 3, missing: []int64{3}, why: "answered as server 1"},
		{name: "a learned address that covers", config: three,
			answers: []Answer{ans("a", 1), ans("b", 2), func() Answer { a := ans("zk3:2181", 3, 12); a.Learned, a.For = true, 3; return a }()},
			known:   true, asked: 3, members: 3, connected: []int64{12}},
		{name: "a learned address that did not answer", config: three,
			answers: []Answer{ans("a", 1), ans("b", 2), {Addr: "zk3:2181", Learned: true, For: 3, Err: errors.New("no such host")}},
			asked:   2, members: 3, missing: []int64{3}, why: "did not answer: no such host"},
		{name: "membership from conf when the config node is empty", answers: []Answer{
			func() Answer { a := ans("a", 1, 10); a.Members = three[:2]; return a }()},
			asked: 1, members: 2, connected: []int64{10}, missing: []int64{2}},
		{name: "standalone", answers: []Answer{ans("a", 0, 10)}, known: true, asked: 1, members: 1, connected: []int64{10}},
		{name: "cons without conf: its sessions count, not its coverage", config: three[:1],
			answers: []Answer{{Addr: "a", Sessions: map[int64]bool{10: true}, Err: errors.New("conf refused")}},
			members: 1, connected: []int64{10}, missing: []int64{1}, why: "a: conf refused"},
		{name: "membership unknown", answers: []Answer{{Addr: "a", Err: errors.New("refused")}}, why: "membership is unknown"},
		{name: "a server that did not answer", config: three[:1], answers: []Answer{{Addr: "a", Err: errors.New("connection refused")}},
			members: 1, missing: []int64{1}, why: "a: connection refused"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lv, missing := Cover(tc.config, tc.answers)
			var ids []int64
			for _, m := range missing {
				ids = append(ids, m.ID)
			}
			var conn []int64
			for id := range lv.Connected {
				conn = append(conn, id)
			}
			slices.Sort(conn)
			if lv.Known != tc.known || lv.Asked != tc.asked || lv.Members != tc.members || !slices.Equal(ids, tc.missing) || !slices.Equal(conn, tc.connected) {
				t.Errorf("Cover = %+v, missing %v; want known %v asked %d members %d connected %v missing %v", lv, ids, tc.known, tc.asked, tc.members, tc.connected, tc.missing)
			}
			text := lv.Why + "\n" + strings.Join(lv.Missing, "\n")
			if tc.why != "" && !slices.ContainsFunc(strings.Split(tc.why, "|"), func(w string) bool { return strings.Contains(text, w) }) {
				t.Errorf("why %q, want %q", text, tc.why)
			}
			if tc.known != (lv.Why == "") {
				t.Errorf("known %v with why %q", lv.Known, lv.Why)
			}
		})
	}
}

// Liveness per node: connected when listed; disconnected (and stale) only
// when every member was asked; unknown otherwise, never stale.
func TestApplyLiveness(t *testing.T) {
	mk := func() *Report {
		return &Report{Path: "/l", Kind: KindElection, Contenders: []Node{
			{Name: "a", Path: "/l/a", Session: "0x10", Holds: true}, {Name: "b", Path: "/l/b", Session: "0x11"},
			{Name: "c", Path: "/l/c", Session: "0x12", Gone: true}, {Name: "p", Path: "/l/p"},
		}, Leader: &Node{Name: "a", Path: "/l/a", Session: "0x10"}}
	}
	for _, tc := range []struct {
		name  string
		lv    Liveness
		want  []string // liveness of a, b, c, p
		stale int
	}{
		{"known", Liveness{Connected: map[int64]bool{0x10: true}, Known: true}, []string{"connected", "disconnected", "", ""}, 1},
		{"partial", Liveness{Connected: map[int64]bool{0x10: true}, Why: "1 of the 3"}, []string{"connected", "unknown", "", ""}, 0},
		{"partial, leader unseen", Liveness{Connected: map[int64]bool{}, Why: "1 of the 3"}, []string{"unknown", "unknown", "", ""}, 0},
		{"off", Liveness{off: true, Connected: map[int64]bool{0x10: true}, Known: true}, []string{"unknown", "unknown", "", ""}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := mk()
			ApplyLiveness(rep, tc.lv)
			var got []string
			for _, n := range rep.Contenders {
				got = append(got, n.Liveness)
				if (n.Liveness == "connected") != (n.Live != nil && *n.Live) || (n.Liveness == "disconnected") != (n.Live != nil && !*n.Live) {
					t.Errorf("%s: liveness %q with live %v", n.Name, n.Liveness, n.Live)
				}
			}
			if !slices.Equal(got, tc.want) || len(rep.Stale) != tc.stale || rep.Leader.Liveness != tc.want[0] {
				t.Errorf("liveness %q, leader %q, stale %+v; want %q and %d stale", got, rep.Leader.Liveness, rep.Stale, tc.want, tc.stale)
			}
			if rep.Sessions.Known != (tc.lv.Known && !tc.lv.off) && !tc.lv.off {
				t.Errorf("sessions %+v", rep.Sessions)
			}
		})
	}
}

// A named contender that waits is refused without -force, saying what a
// revoke would do; short names (as show prints them) name contenders.
func TestRevocableWaiter(t *testing.T) {
	rep := &Report{Path: "/l", Kind: KindLock, Dialect: "curator", Contenders: []Node{
		{Name: "_c_" + g1 + "-lock-0000000000", Path: "/l/_c_" + g1 + "-lock-0000000000", Holds: true},
		{Name: "_c_" + g2 + "-lock-0000000001", Path: "/l/_c_" + g2 + "-lock-0000000001", Data: "go-waiter"},
	}}
	_, err := Revocable(rep, "lock-0000000001", false)
	if !errors.Is(err, ErrNotHolder) || !strings.Contains(err.Error(), `"go-waiter"`) || !strings.Contains(err.Error(), "-force") ||
		!strings.Contains(err.Error(), "__REVOKE__") {
		t.Errorf("waiter without -force: %v", err)
	}
	for _, node := range []string{"lock-0000000001", rep.Contenders[1].Name, rep.Contenders[1].Path} {
		ns, err := Revocable(rep, node, true)
		if err != nil || len(ns) != 1 || ns[0].Name != rep.Contenders[1].Name {
			t.Errorf("Revocable(%q, force) = %+v, %v", node, ns, err)
		}
	}
	ns, err := Revocable(rep, "lock-0000000000", false)
	if err != nil || len(ns) != 1 || !ns[0].Holds {
		t.Errorf("the holder by its short name: %+v, %v", ns, err)
	}
	dup := &Report{Path: "/l", Kind: KindLock, Dialect: "curator", Contenders: []Node{
		{Name: "_c_" + g1 + "-lock-0000000000", Holds: true}, {Name: "_c_" + g2 + "-lock-0000000000"}}}
	if _, err := Revocable(dup, "lock-0000000000", true); !errors.Is(err, ErrUsage) {
		t.Errorf("an ambiguous short name: %v", err)
	}
}
