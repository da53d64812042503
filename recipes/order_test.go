package recipes_test

import (
	"slices"
	"testing"

	"github.com/zkrecipes/zkrecipes/internal/seq"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// TestOrderAcrossTheWrap sorts contenders named with suffixes around the
// wrap of the parent's sequence counter, in both orders and every dialect:
// serial order keeps creation order; text order (TextOrder, as Curator and
// kazoo sort) puts negative suffixes first and reverses them.
func TestOrderAcrossTheWrap(t *testing.T) {
	dialects := []struct {
		d    recipes.Dialect
		role recipes.Role
		name func(suffix string) string
	}{
		{recipes.Curator, recipes.RoleLatch, func(s string) string { return "_c_0f8e1ec0-3b55-4d3a-9c5e-4e0c0a3a1b2c-latch-" + s }},
		{recipes.Curator, recipes.RoleLock, func(s string) string { return "_c_0f8e1ec0-3b55-4d3a-9c5e-4e0c0a3a1b2c-lock-" + s }},
		{recipes.Kazoo, recipes.RoleLock, func(s string) string { return "0f8e1ec03b554d3a9c5e4e0c0a3a1b2c__lock__" + s }},
	}
	tests := []struct {
		name    string
		created []string // in creation order
		text    []string // text order
	}{
		{"before the wrap both agree",
			[]string{"0000000001", "0000000002", "0000000010", "2147483646"},
			[]string{"0000000001", "0000000002", "0000000010", "2147483646"}},
		{"across the wrap",
			[]string{"2147483646", "2147483647", "-2147483648", "-2147483647"},
			[]string{"-2147483647", "-2147483648", "2147483646", "2147483647"}},
		{"far past the wrap",
			[]string{"2147483647", "-2147483648", "-1000000000", "-999999999", "-000000005"},
			[]string{"-000000005", "-1000000000", "-2147483648", "-999999999", "2147483647"}},
	}
	for _, dl := range dialects {
		for _, tt := range tests {
			for _, text := range []bool{false, true} {
				d, want := dl.d, tt.created
				if text {
					d, want = d.TextOrder(), tt.text
				}
				if d.OrdersAsText() != text {
					t.Fatalf("%s: OrdersAsText() = %v", d, d.OrdersAsText())
				}
				var cs []recipes.Contender
				for i := len(tt.created) - 1; i >= 0; i-- { // listing order is arbitrary
					c, ok := d.Parse(dl.name(tt.created[i]), dl.role)
					if !ok {
						t.Fatalf("%s: %q not parsed", d, dl.name(tt.created[i]))
					}
					cs = append(cs, c)
				}
				for _, ref := range cs { // any member as the reference
					got := slices.Clone(cs)
					recipes.SortBySeq(got, ref.Seq)
					var suffixes []string
					for _, c := range got {
						suffixes = append(suffixes, c.Name[len(c.Name)-len(seq.Format(c.Seq)):])
					}
					if !slices.Equal(suffixes, want) {
						t.Errorf("%s %v, %s, text=%v, ref %d: %v, want %v", d, dl.role, tt.name, text, ref.Seq, suffixes, want)
					}
				}
			}
		}
	}
	// The default dialects order serially; TextOrder of the zero Dialect is
	// Curator's.
	if recipes.Curator.OrdersAsText() || recipes.Kazoo.OrdersAsText() {
		t.Error("a default dialect orders by text")
	}
	if z := (recipes.Dialect{}).TextOrder(); z.String() != "curator" || !z.OrdersAsText() {
		t.Errorf("zero Dialect's TextOrder: %s %v", z, z.OrdersAsText())
	}
}
