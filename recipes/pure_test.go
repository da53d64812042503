package recipes

import (
	"errors"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/zkrecipes/zkrecipes/internal/seq"
	"github.com/zkrecipes/zkrecipes/internal/zkpath"
)

func TestValidatePath(t *testing.T) {
	tests := []struct {
		path  string
		ok    bool
		write bool // also valid for writes
		rule  string
	}{
		{"/", true, false, ""},
		{"/a", true, true, ""},
		{"/a/b-c_d.e", true, true, ""},
		{"/a/.b", true, true, ""},
		{"/a/b..", true, true, ""},
		{"", false, false, "empty"},
		{"a/b", false, false, "not absolute"},
		{"/a/", false, false, "trailing slash"},
		{"/a//b", false, false, "empty segment"},
		{"/a/./b", false, false, "relative segment ."},
		{"/a/..", false, false, "relative segment .."},
		{"/..", false, false, "relative segment .."},
		{"/a\x00b", false, false, "NUL"},
		{"/a\x01", false, false, "forbidden character"},
		{"/a\u0085", false, false, "forbidden character"},
		{"/a\ufff5", false, false, "forbidden character"},
		{"/a\xff", false, false, "UTF-8"},
		{"/zookeeper", true, false, "reserved"},
		{"/zookeeper/quota", true, false, "reserved"},
		{"/zookeeperx", true, true, ""},
	}
	for _, tt := range tests {
		err := ValidatePath(tt.path)
		if (err == nil) != tt.ok {
			t.Errorf("ValidatePath(%q) = %v, want ok=%v", tt.path, err, tt.ok)
			continue
		}
		if err != nil {
			if !errors.Is(err, ErrInvalidPath) || !strings.Contains(err.Error(), tt.rule) || !strings.Contains(err.Error(), "recipes: ") {
				t.Errorf("ValidatePath(%q) = %v, want ErrInvalidPath mentioning %q", tt.path, err, tt.rule)
			}
			continue
		}
		werr := ValidateWritePath(tt.path)
		if (werr == nil) != tt.write {
			t.Errorf("ValidateWritePath(%q) = %v, want ok=%v", tt.path, werr, tt.write)
		}
		if werr != nil && (!errors.Is(werr, ErrInvalidPath) || !strings.Contains(werr.Error(), tt.path)) {
			t.Errorf("ValidateWritePath(%q) = %v, want ErrInvalidPath naming the path", tt.path, werr)
		}
	}
	if err := ValidateParentPath("/"); err != nil {
		t.Errorf("ValidateParentPath(/) = %v", err)
	}
}

func FuzzValidatePath(f *testing.F) {
	for _, s := range []string{"/", "/a/b", "/a/../b", "//", "/a\x00", "/zookeeper/x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		err := ValidatePath(p)
		if err != nil && !errors.Is(err, ErrInvalidPath) {
			t.Fatalf("unexpected error type %v", err)
		}
		if err == nil {
			if p != "/" && (strings.HasSuffix(p, "/") || strings.Contains(p, "//") || !strings.HasPrefix(p, "/")) {
				t.Fatalf("accepted %q", p)
			}
			for _, seg := range strings.Split(p, "/")[1:] {
				if seg == "." || seg == ".." {
					t.Fatalf("accepted %q", p)
				}
			}
			parent, name := zkpath.Split(p)
			if p != "/" && zkpath.Join(parent, name) != p {
				t.Fatalf("zkpath.Split/Join(%q) = %q, %q", p, parent, name)
			}
		}
	})
}

func TestCheckData(t *testing.T) {
	if err := checkData(make([]byte, DefaultMaxData), 0); err != nil {
		t.Fatal(err)
	}
	err := checkData(make([]byte, DefaultMaxData+1), 0)
	if !errors.Is(err, ErrDataTooLarge) || !strings.HasPrefix(err.Error(), "recipes: ") {
		t.Fatalf("CheckData = %v", err)
	}
	if err := checkData(make([]byte, 11), 10); !errors.Is(err, ErrDataTooLarge) {
		t.Fatalf("CheckData with limit = %v", err)
	}
}

func FuzzSerialOrder(f *testing.F) {
	f.Add(int32(math.MaxInt32-3), uint16(10), uint16(3))
	f.Add(int32(0), uint16(5), uint16(0))
	f.Add(int32(-7), uint16(300), uint16(299))
	f.Fuzz(func(t *testing.T, start int32, count uint16, refIdx uint16) {
		n := int(count%64) + 1
		// n consecutive sequence numbers starting anywhere, wrapping past
		// MaxInt32 as ZooKeeper's counter does.
		want := make([]Contender, n)
		for i := range want {
			sn := int32(uint32(start) + uint32(i))
			want[i] = Contender{Name: "_c_x-lock-" + seq.Format(sn), Seq: sn}
		}
		got := slices.Clone(want)
		slices.Reverse(got)
		SortBySeq(got, want[int(refIdx)%n].Seq)
		for i := range want {
			if got[i].Seq != want[i].Seq {
				t.Fatalf("order wrong at %d: %v", i, got)
			}
			if i > 0 && !seq.Less(want[i-1].Seq, want[i].Seq) {
				t.Fatalf("seq.Less(%d, %d) false", want[i-1].Seq, want[i].Seq)
			}
		}
	})
}

func TestSeqFormatParse(t *testing.T) {
	tests := []struct {
		s  string
		n  int32
		ok bool
	}{
		{"0000000000", 0, true},
		{"0000000042", 42, true},
		{"2147483647", math.MaxInt32, true},
		{"-000000005", -5, true},
		{"-123456789", -123456789, true},
		{"-1000000000", -1000000000, true},
		{"-2147483648", math.MinInt32, true},
		{"-0000000005", 0, false},
		{"-000000000", 0, false},
		{"2147483648", 0, false},
		{"42", 0, false},
		{"00000000x1", 0, false},
		{"+000000001", 0, false},
		{"0000-00001", 0, false},
		{"", 0, false},
	}
	for _, tt := range tests {
		n, ok := ParseSeq(tt.s)
		if ok != tt.ok || n != tt.n {
			t.Errorf("ParseSeq(%q) = %d, %v; want %d, %v", tt.s, n, ok, tt.n, tt.ok)
		}
		if tt.ok && seq.Format(tt.n) != tt.s {
			t.Errorf("seq.Format(%d) = %q, want %q", tt.n, seq.Format(tt.n), tt.s)
		}
	}
}

func FuzzSeqRoundTrip(f *testing.F) {
	f.Add(int32(0))
	f.Add(int32(math.MinInt32))
	f.Add(int32(-42))
	f.Fuzz(func(t *testing.T, n int32) {
		s := seq.Format(n)
		got, ok := ParseSeq(s)
		if !ok || got != n {
			t.Fatalf("round trip %d -> %q -> %d, %v", n, s, got, ok)
		}
	})
}

const guid = "6f1c2a3e-1b2c-4d5e-8f90-a1b2c3d4e5f6"

func TestDialectParse(t *testing.T) {
	hex := strings.ReplaceAll(guid, "-", "")
	tests := []struct {
		name    string
		d       Dialect
		roles   []Role
		want    Contender
		wantOK  bool
		comment string
	}{
		{name: "_c_" + guid + "-lock-0000000007", d: Curator, roles: []Role{RoleLock},
			want: Contender{GUID: guid, Role: RoleLock, Seq: 7}, wantOK: true},
		{name: "_c_" + guid + "-lock--000000005", d: Curator, roles: []Role{RoleLock},
			want: Contender{GUID: guid, Role: RoleLock, Seq: -5}, wantOK: true, comment: "after the wrap"},
		{name: "_c_" + guid + "-lock--2147483648", d: Curator, roles: []Role{RoleLock},
			want: Contender{GUID: guid, Role: RoleLock, Seq: math.MinInt32}, wantOK: true},
		{name: "lock-0000000003", d: Curator, roles: []Role{RoleLock},
			want: Contender{Role: RoleLock, Seq: 3}, wantOK: true, comment: "unprotected Curator name"},
		{name: "_c_" + guid + "-__READ__0000000001", d: Curator, roles: []Role{RoleRead, RoleWrite},
			want: Contender{GUID: guid, Role: RoleRead, Seq: 1}, wantOK: true},
		{name: "_c_" + guid + "-__WRIT__0000000002", d: Curator, roles: []Role{RoleRead, RoleWrite},
			want: Contender{GUID: guid, Role: RoleWrite, Seq: 2}, wantOK: true},
		{name: "_c_" + guid + "-__READ__0000000001", d: Curator, roles: []Role{RoleLock}, comment: "foreign role"},
		{name: "_c_" + guid + "-lock-000000007", d: Curator, roles: []Role{RoleLock}, comment: "nine digits"},
		{name: "leases", d: Curator, roles: []Role{RoleLock}},
		{name: "_c_" + guid + "-lease-0000000009", d: Curator, roles: []Role{RoleLease},
			want: Contender{GUID: guid, Role: RoleLease, Seq: 9}, wantOK: true},
		{name: hex + "__lock__0000000004", d: Kazoo, roles: []Role{RoleLock, RoleRead},
			want: Contender{GUID: hex, Role: RoleLock, Seq: 4}, wantOK: true},
		{name: hex + "__rlock__0000000005", d: Kazoo, roles: []Role{RoleLock, RoleRead},
			want: Contender{GUID: hex, Role: RoleRead, Seq: 5}, wantOK: true},
		{name: hex + "__lock__0000000004", d: Kazoo, roles: []Role{RoleWrite, RoleRead},
			want: Contender{GUID: hex, Role: RoleWrite, Seq: 4}, wantOK: true, comment: "shared label reports the role asked"},
		{name: "_c_" + guid + "-lock-0000000007", d: Kazoo, roles: []Role{RoleLock}, comment: "Curator node is foreign to kazoo"},
	}
	for _, tt := range tests {
		got, ok := tt.d.Parse(tt.name, tt.roles...)
		tt.want.Name = tt.name
		if ok != tt.wantOK || (ok && got != tt.want) {
			t.Errorf("%s.Parse(%q) = %+v, %v; want %+v, %v (%s)", tt.d, tt.name, got, ok, tt.want, tt.wantOK, tt.comment)
		}
	}
}

func TestDialectNames(t *testing.T) {
	g := Curator.NewGUID()
	if len(g) != 36 {
		t.Fatalf("curator guid %q", g)
	}
	p, err := Curator.NodePrefix(g, RoleLock)
	if err != nil || p != "_c_"+g+"-lock-" {
		t.Fatalf("curator prefix %q %v", p, err)
	}
	c, ok := Curator.Parse(p+"0000000001", RoleLock)
	if !ok || c.GUID != g || !Curator.HasGUID(c.Name, g) {
		t.Fatalf("curator round trip %+v %v", c, ok)
	}
	k := Kazoo.NewGUID()
	if len(k) != 32 {
		t.Fatalf("kazoo guid %q", k)
	}
	p, err = Kazoo.NodePrefix(k, RoleLock)
	if err != nil || p != k+"__lock__" {
		t.Fatalf("kazoo prefix %q %v", p, err)
	}
	if _, err := Kazoo.NodePrefix(k, RoleLease); !errors.Is(err, ErrBadArgument) {
		t.Fatalf("kazoo lease prefix err = %v", err)
	}
	if (Dialect{}).String() != "curator" || !(Dialect{}).Supports(RoleLease) {
		t.Fatal("zero Dialect is not Curator")
	}
}

// TestDialectVariants: the names each dialect gives elections and queue
// items, and what the variants keep of their family.
func TestDialectVariants(t *testing.T) {
	for _, tc := range []struct {
		name     string
		d        Dialect
		family   string
		election Role
		label    string // the election role's label
		prefix   string
		ranked   bool
		text     bool
	}{
		{"zero", Dialect{}, "curator", RoleLatch, "latch-", "qn-", false, false},
		{"curator", Curator, "curator", RoleLatch, "latch-", "qn-", false, false},
		{"selector", CuratorSelector, "curator", RoleLock, "lock-", "qn-", false, false},
		{"selector text", CuratorSelector.TextOrder(), "curator", RoleLock, "lock-", "qn-", false, true},
		{"kazoo", Kazoo, "kazoo", RoleLatch, "__lock__", "entry-", true, false},
		{"kazoo text", Kazoo.TextOrder(), "kazoo", RoleLatch, "__lock__", "entry-", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.d.String(); got != tc.family {
				t.Errorf("String() = %q, want %q", got, tc.family)
			}
			if got := tc.d.ElectionRole(); got != tc.election {
				t.Errorf("ElectionRole() = %v, want %v", got, tc.election)
			}
			guid := tc.d.NewGUID()
			p, err := tc.d.NodePrefix(guid, tc.d.ElectionRole())
			if err != nil || !strings.HasSuffix(p, tc.label) {
				t.Errorf("NodePrefix(election) = %q, %v; want a %q node", p, err, tc.label)
			}
			prefix, ranked := tc.d.QueueItem()
			if prefix != tc.prefix || ranked != tc.ranked {
				t.Errorf("QueueItem() = %q, %v; want %q, %v", prefix, ranked, tc.prefix, tc.ranked)
			}
			if tc.d.OrdersAsText() != tc.text {
				t.Errorf("OrdersAsText() = %v", tc.d.OrdersAsText())
			}
		})
	}
	// The selector variant names locks, read/write locks and leases as
	// Curator does.
	for _, r := range []Role{RoleLock, RoleRead, RoleWrite, RoleLease} {
		a, _ := Curator.NodePrefix(guid, r)
		b, _ := CuratorSelector.NodePrefix(guid, r)
		if a != b || !slices.Equal(Curator.Blocking(r), CuratorSelector.Blocking(r)) {
			t.Errorf("%v: selector %q, curator %q", r, b, a)
		}
	}
}

func FuzzDialectParse(f *testing.F) {
	f.Add("_c_" + guid + "-lock-0000000007")
	f.Add("lock--2147483648")
	f.Add("abc__rlock__0000000001")
	f.Fuzz(func(t *testing.T, name string) {
		for _, d := range []Dialect{Curator, Kazoo} {
			c, ok := d.Parse(name)
			if !ok {
				continue
			}
			if c.Name != name || !strings.HasSuffix(name, seq.Format(c.Seq)) {
				t.Fatalf("%s.Parse(%q) = %+v", d, name, c)
			}
			if c.GUID != "" && !d.HasGUID(name, c.GUID) {
				t.Fatalf("%s.Parse(%q) GUID %q not found by HasGUID", d, name, c.GUID)
			}
		}
	})
}

func contenders(roles ...Role) []Contender {
	cs := make([]Contender, len(roles))
	for i, r := range roles {
		cs[i] = Contender{Role: r, Seq: int32(i)}
	}
	return cs
}

func TestPredicates(t *testing.T) {
	L, R, W := RoleLock, RoleRead, RoleWrite
	tests := []struct {
		name  string
		p     Predicate
		cs    []Contender
		self  int
		held  bool
		watch int
	}{
		{"exclusive first", Exclusive(), contenders(L, L), 0, true, -1},
		{"exclusive second", Exclusive(), contenders(L, L), 1, false, 0},
		{"exclusive fifth", Exclusive(), contenders(L, L, L, L, L), 4, false, 3},
		{"semaphore(3) index 2", FirstN(3), contenders(L, L, L, L), 2, true, -1},
		{"semaphore(3) index 3", FirstN(3), contenders(L, L, L, L), 3, false, 0},
		{"semaphore(3) index 5", FirstN(3), contenders(L, L, L, L, L, L), 5, false, 2},
		{"semaphore(0) is 1", FirstN(0), contenders(L, L), 1, false, 0},
		{"read after reads", Read(), contenders(R, R, R), 2, true, -1},
		{"read after writer", Read(), contenders(W, R, R), 2, false, 0},
		{"read nearest writer", Read(), contenders(W, R, W, R, R), 4, false, 2},
		{"read first", Read(), contenders(R), 0, true, -1},
		{"read ignores writers after", Read(), contenders(R, R, W), 1, true, -1},
		{"kazoo lock blocks read", Read(), contenders(L, R), 1, false, 0},
	}
	for _, tt := range tests {
		held, watch := tt.p(tt.cs, tt.self)
		if held != tt.held || (!held && watch != tt.watch) {
			t.Errorf("%s: got held=%v watch=%d, want held=%v watch=%d", tt.name, held, watch, tt.held, tt.watch)
		}
	}
}

// FuzzPredicateMonotone checks the property the core relies on: removing a
// contender ahead of self never turns "held" into "not held", and the
// watched node is always ahead of self.
func FuzzPredicateMonotone(f *testing.F) {
	f.Add(uint64(0x1234), uint8(5), uint8(3), uint8(1))
	f.Fuzz(func(t *testing.T, bits uint64, count, selfB, drop uint8) {
		n := int(count%16) + 1
		roles := make([]Role, n)
		for i := range roles {
			if bits>>i&1 == 1 {
				roles[i] = RoleWrite
			} else {
				roles[i] = RoleRead
			}
		}
		cs := contenders(roles...)
		self := int(selfB) % n
		for _, p := range []Predicate{Exclusive(), FirstN(int(bits%4) + 1), Read()} {
			held, watch := p(cs, self)
			if !held && (watch < 0 || watch >= self) {
				t.Fatalf("watch %d not ahead of self %d", watch, self)
			}
			if held && self > 0 {
				d := int(drop) % self
				fewer := append(slices.Clone(cs[:d]), cs[d+1:]...)
				if h2, _ := p(fewer, self-1); !h2 {
					t.Fatalf("not monotone: %v self %d held, without %d not", roles, self, d)
				}
			}
		}
	})
}

func TestProcessID(t *testing.T) {
	id := ProcessID()
	host, pid, ok := strings.Cut(id, ":")
	if !ok || host == "" || pid != strconv.Itoa(os.Getpid()) {
		t.Fatalf("ProcessID() = %q, want host:%d", id, os.Getpid())
	}
}
