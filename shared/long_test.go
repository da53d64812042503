package shared

import (
	"math"
	"testing"
)

func TestAddExact(t *testing.T) {
	for _, tc := range []struct {
		a, b, sum int64
		ok        bool
	}{
		{0, 0, 0, true},
		{1, 2, 3, true},
		{-1, 1, 0, true},
		{0, math.MaxInt64, math.MaxInt64, true},
		{0, math.MinInt64, math.MinInt64, true},
		{math.MaxInt64 - 1, 1, math.MaxInt64, true},
		{math.MinInt64 + 1, -1, math.MinInt64, true},
		{math.MaxInt64, math.MinInt64, -1, true},
		{math.MinInt64, math.MaxInt64, -1, true},
		{-1, -math.MaxInt64, math.MinInt64, true},
		{math.MaxInt64, 1, 0, false},
		{1, math.MaxInt64, 0, false},
		{math.MaxInt64, math.MaxInt64, 0, false},
		{math.MaxInt64 - 1, 2, 0, false},
		{math.MinInt64, -1, 0, false},
		{-1, math.MinInt64, 0, false},
		{math.MinInt64, math.MinInt64, 0, false},
		{-2, -math.MaxInt64, 0, false},
	} {
		if sum, ok := addExact(tc.a, tc.b); sum != tc.sum || ok != tc.ok {
			t.Errorf("addExact(%d, %d) = %d, %v; want %d, %v", tc.a, tc.b, sum, ok, tc.sum, tc.ok)
		}
	}
}
