package recipes_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/google/uuid"
	"github.com/zkrecipes/zkrecipes/internal/seq"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// children returns n contender names of dialect d as ZooKeeper lists them
// (in no particular order), with sequence numbers starting at first, plus
// a tenth of foreign names that must be skipped. The same seed gives the
// same names.
func children(d recipes.Dialect, n int, first int32) []string {
	r := rand.New(rand.NewPCG(1, 2))
	out := make([]string, 0, n+n/10)
	for i := range n {
		var g uuid.UUID
		for j := range g {
			g[j] = byte(r.UintN(256))
		}
		sfx := seq.Format(first + int32(i))
		if d.String() == "kazoo" {
			out = append(out, fmt.Sprintf("%x__lock__%s", g[:], sfx))
		} else {
			out = append(out, "_c_"+g.String()+"-lock-"+sfx)
		}
	}
	for i := range n / 10 {
		out = append(out, fmt.Sprintf("foreign-%d", i))
	}
	r.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

func parseAll(d recipes.Dialect, names []string) []recipes.Contender {
	cs := make([]recipes.Contender, 0, len(names))
	for _, name := range names {
		if c, ok := d.Parse(name, recipes.RoleLock); ok {
			cs = append(cs, c)
		}
	}
	return cs
}

// BenchmarkParseChildren10k parses 10,000 contender names (and 1,000
// foreign ones) as a getChildren answer delivers them.
func BenchmarkParseChildren10k(b *testing.B) {
	for _, d := range []recipes.Dialect{recipes.Curator, recipes.Kazoo} {
		b.Run(d.String(), func(b *testing.B) {
			names := children(d, 10_000, 0)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if cs := parseAll(d, names); len(cs) != 10_000 {
					b.Fatalf("parsed %d", len(cs))
				}
			}
		})
	}
}

// BenchmarkOrderChildren10k sorts 10,000 parsed contenders by serial order,
// also across the wrap of the parent's counter at 2^31.
func BenchmarkOrderChildren10k(b *testing.B) {
	for _, tc := range []struct {
		name  string
		first int32
	}{{"plain", 0}, {"wrapping", 1<<31 - 1 - 5_000}} {
		b.Run(tc.name, func(b *testing.B) {
			parsed := parseAll(recipes.Curator, children(recipes.Curator, 10_000, tc.first))
			cs := make([]recipes.Contender, len(parsed))
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				copy(cs, parsed)
				recipes.SortBySeq(cs, tc.first)
			}
			if cs[0].Seq != tc.first {
				b.Fatalf("first contender has seq %d, want %d", cs[0].Seq, tc.first)
			}
		})
	}
}

// BenchmarkListToOrder10k is what a contender does with one getChildren
// answer of 10,000 children: parse every name, sort, find itself.
func BenchmarkListToOrder10k(b *testing.B) {
	names := children(recipes.Curator, 10_000, 0)
	self := names[len(names)/2]
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		cs := parseAll(recipes.Curator, names)
		recipes.SortBySeq(cs, cs[0].Seq)
		found := false
		for _, c := range cs {
			if c.Name == self {
				found = true
				break
			}
		}
		if !found && self[:3] == "_c_" {
			b.Fatal("own node not found")
		}
	}
}
