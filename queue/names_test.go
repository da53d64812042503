package queue

import (
	"math"
	"slices"
	"testing"

	zkseq "github.com/zkrecipes/zkrecipes/internal/seq"
	"github.com/zkrecipes/zkrecipes/recipes"
)

func TestParseName(t *testing.T) {
	for _, tc := range []struct {
		d    recipes.Dialect
		name string
		ok   bool
		prio int
		seq  int32
	}{
		{recipes.Curator, "qn-0000000042", true, DefaultPriority, 42},
		{recipes.Curator, "qn-2147483647", true, DefaultPriority, math.MaxInt32},
		{recipes.Curator, "qn--2147483648", true, DefaultPriority, math.MinInt32},
		{recipes.Curator, "qn--000000005", true, DefaultPriority, -5},
		{recipes.Curator, "qn-007-0000000003", true, 7, 3},
		{recipes.Curator, "qn-999-0000000003", true, 999, 3},
		{recipes.Curator, "qn-", false, 0, 0},
		{recipes.Curator, "qn-42", false, 0, 0},
		{recipes.Curator, "qn-00000000042", false, 0, 0},
		{recipes.Curator, "qn-07-0000000003", false, 0, 0},
		{recipes.Curator, "qn-a07-0000000003", false, 0, 0},
		{recipes.Curator, "qn-007_0000000003", false, 0, 0},
		{recipes.Curator, "taken", false, 0, 0},
		{recipes.Curator, "entry-100-0000000001", false, 0, 0},
		{recipes.Curator, "_c_0f1e2d3c-0000-4000-8000-000000000000-lock-0000000001", false, 0, 0},
		{recipes.Kazoo, "entry-100-0000000001", true, 100, 1},
		{recipes.Kazoo, "entry-000-0000000009", true, 0, 9},
		{recipes.Kazoo, "entry-0000000001", false, 0, 0},
		{recipes.Kazoo, "qn-0000000001", false, 0, 0},
		{recipes.Kazoo, "entry-100-000000001", false, 0, 0},
	} {
		e, ok := parseName(tc.d, tc.name)
		if ok != tc.ok || (ok && (e.priority != tc.prio || e.seq != tc.seq || e.name != tc.name)) {
			t.Errorf("parseName(%s, %q) = %+v, %v; want prio %d seq %d ok %v", tc.d, tc.name, e, ok, tc.prio, tc.seq, tc.ok)
		}
	}
}

func TestItemPrefix(t *testing.T) {
	for _, tc := range []struct {
		d        recipes.Dialect
		prio     int
		explicit bool
		want     string
	}{
		{recipes.Curator, DefaultPriority, false, "qn-"},
		{recipes.Curator, 7, true, "qn-007-"},
		{recipes.Curator, DefaultPriority, true, "qn-100-"},
		{recipes.Kazoo, DefaultPriority, false, "entry-100-"},
		{recipes.Kazoo, 0, true, "entry-000-"},
	} {
		if got := itemPrefix(tc.d, tc.prio, tc.explicit); got != tc.want {
			t.Errorf("itemPrefix(%s, %d, %v) = %q, want %q", tc.d, tc.prio, tc.explicit, got, tc.want)
		}
	}
}

func names(es []entry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.name
	}
	return out
}

func TestSortNames(t *testing.T) {
	for _, tc := range []struct {
		name string
		d    recipes.Dialect
		in   []string
		want []string
	}{
		{"fifo", recipes.Curator,
			[]string{"qn-0000000003", "taken", "qn-0000000001", "qn-0000000002"},
			[]string{"qn-0000000001", "qn-0000000002", "qn-0000000003"}},
		{"wrap", recipes.Curator,
			// The counter wrapped after 2^31 creates: the negative ones are newer.
			[]string{"qn--2147483647", "qn-2147483646", "qn--2147483648", "qn-2147483647"},
			[]string{"qn-2147483646", "qn-2147483647", "qn--2147483648", "qn--2147483647"}},
		{"priority first", recipes.Curator,
			[]string{"qn-0000000001", "qn-005-0000000004", "qn-001-0000000003", "qn-005-0000000002"},
			[]string{"qn-001-0000000003", "qn-005-0000000002", "qn-005-0000000004", "qn-0000000001"}},
		{"kazoo", recipes.Kazoo,
			[]string{"entry-100-0000000002", "entry-050-0000000003", "entry-100-0000000001", "qn-0000000000"},
			[]string{"entry-050-0000000003", "entry-100-0000000001", "entry-100-0000000002"}},
		{"empty", recipes.Curator, []string{"taken", "x"}, []string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := names(sortNames(tc.d, tc.in))
			if !slices.Equal(got, tc.want) {
				t.Errorf("sortNames(%v) = %v, want %v", tc.in, got, tc.want)
			}
		})
	}
}

// FuzzName checks that every name we create parses back to its priority
// and sequence, and that parsing never panics.
func FuzzName(f *testing.F) {
	f.Add(int32(42), 100, true, false)
	f.Add(int32(math.MinInt32), 0, false, true)
	f.Add(int32(-1), 999, true, true)
	f.Fuzz(func(t *testing.T, seq int32, prio int, explicit, kazoo bool) {
		d := recipes.Curator
		if kazoo {
			d = recipes.Kazoo
		}
		prio = ((prio % 1000) + 1000) % 1000
		if !explicit && !kazoo {
			prio = DefaultPriority
		}
		name := itemPrefix(d, prio, explicit) + zkseq.Format(seq)
		e, ok := parseName(d, name)
		if !ok || e.seq != seq || e.priority != prio {
			t.Fatalf("parseName(%q) = %+v, %v; want seq %d prio %d", name, e, ok, seq, prio)
		}
		// Arbitrary text must not panic.
		parseName(d, name[:len(name)/2])
	})
}

// FuzzSortWindow checks that items put in order stay in order however the
// window of sequence numbers sits on the 32-bit circle.
func FuzzSortWindow(f *testing.F) {
	f.Add(int32(math.MaxInt32-3), uint8(8))
	f.Add(int32(0), uint8(1))
	f.Fuzz(func(t *testing.T, start int32, n uint8) {
		var in, want []string
		for i := 0; i < int(n); i++ {
			name := "qn-" + zkseq.Format(int32(uint32(start)+uint32(i)))
			want = append(want, name)
			in = append(in, name)
		}
		slices.Reverse(in)
		got := names(sortNames(recipes.Curator, in))
		if len(want) == 0 {
			want = []string{}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("start %d n %d: got %v want %v", start, n, got, want)
		}
	})
}

func TestItemNames(t *testing.T) {
	got := ItemNames(recipes.Kazoo, []string{"entry-100-0000000003", "taken", "entry-001-0000000009", "qn-0000000001"})
	want := []ItemName{{"entry-001-0000000009", 1, 9}, {"entry-100-0000000003", 100, 3}}
	if !slices.Equal(got, want) {
		t.Errorf("ItemNames = %+v, want %+v", got, want)
	}
}

// FuzzParseNameCanonical: the queue takes a child only if its name is one
// ZooKeeper could have made for an item: whatever text parses re-formats
// to itself (ZooKeeper's "%010d" of the parent's signed 32-bit counter, so
// "qn--2147483648", the first name after the counter wraps, is an item,
// and "qn--0000000005", "qn-+000000005" or "qn-2147483648" are not).
func FuzzParseNameCanonical(f *testing.F) {
	for _, s := range []string{"qn--2147483648", "qn--0000000005", "qn-+000000005", "qn-2147483648", "qn-007-0000000003", "entry-100--000000001", "qn-0000000001\x00"} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, name string, kazoo bool) {
		d := recipes.Curator
		if kazoo {
			d = recipes.Kazoo
		}
		e, ok := parseName(d, name)
		if !ok {
			return
		}
		plain := itemPrefix(d, e.priority, false) + zkseq.Format(e.seq)
		ranked := itemPrefix(d, e.priority, true) + zkseq.Format(e.seq)
		if name != plain && name != ranked {
			t.Fatalf("parseName(%q) = %+v: not a name ZooKeeper makes (%q, %q)", name, e, plain, ranked)
		}
	})
}
