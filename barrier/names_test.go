package barrier

import (
	"slices"
	"testing"
)

func TestMemberNames(t *testing.T) {
	for _, tc := range []struct {
		in, want []string
	}{
		{nil, []string{}},
		{[]string{"ready"}, []string{}},
		{[]string{"c", "ready", "a", "b"}, []string{"a", "b", "c"}},
		{
			[]string{"f47ac10b-58cc-4372-a567-0e02b2c3d479", "ready", "0e02b2c3-58cc-4372-a567-f47ac10bd479"},
			[]string{"0e02b2c3-58cc-4372-a567-f47ac10bd479", "f47ac10b-58cc-4372-a567-0e02b2c3d479"},
		},
	} {
		if got := memberNames(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("memberNames(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

func FuzzMemberNames(f *testing.F) {
	f.Add("a", "ready", "b")
	f.Fuzz(func(t *testing.T, a, b, c string) {
		got := memberNames([]string{a, b, c})
		if !slices.IsSorted(got) || slices.Contains(got, ReadyNode) {
			t.Fatalf("memberNames = %v", got)
		}
	})
}
