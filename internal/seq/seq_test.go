package seq

import (
	"math"
	"strconv"
	"testing"
)

func TestLess(t *testing.T) {
	tests := []struct {
		a, b int32
		want bool
	}{
		{0, 1, true},
		{1, 0, false},
		{5, 5, false},
		{math.MaxInt32, math.MinInt32, true}, // the wrap: 2147483647 then -2147483648
		{math.MinInt32, math.MaxInt32, false},
		{math.MaxInt32 - 2, -5, true},
		{-5, math.MaxInt32 - 2, false},
		{-1, 0, true},
		{0, math.MaxInt32, true},        // distance 2^31-1
		{0, math.MinInt32, false},       // distance 2^31: undefined, both false
		{math.MinInt32, 0, false},       // ditto
		{100, math.MinInt32 + 98, true}, // 100 + (2^31 - 2), wrapped
	}
	for _, tt := range tests {
		if got := Less(tt.a, tt.b); got != tt.want {
			t.Errorf("Less(%d, %d) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestFormat(t *testing.T) {
	for _, tt := range []struct {
		n    int32
		want string
	}{
		{0, "0000000000"},
		{42, "0000000042"},
		{math.MaxInt32, "2147483647"},
		{-5, "-000000005"},
		{-123456789, "-123456789"},
		{-1000000000, "-1000000000"},
		{math.MinInt32, "-2147483648"},
	} {
		if got := Format(tt.n); got != tt.want {
			t.Errorf("Format(%d) = %q, want %q", tt.n, got, tt.want)
		}
	}
}

func FuzzFormat(f *testing.F) {
	f.Add(int32(0))
	f.Add(int32(math.MinInt32))
	f.Add(int32(-42))
	f.Fuzz(func(t *testing.T, n int32) {
		s := Format(n)
		if (len(s) != 10 && len(s) != 11) || (len(s) == 11 && n > -1000000000) {
			t.Fatalf("Format(%d) = %q: wrong width", n, s)
		}
		if got, err := strconv.ParseInt(s, 10, 32); err != nil || int32(got) != n {
			t.Fatalf("Format(%d) = %q reads back as %d, %v", n, s, got, err)
		}
	})
}

func TestDistance(t *testing.T) {
	for _, tt := range []struct{ ref, s, want int32 }{
		{0, 1, 1}, {1, 0, -1}, {math.MaxInt32, math.MinInt32, 1}, {math.MinInt32, math.MaxInt32, -1}, {5, 5, 0},
	} {
		if got := Distance(tt.ref, tt.s); got != tt.want {
			t.Errorf("Distance(%d, %d) = %d, want %d", tt.ref, tt.s, got, tt.want)
		}
	}
}
