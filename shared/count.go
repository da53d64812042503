package shared

import (
	"context"
	"encoding/binary"
	"fmt"

	"github.com/zkrecipes/zkrecipes/lock"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// Count is a 32-bit integer shared through one persistent node: Curator's
// SharedCount, whose node holds the int as 4 bytes, big endian. Its methods
// are those of Value, on int32. A node whose data is not 4 bytes long makes
// them fail with ErrCorrupt (and ends a Watch).
//
// A Count is what a count-based lock.Semaphore takes its maximum from
// (lock.NewSemaphoreCount; lock.CountNode is Path and Seed), as Curator's
// InterProcessSemaphoreV2 takes a SharedCountReader.
//
// A Count is safe for concurrent use.
type Count struct{ v *Value }

var _ lock.CountNode = (*Count)(nil)

// NewCount returns the shared count at path, seeded with seed. It fails as
// NewValue does.
func NewCount(s *recipes.Session, path string, seed int32) (*Count, error) {
	v, err := NewValue(s, path, EncodeCount(seed))
	if err != nil {
		return nil, err
	}
	return &Count{v: v}, nil
}

// EncodeCount returns n as a Count's node holds it: 4 bytes, big endian.
// Pure.
func EncodeCount(n int32) []byte {
	return binary.BigEndian.AppendUint32(nil, uint32(n))
}

// DecodeCount reads a Count's node data; anything but 4 bytes is
// ErrCorrupt. Pure.
func DecodeCount(b []byte) (int32, error) {
	if len(b) != 4 {
		return 0, fmt.Errorf("%w: %d bytes", ErrCorrupt, len(b))
	}
	return int32(binary.BigEndian.Uint32(b)), nil
}

// Seed returns the count the node is created with when it is missing (0
// on a nil Count).
func (c *Count) Seed() int32 {
	if c == nil {
		return 0
	}
	n, _ := DecodeCount(c.v.seed)
	return n
}

// Path returns the node's path.
func (c *Count) Path() string {
	if c == nil {
		return ""
	}
	return c.v.path
}

func (c *Count) value() *Value {
	if c == nil {
		return nil
	}
	return c.v
}

func decoded(r Versioned[[]byte], ok bool, err error) (Versioned[int32], bool, error) {
	if err != nil {
		return Versioned[int32]{}, false, err
	}
	n, err := DecodeCount(r.Value)
	if err != nil {
		return Versioned[int32]{}, false, err
	}
	return Versioned[int32]{Value: n, Version: r.Version, Zxid: r.Zxid}, ok, nil
}

// Get returns the current count; costs as Value.Get.
func (c *Count) Get(ctx context.Context) (Versioned[int32], error) {
	r, err := c.value().Get(ctx)
	n, _, err := decoded(r, true, err)
	return n, err
}

// TrySet writes next only if the node is still at prev.Version (never -1:
// recipes.ErrBadArgument); see Value.TrySet.
func (c *Count) TrySet(ctx context.Context, prev Versioned[int32], next int32) (Versioned[int32], bool, error) {
	return decoded(c.value().set(ctx, prev.Version, compareAndSet, EncodeCount(next)))
}

// Set writes next whatever the current version; see Value.Set.
func (c *Count) Set(ctx context.Context, next int32) (Versioned[int32], error) {
	n, _, err := decoded(c.value().set(ctx, anyVersion, blindSet, EncodeCount(next)))
	return n, err
}

// FencedTrySet is TrySet committed only while h is held; see
// Value.FencedTrySet.
func (c *Count) FencedTrySet(ctx context.Context, h Fencer, prev Versioned[int32], next int32) (Versioned[int32], bool, error) {
	return decoded(c.value().FencedTrySet(ctx, h, Versioned[[]byte]{Version: prev.Version}, EncodeCount(next)))
}

// Watch streams the count as Value.Watch does.
func (c *Count) Watch(ctx context.Context) *recipes.Stream[Versioned[int32]] {
	return watch(ctx, c.value(), DecodeCount)
}
