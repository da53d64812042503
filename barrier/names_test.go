package barrier

import (
	"slices"
	"testing"

	"github.com/zkrecipes/zkrecipes/recipes"
)

func TestMemberNames(t *testing.T) {
	const a, b = "0e02b2c3-58cc-4372-a567-f47ac10bd479", "f47ac10b-58cc-4372-a567-0e02b2c3d479"
	const ka, kb = "0e02b2c358cc4372a567f47ac10bd479", "F47AC10B58CC4372A5670E02B2C3D479"
	for _, tc := range []struct {
		d        recipes.Dialect
		in, want []string
	}{
		{recipes.Curator, nil, []string{}},
		{recipes.Curator, []string{"ready"}, []string{}},
		{recipes.Curator, []string{b, "ready", a}, []string{a, b}},
		{recipes.Curator, []string{b, "setup", ka, a + "x", "0e02b2c3x58cc-4372-a567-f47ac10bd479", a}, []string{a, b}},
		{recipes.Kazoo, []string{kb, "ready", ka, a, "0e02b2c358cc4372a567f47ac10bd47g"}, []string{ka, kb}},
	} {
		if got := memberNames(tc.d, tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("memberNames(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

func FuzzMemberNames(f *testing.F) {
	f.Add("a", "ready", "b")
	f.Fuzz(func(t *testing.T, a, b, c string) {
		for _, d := range []recipes.Dialect{recipes.Curator, recipes.Kazoo} {
			got := memberNames(d, []string{a, b, c, d.NewGUID()})
			if !slices.IsSorted(got) || slices.Contains(got, ReadyNode) || len(got) == 0 {
				t.Fatalf("memberNames = %v", got)
			}
		}
	})
}

func TestMembersIsMemberNames(t *testing.T) {
	const a, b = "0e02b2c3-58cc-4372-a567-f47ac10bd479", "f47ac10b-58cc-4372-a567-0e02b2c3d479"
	if got := Members(recipes.Curator, []string{b, "ready", a}); !slices.Equal(got, []string{a, b}) {
		t.Errorf("Members = %v, want %v", got, []string{a, b})
	}
}
