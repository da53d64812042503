package partition

import (
	"fmt"
	"slices"
)

// Func is a partition function (kazoo's partition_func): given this
// member's id, the ids of the group's members (sorted, this member among
// them; an id appears once per member node carrying it) and the items
// (sorted), it returns the items this member takes. Every member calls it
// with the same members and items once the group held still, so a Func
// that is deterministic and gives every item to exactly one member splits
// the set; the locks keep two members from holding one item even when
// their Funcs (or their views of the members) disagree, but an item that
// no member's share names is then owned by nobody. It must return only
// items of the set, each at most once (else the stream ends with
// ErrBadShare), and must not keep or change the slices it is given.
type Func func(id string, members, items []string) []string

// Stride is kazoo's partition function: with the items and the members
// sorted, the member at index i of n takes items i, i+n, i+2n, ...
// (Python's items[i::n]). A member not listed takes nothing. Pure.
func Stride(id string, members, items []string) []string {
	ms := slices.Clone(members)
	slices.Sort(ms)
	is := slices.Clone(items)
	slices.Sort(is)
	i := slices.Index(ms, id)
	if i < 0 {
		return nil
	}
	var out []string
	for j := i; j < len(is); j += len(ms) {
		out = append(out, is[j])
	}
	return out
}

// checkShare validates a Func's result against the set and returns it
// sorted.
func checkShare(share, items []string) ([]string, error) {
	out := slices.Clone(share)
	slices.Sort(out)
	for i, item := range out {
		if _, found := slices.BinarySearch(items, item); !found {
			return nil, fmt.Errorf("%w: %q is not an item", ErrBadShare, item)
		}
		if i > 0 && out[i-1] == item {
			return nil, fmt.Errorf("%w: %q twice", ErrBadShare, item)
		}
	}
	return out, nil
}
