package partition

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestStride: kazoo's partition function. The expected shares are
// Python's sorted(items)[sorted(members).index(id)::len(members)].
func TestStride(t *testing.T) {
	items := []string{"q5", "q1", "q4", "q2", "q3", "q0"}
	for _, tc := range []struct {
		id      string
		members []string
		want    string
	}{
		{"a", []string{"a"}, "q0 q1 q2 q3 q4 q5"},
		{"a", []string{"b", "a"}, "q0 q2 q4"},
		{"b", []string{"b", "a"}, "q1 q3 q5"},
		{"b", []string{"c", "a", "b"}, "q1 q4"},
		{"c", []string{"c", "a", "b"}, "q2 q5"},
		{"g", []string{"a", "b", "c", "d", "e", "f", "g"}, ""},
		{"f", []string{"a", "b", "c", "d", "e", "f", "g"}, "q5"},
		{"x", []string{"a", "b"}, ""}, // not listed: nothing
		{"a", nil, ""},
		// Byte order is Python's code point order for UTF-8.
		{"Z", []string{"a", "Z", "ä"}, "q0 q3"},
		{"ä", []string{"a", "Z", "ä"}, "q2 q5"},
		// Duplicate ids: both take the first index (as kazoo's index does).
		{"a", []string{"a", "a", "b"}, "q0 q3"},
	} {
		in := slices.Clone(items)
		ms := slices.Clone(tc.members)
		if got := strings.Join(Stride(tc.id, ms, in), " "); got != tc.want {
			t.Errorf("Stride(%q, %v) = %q, want %q", tc.id, tc.members, got, tc.want)
		}
		if !slices.Equal(in, items) || !slices.Equal(ms, tc.members) {
			t.Errorf("Stride changed its arguments")
		}
	}
}

// TestStrideSplits: for any number of members and items, the members'
// shares are disjoint and cover the items.
func TestStrideSplits(t *testing.T) {
	for n := 1; n <= 9; n++ {
		for k := 1; k <= 20; k++ {
			var members, items []string
			for i := range n {
				members = append(members, fmt.Sprintf("m%d", i))
			}
			for i := range k {
				items = append(items, fmt.Sprintf("i%02d", i))
			}
			owner := map[string]string{}
			for _, m := range members {
				for _, it := range Stride(m, members, items) {
					if o, dup := owner[it]; dup {
						t.Fatalf("%d members, %d items: %s in the shares of %s and %s", n, k, it, o, m)
					}
					owner[it] = m
				}
			}
			if len(owner) != k {
				t.Fatalf("%d members, %d items: %d owned", n, k, len(owner))
			}
		}
	}
}

func TestCheckShare(t *testing.T) {
	items := []string{"a", "b", "c"}
	for _, tc := range []struct {
		share []string
		want  string
		err   error
	}{
		{nil, "", nil},
		{[]string{"c", "a"}, "a c", nil},
		{[]string{"a", "b", "c"}, "a b c", nil},
		{[]string{"d"}, "", ErrBadShare},
		{[]string{"a", "a"}, "", ErrBadShare},
		{[]string{""}, "", ErrBadShare},
	} {
		got, err := checkShare(tc.share, items)
		if !errors.Is(err, tc.err) || strings.Join(got, " ") != tc.want {
			t.Errorf("checkShare(%v) = %v, %v; want %q, %v", tc.share, got, err, tc.want, tc.err)
		}
	}
}

func FuzzStride(f *testing.F) {
	f.Add("b", "a,b,c", "x,y,z,w")
	f.Fuzz(func(t *testing.T, id, members, items string) {
		ms, is := strings.Split(members, ","), strings.Split(items, ",")
		share := Stride(id, ms, is)
		got, err := checkShare(share, sortedSet(is))
		if err != nil && !hasDup(is) {
			t.Fatalf("Stride(%q, %v, %v) = %v: %v", id, ms, is, share, err)
		}
		if !slices.Contains(ms, id) && len(got) > 0 {
			t.Fatalf("unlisted member got %v", got)
		}
	})
}

func sortedSet(xs []string) []string {
	out := slices.Clone(xs)
	slices.Sort(out)
	return slices.Compact(out)
}

func hasDup(xs []string) bool { return len(sortedSet(xs)) != len(xs) }
