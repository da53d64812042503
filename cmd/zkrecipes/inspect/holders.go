package inspect

import "github.com/zkrecipes/zkrecipes/recipes"

// Holds reports, for each contender of a lock, rwlock or election in queue
// order, whether it holds, with the recipes' own predicates: a reader holds
// when no writer is ahead of it (recipes.Read), any other role only at the
// head (recipes.Exclusive). Pure.
func Holds(kind Kind, cs []recipes.Contender) []bool {
	out := make([]bool, len(cs))
	excl, read := recipes.Exclusive(), recipes.Read()
	for i, c := range cs {
		p := excl
		if kind == KindRWLock && c.Role == recipes.RoleRead {
			p = read
		}
		out[i], _ = p(cs, i)
	}
	return out
}
