package lock

import (
	"errors"
	"slices"
	"testing"

	"github.com/zkrecipes/zkrecipes/recipes"
)

// TestOrderLeases: Curator permit names in creation order (serial order of
// their sequence numbers, across the wrap of the parent's counter), then
// every other child by name.
func TestOrderLeases(t *testing.T) {
	const g1, g2, g3 = "_c_11111111-1111-1111-1111-111111111111-", "_c_22222222-2222-2222-2222-222222222222-", "_c_33333333-3333-3333-3333-333333333333-"
	for _, tt := range []struct {
		name     string
		children []string
		want     []string
	}{
		{"empty", nil, []string{}},
		{"by sequence", []string{g2 + "lease-0000000012", g1 + "lease-0000000003", g3 + "lease-0000000007"},
			[]string{g1 + "lease-0000000003", g3 + "lease-0000000007", g2 + "lease-0000000012"}},
		{"across the wrap", []string{g1 + "lease--2147483647", g2 + "lease-2147483646"},
			[]string{g2 + "lease-2147483646", g1 + "lease--2147483647"}},
		{"foreign children last, by name", []string{"zeta", g1 + "lease-0000000005", "alpha", g2 + "lock-0000000001"},
			[]string{g1 + "lease-0000000005", g2 + "lock-0000000001", "alpha", "zeta"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := PermitOrder(tt.children); !slices.Equal(got, tt.want) {
				t.Errorf("PermitOrder(%q) = %q, want %q", tt.children, got, tt.want)
			}
		})
	}
}

// TestDecodeCount: 4 bytes, big endian (Curator's SharedCount), as
// encodeCount writes them; any other length is ErrBadCount.
func TestDecodeCount(t *testing.T) {
	for _, n := range []int32{0, 1, 3, -1, 1 << 30, -1 << 31} {
		b := encodeCount(n)
		if got, err := decodeCount(b); err != nil || got != n || len(b) != 4 {
			t.Errorf("decodeCount(encodeCount(%d) = %x) = %d, %v", n, b, got, err)
		}
	}
	if got := encodeCount(258); !slices.Equal(got, []byte{0, 0, 1, 2}) {
		t.Errorf("encodeCount(258) = %x, want 00000102", got)
	}
	for _, b := range [][]byte{nil, {1}, {0, 0, 0}, {0, 0, 0, 0, 1}, []byte("3")} {
		if _, err := decodeCount(b); !errors.Is(err, ErrBadCount) {
			t.Errorf("decodeCount(%x) = %v, want ErrBadCount", b, err)
		}
	}
}

// TestTooMany: an acquisition of more than one permit above the maximum can
// never be granted; one permit waits for the maximum to grow (a count of 0).
func TestTooMany(t *testing.T) {
	for _, tc := range []struct {
		qty, limit int
		refused    bool
	}{
		{1, 0, false}, {1, -5, false}, {1, 1, false}, {2, 2, false}, {2, 3, false},
		{2, 1, true}, {2, 0, true}, {3, 2, true}, {100000, 2, true},
	} {
		err := tooMany(tc.qty, tc.limit)
		if refused := err != nil; refused != tc.refused || (refused && (!errors.Is(err, ErrPermits) || !errors.Is(err, recipes.ErrBadArgument))) {
			t.Errorf("tooMany(%d, %d) = %v, want refused %v", tc.qty, tc.limit, err, tc.refused)
		}
	}
}
