// Package seq formats and compares ZooKeeper's sequence numbers (the
// suffix of a sequential node) for the recipes of this module; parsing is
// recipes.ParseSeq and queue order recipes.SortBySeq. Pure.
package seq

import "strconv"

// Less reports whether sequence number a comes before b in RFC 1982
// serial-number arithmetic on 32 bits: a < b iff the signed 32-bit distance
// b-a is positive. ZooKeeper's sequence counter is the parent's signed
// 32-bit cversion, so after 2^31 creates under one parent it wraps to
// negative numbers; plain comparison would then put a newcomer first. For
// two numbers exactly 2^31 apart the order is undefined (both directions
// report false).
func Less(a, b int32) bool {
	return Distance(a, b) > 0
}

// Distance is the signed 32-bit distance from ref to s.
func Distance(ref, s int32) int32 { return int32(uint32(s) - uint32(ref)) }

// Format formats n the way ZooKeeper names sequential nodes:
// String.format("%010d") of a signed 32-bit counter.
func Format(n int32) string {
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
