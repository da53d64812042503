package recipes_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/zkrecipes/recipes"
)

// typedNilOps are nil pointers of every request type FencedMulti takes.
var typedNilOps = []any{
	(*zk.CreateRequest)(nil), (*zk.SetDataRequest)(nil), (*zk.DeleteRequest)(nil), (*zk.CheckVersionRequest)(nil),
}

// noPanic runs f and turns a panic into an error.
func noPanic(f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	return f()
}

// TestFencedMultiTypedNilOp: FencedMulti, of package recipes and of a
// holding, refuses a typed nil op ((*zk.SetDataRequest)(nil), ...) with
// ErrBadArgument, beside valid ops or alone, and sends nothing (counted on
// the wire). It panicked before (nil pointer dereference).
func TestFencedMultiTypedNilOp(t *testing.T) {
	e := ensemble(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, counter := countedSession(t, e.Addrs())
	h, err := recipes.Acquire(ctx, s, recipes.Spec{Path: testPath(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = h.Release(context.Background()) }()
	valid := &zk.SetDataRequest{Path: h.Path(), Version: -1}
	before := counter.Snapshot()
	for _, op := range typedNilOps {
		for name, call := range map[string]func() error{
			"recipes.FencedMulti": func() error { _, err := recipes.FencedMulti(ctx, s, h.Fence(), op); return err },
			"Holding.FencedMulti": func() error { _, err := h.FencedMulti(ctx, valid, op); return err },
		} {
			if err := noPanic(call); !errors.Is(err, recipes.ErrBadArgument) {
				t.Errorf("%s(%T(nil)) = %v, want ErrBadArgument", name, op, err)
			}
		}
	}
	if d := counter.Snapshot().Sub(before); d.Total() != 0 {
		t.Errorf("refused calls sent %v", d.Requests)
	}
}
