package recipes

import (
	"slices"
	"strconv"
	"strings"
)

// SerialLess reports whether sequence number a comes before b in RFC 1982
// serial-number arithmetic on 32 bits: a < b iff the signed 32-bit distance
// b-a is positive. ZooKeeper's sequence counter is the parent's signed
// 32-bit cversion, so after 2^31 creates under one parent it wraps to
// negative numbers; plain comparison would then put a newcomer first. For
// two numbers exactly 2^31 apart the order is undefined (both directions
// report false). Pure.
func SerialLess(a, b int32) bool {
	return int32(uint32(b)-uint32(a)) > 0
}

// serialDistance is the signed distance from ref to s.
func serialDistance(ref, s int32) int32 { return int32(uint32(s) - uint32(ref)) }

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
		dx, dy := serialDistance(ref, x.Seq), serialDistance(ref, y.Seq)
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

// FormatSeq formats n the way ZooKeeper names sequential nodes.
func FormatSeq(n int32) string {
	if n >= 0 {
		s := strconv.FormatInt(int64(n), 10)
		return "0000000000"[len(s):] + s
	}
	s := strconv.FormatInt(-int64(n), 10)
	if len(s) >= 9 {
		return "-" + s
	}
	return "-" + "000000000"[len(s):] + s
}
