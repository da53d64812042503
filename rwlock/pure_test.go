package rwlock

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/zkrecipes/zkrecipes/internal/lockopt"
	zkseq "github.com/zkrecipes/zkrecipes/internal/seq"
	"github.com/zkrecipes/zkrecipes/recipes"
)

func TestWriterBetween(t *testing.T) {
	w := func(seq int32) recipes.Contender { return recipes.Contender{Role: recipes.RoleWrite, Seq: seq} }
	k := func(seq int32) recipes.Contender { return recipes.Contender{Role: recipes.RoleLock, Seq: seq} } // kazoo Lock
	r := func(seq int32) recipes.Contender { return recipes.Contender{Role: recipes.RoleRead, Seq: seq} }
	const maxSeq = math.MaxInt32
	tests := []struct {
		name     string
		cs       []recipes.Contender
		from, to int32
		want     bool
	}{
		{"empty", nil, 1, 5, false},
		{"only us", []recipes.Contender{w(1), r(5)}, 1, 5, false},
		{"readers between", []recipes.Contender{w(1), r(2), r(3), r(5)}, 1, 5, false},
		{"writer between", []recipes.Contender{w(1), r(2), w(3), r(5)}, 1, 5, true},
		{"kazoo lock between", []recipes.Contender{w(1), k(3), r(5)}, 1, 5, true},
		{"writer after us", []recipes.Contender{w(1), r(5), w(6)}, 1, 5, false},
		{"writer right after write node", []recipes.Contender{w(1), w(2), r(3)}, 1, 3, true},
		{"writer across the wrap", []recipes.Contender{w(maxSeq - 1), w(maxSeq), r(math.MinInt32 + 1)}, maxSeq - 1, math.MinInt32 + 1, true},
		{"writer past the wrap", []recipes.Contender{w(maxSeq), w(math.MinInt32), r(math.MinInt32 + 1)}, maxSeq, math.MinInt32 + 1, true},
		{"newcomer after the wrap", []recipes.Contender{w(maxSeq), r(math.MinInt32), w(math.MinInt32 + 1)}, maxSeq, math.MinInt32, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := writerBetween(tt.cs, tt.from, tt.to); got != tt.want {
				t.Errorf("writerBetween(%v, %d, %d) = %v, want %v", tt.cs, tt.from, tt.to, got, tt.want)
			}
		})
	}
}

// nodeName builds a node name in dialect d: "R3" is a reader with sequence
// 3, "W3" a writer, "L3" a kazoo Lock, "F3" a foreign node.
func nodeName(d recipes.Dialect, code string) string {
	var seq int32
	fmt.Sscanf(code[1:], "%d", &seq)
	role := map[byte]recipes.Role{'R': recipes.RoleRead, 'W': recipes.RoleWrite, 'L': recipes.RoleLock}[code[0]]
	if role == 0 {
		return "foreign-" + zkseq.Format(seq)
	}
	guid := fmt.Sprintf("%08x-0000-4000-8000-%012x", seq, seq)
	if d.String() == "kazoo" {
		guid = strings.ReplaceAll(guid, "-", "")
	}
	prefix, err := d.NodePrefix(guid, role)
	if err != nil {
		panic(err)
	}
	return prefix + zkseq.Format(seq)
}

// plan evaluates, for every node of the queue (given in any order), what
// the contender core would decide with this package's specs: "held" or the
// code of the node watched. It is the core's evaluation step, run purely.
func plan(d recipes.Dialect, queue []string) map[string]string {
	c := lockopt.Config{Dialect: d}
	out := make(map[string]string)
	for _, self := range queue {
		role := map[byte]recipes.Role{'R': recipes.RoleRead, 'W': recipes.RoleWrite}[self[0]]
		if role == 0 {
			continue
		}
		spec := spec(c, "/p", role, recipes.StepDownOnSuspend)
		var cs []recipes.Contender
		code := make(map[string]string)
		for _, q := range queue {
			name := nodeName(d, q)
			code[name] = q
			if ct, ok := d.Parse(name, d.Blocking(role)...); ok {
				cs = append(cs, ct)
			}
		}
		selfName := nodeName(d, self)
		sc, _ := d.Parse(selfName, role)
		recipes.SortBySeq(cs, sc.Seq)
		idx := -1
		for i, ct := range cs {
			if ct.Name == selfName {
				idx = i
			}
		}
		held, watch := spec.Predicate(cs, idx)
		if held {
			out[self] = "held"
		} else {
			out[self] = code[cs[watch].Name]
		}
	}
	return out
}

func TestQueuePlan(t *testing.T) {
	tests := []struct {
		name    string
		dialect recipes.Dialect
		queue   []string
		want    map[string]string
	}{
		{"readers share", recipes.Curator, []string{"R1", "R2", "R3"},
			map[string]string{"R1": "held", "R2": "held", "R3": "held"}},
		{"writer first", recipes.Curator, []string{"W1", "R2", "R3", "W4", "R5"},
			// readers watch the nearest earlier writer, the writer its predecessor
			map[string]string{"W1": "held", "R2": "W1", "R3": "W1", "W4": "R3", "R5": "W4"}},
		{"fair: writer queued before later readers", recipes.Curator, []string{"R1", "W2", "R3"},
			map[string]string{"R1": "held", "W2": "R1", "R3": "W2"}},
		{"reader watches the nearest writer, not the first", recipes.Curator, []string{"W1", "W2", "R3"},
			map[string]string{"W1": "held", "W2": "W1", "R3": "W2"}},
		{"foreign nodes ignored", recipes.Curator, []string{"F0", "R1", "F2", "W3", "F4"},
			map[string]string{"R1": "held", "W3": "R1"}},
		{"order by sequence, not by name", recipes.Curator, []string{"W10", "R9"},
			map[string]string{"R9": "held", "W10": "R9"}},
		{"order across the wrap", recipes.Curator, []string{"W2147483647", "R-2147483648"},
			map[string]string{"W2147483647": "held", "R-2147483648": "W2147483647"}},
		{"kazoo: readers share", recipes.Kazoo, []string{"R1", "R2"},
			map[string]string{"R1": "held", "R2": "held"}},
		{"kazoo: writers and Lock block readers", recipes.Kazoo, []string{"L1", "R2", "W3", "R4"},
			map[string]string{"R2": "L1", "W3": "R2", "R4": "W3"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := plan(tt.dialect, tt.queue)
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("plan(%v) = %v, want %v", tt.queue, got, tt.want)
			}
		})
	}
}

// TestWireNames checks the names this package writes in each dialect.
func TestWireNames(t *testing.T) {
	tests := []struct {
		dialect recipes.Dialect
		role    recipes.Role
		prefix  string
		guidLen int
	}{
		{recipes.Curator, recipes.RoleRead, "-__READ__", 36},
		{recipes.Curator, recipes.RoleWrite, "-__WRIT__", 36},
		{recipes.Kazoo, recipes.RoleRead, "__rlock__", 32},
		{recipes.Kazoo, recipes.RoleWrite, "__lock__", 32},
	}
	for _, tt := range tests {
		c := lockopt.Config{Dialect: tt.dialect}
		spec := spec(c, "/p", tt.role, recipes.StepDownOnSuspend)
		guid := spec.Dialect.NewGUID()
		got, err := spec.Dialect.NodePrefix(guid, spec.Role)
		if err != nil {
			t.Fatal(err)
		}
		want := guid + tt.prefix
		if tt.dialect.String() == "curator" {
			want = "_c_" + want
		}
		if got != want || len(guid) != tt.guidLen {
			t.Errorf("%s %s: prefix %q, want %q (guid %d chars)", tt.dialect, tt.role, got, want, len(guid))
		}
		ct, ok := tt.dialect.Parse(got+"0000000042", tt.dialect.Blocking(recipes.RoleRead)...)
		if !ok || ct.Seq != 42 || ct.GUID != guid || (ct.Role == recipes.RoleRead) != (tt.role == recipes.RoleRead) {
			t.Errorf("%s %s: parse %+v, %v", tt.dialect, tt.role, ct, ok)
		}
	}
}

func TestNilReceiver(t *testing.T) {
	ctx := context.Background()
	var nilM *RWMutex
	for name, err := range map[string]error{
		"Lock": nilM.Lock(ctx), "Reader().Lock": nilM.Reader().Lock(ctx), "TryLock": nilM.TryLock(ctx),
		"Reader().TryLock": nilM.Reader().TryLock(ctx), "Unlock": nilM.Unlock(ctx), "Reader().Unlock": nilM.Reader().Unlock(ctx),
	} {
		if !errors.Is(err, ErrNilReceiver) {
			t.Errorf("%s on nil = %v", name, err)
		}
	}
	if nilM.Context().Err() == nil || nilM.Reader().Context().Err() == nil || nilM.Fence().Valid() || nilM.Node() != "" || nilM.Revoked() != nil {
		t.Error("nil RWMutex reports a holding")
	}
}
