package shared

import (
	"bytes"
	"errors"
	"testing"

	"github.com/zkrecipes/zkrecipes/lock"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// Curator's SharedCount writes ByteBuffer.putInt: 4 bytes, big endian.
func TestCountEncoding(t *testing.T) {
	for _, tc := range []struct {
		n    int32
		data []byte
	}{
		{0, []byte{0, 0, 0, 0}},
		{1, []byte{0, 0, 0, 1}},
		{256, []byte{0, 0, 1, 0}},
		{-1, []byte{0xff, 0xff, 0xff, 0xff}},
		{2147483647, []byte{0x7f, 0xff, 0xff, 0xff}},
		{-2147483648, []byte{0x80, 0, 0, 0}},
	} {
		if got := EncodeCount(tc.n); !bytes.Equal(got, tc.data) {
			t.Errorf("EncodeCount(%d) = %x, want %x", tc.n, got, tc.data)
		}
		if got, err := DecodeCount(tc.data); err != nil || got != tc.n {
			t.Errorf("DecodeCount(%x) = %d, %v; want %d", tc.data, got, err, tc.n)
		}
	}
	for _, bad := range [][]byte{nil, {}, {1}, {1, 2, 3}, {1, 2, 3, 4, 5}, make([]byte, 8)} {
		if _, err := DecodeCount(bad); !errors.Is(err, ErrCorrupt) {
			t.Errorf("DecodeCount(%x): %v, want ErrCorrupt", bad, err)
		}
	}
}

func FuzzCount(f *testing.F) {
	f.Add([]byte{0, 0, 0, 7})
	f.Add([]byte{})
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8})
	f.Fuzz(func(t *testing.T, b []byte) {
		n, err := DecodeCount(b)
		if (err == nil) != (len(b) == 4) {
			t.Fatalf("DecodeCount(%x): %v", b, err)
		}
		if err == nil && !bytes.Equal(EncodeCount(n), b) {
			t.Fatalf("round trip of %x gave %x", b, EncodeCount(n))
		}
	})
}

// Curator's DistributedAtomicLong writes ByteBuffer.putLong (8 bytes, big
// endian) and reads empty data as 0.
func TestLongEncoding(t *testing.T) {
	for _, tc := range []struct {
		n    int64
		data []byte
	}{
		{0, []byte{0, 0, 0, 0, 0, 0, 0, 0}},
		{1, []byte{0, 0, 0, 0, 0, 0, 0, 1}},
		{-1, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}},
		{1 << 40, []byte{0, 0, 1, 0, 0, 0, 0, 0}},
	} {
		if got := EncodeLong(tc.n); !bytes.Equal(got, tc.data) {
			t.Errorf("EncodeLong(%d) = %x, want %x", tc.n, got, tc.data)
		}
		if got, err := DecodeLong(tc.data); err != nil || got != tc.n {
			t.Errorf("DecodeLong(%x) = %d, %v", tc.data, got, err)
		}
	}
	if n, err := DecodeLong(nil); n != 0 || err != nil {
		t.Errorf("DecodeLong(empty) = %d, %v; want 0", n, err)
	}
	for _, bad := range [][]byte{{1}, {1, 2, 3, 4}, make([]byte, 9)} {
		if _, err := DecodeLong(bad); !errors.Is(err, ErrCorrupt) {
			t.Errorf("DecodeLong(%x): %v, want ErrCorrupt", bad, err)
		}
	}
}

func FuzzLong(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 7})
	f.Add([]byte{})
	f.Add([]byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, b []byte) {
		n, err := DecodeLong(b)
		if (err == nil) != (len(b) == 0 || len(b) == 8) {
			t.Fatalf("DecodeLong(%x): %v", b, err)
		}
		if err == nil && len(b) == 8 && !bytes.Equal(EncodeLong(n), b) {
			t.Fatalf("round trip of %x gave %x", b, EncodeLong(n))
		}
	})
}

// TestCountNode: a Count is a lock.CountNode: its path and the seed its
// node is created with; a nil Count has neither.
func TestCountNode(t *testing.T) {
	s := new(recipes.Session)
	for _, seed := range []int32{0, 3, -7, 1 << 30} {
		c, err := NewCount(s, "/app/max", seed)
		if err != nil {
			t.Fatal(err)
		}
		var node lock.CountNode = c
		if node.Path() != "/app/max" || node.Seed() != seed {
			t.Errorf("Path, Seed = %q, %d; want /app/max, %d", node.Path(), node.Seed(), seed)
		}
	}
	var nilCount *Count
	if nilCount.Path() != "" || nilCount.Seed() != 0 {
		t.Errorf("nil Count: Path, Seed = %q, %d", nilCount.Path(), nilCount.Seed())
	}
}
