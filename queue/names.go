package queue

import (
	"fmt"
	"slices"
	"strings"

	"github.com/zkrecipes/zkrecipes/recipes"
)

// longestPrefix is the length of the longest item prefix of the dialects,
// kazoo's "entry-" (before the priority), for the size of a create.
const longestPrefix = len("entry-")

// itemPrefix returns the name to create for an item of dialect d, to which
// ZooKeeper appends the sequence: "<prefix><ppp>-" when the dialect always
// names the priority or explicit is set, else "<prefix>". Pure.
func itemPrefix(d recipes.Dialect, priority int, explicit bool) string {
	prefix, ranked := d.QueueItem()
	if !ranked && !explicit {
		return prefix
	}
	return fmt.Sprintf("%s%03d-", prefix, priority)
}

// entry is one parsed item name.
type entry struct {
	name     string
	priority int
	seq      int32
}

// parseName parses an item name of dialect d: "qn-<seq>" or
// "qn-<ppp>-<seq>" (Curator), "entry-<ppp>-<seq>" (kazoo). Anything else
// (claim directories, foreign nodes) is not an item. Pure.
func parseName(d recipes.Dialect, name string) (entry, bool) {
	prefix, ranked := d.QueueItem()
	rest, ok := strings.CutPrefix(name, prefix)
	if !ok {
		return entry{}, false
	}
	if !ranked {
		if seq, ok := recipes.ParseSeq(rest); ok {
			return entry{name: name, priority: DefaultPriority, seq: seq}, true
		}
	}
	if len(rest) < 4 || rest[3] != '-' {
		return entry{}, false
	}
	p := 0
	for i := 0; i < 3; i++ {
		c := rest[i]
		if c < '0' || c > '9' {
			return entry{}, false
		}
		p = p*10 + int(c-'0')
	}
	seq, ok := recipes.ParseSeq(rest[4:])
	if !ok {
		return entry{}, false
	}
	return entry{name: name, priority: p, seq: seq}, true
}

// sortNames parses names, drops the ones that are not items, and orders the
// rest by (priority, sequence), sequences compared with RFC 1982 serial
// arithmetic (recipes.SortBySeq) so that the wrap of the parent's counter
// does not put newer items first. Pure.
func sortNames(d recipes.Dialect, names []string) []entry {
	cs := make([]recipes.Contender, 0, len(names))
	byName := make(map[string]entry, len(names))
	for _, n := range names {
		if e, ok := parseName(d, n); ok {
			cs = append(cs, recipes.Contender{Name: n, Seq: e.seq})
			byName[n] = e
		}
	}
	if len(cs) == 0 {
		return nil
	}
	// Any member is a valid reference while all sequences lie within 2^31.
	recipes.SortBySeq(cs, cs[0].Seq)
	out := make([]entry, len(cs))
	for i, c := range cs {
		out[i] = byName[c.Name]
	}
	slices.SortStableFunc(out, func(a, b entry) int { return a.priority - b.priority })
	return out
}

// ItemName is one queue item as its node name tells it: the name, its
// priority (DefaultPriority when the name carries none) and ZooKeeper's
// sequence suffix.
type ItemName struct {
	Name     string
	Priority int
	Seq      int32
}

// ItemNames returns the names among names that are items of dialect d, in
// the order this package's consumers take them: by priority, then by
// sequence compared with RFC 1982 serial arithmetic. Other names (a claim
// directory, foreign nodes) are left out. It is the parsing and ordering
// Queue itself uses, exported for tools that inspect a queue. Pure.
func ItemNames(d recipes.Dialect, names []string) []ItemName {
	es := sortNames(d, names)
	out := make([]ItemName, len(es))
	for i, e := range es {
		out[i] = ItemName{Name: e.name, Priority: e.priority, Seq: e.seq}
	}
	return out
}
