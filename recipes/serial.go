package recipes

import (
	"slices"
	"strconv"
	"strings"

	"github.com/zkrecipes/zkrecipes/internal/seq"
)

// SortBySeq sorts contenders into queue order. By default that is the
// serial order of their sequence numbers, measured as signed distances from
// ref (any member of the set, normally our own node): a correct total order
// whenever all sequence numbers lie within a window of 2^31, which holds
// for any live set of contenders. When every contender was parsed by a
// dialect made with Dialect.TextOrder, it is the text order of their
// suffixes instead (as Curator and kazoo sort; see TextOrder for where the
// two part) and ref is not used. Ties (impossible among real siblings) keep
// name order.
func SortBySeq(cs []Contender, ref int32) {
	text := len(cs) > 0
	for _, c := range cs {
		text = text && c.key != ""
	}
	slices.SortStableFunc(cs, func(x, y Contender) int {
		if text {
			if c := strings.Compare(x.key, y.key); c != 0 {
				return c
			}
			return strings.Compare(x.Name, y.Name)
		}
		dx, dy := seq.Distance(ref, x.Seq), seq.Distance(ref, y.Seq)
		switch {
		case dx < dy:
			return -1
		case dx > dy:
			return 1
		}
		return strings.Compare(x.Name, y.Name)
	})
}

// ParseSeq parses ZooKeeper's sequence suffix: String.format("%010d") of a
// signed 32-bit counter, so ten characters ("0000000042", "-000000005") or
// eleven for the minimum ("-2147483648"). Pure.
func ParseSeq(s string) (int32, bool) {
	if len(s) != 10 && len(s) != 11 {
		return 0, false
	}
	if len(s) == 11 && (s[0] != '-' || s[1] == '0') {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && !(i == 0 && c == '-') {
			return 0, false
		}
	}
	v, err := strconv.ParseInt(s, 10, 32)
	if err != nil || (s[0] == '-' && v >= 0) {
		return 0, false
	}
	return int32(v), true
}
