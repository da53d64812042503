package lock_test

import (
	"errors"
	"testing"

	"github.com/zkrecipes/zkrecipes/lock"
	"github.com/zkrecipes/zkrecipes/recipes"
	"github.com/zkrecipes/zkrecipes/shared"
)

// TestNewValidates: New and NewSemaphore check their arguments once and
// fail with a sentinel, returning no value; valid arguments give a value.
// The constructors send nothing, so an unconnected Session serves as a
// non-nil one.
func TestNewValidates(t *testing.T) {
	s := new(recipes.Session)
	big := make([]byte, recipes.DefaultMaxData+1)
	for i := range big {
		big[i] = 'a'
	}
	for _, tc := range []struct {
		name string
		new  func() (any, error)
		want []error // nil: success
	}{
		{"mutex", func() (any, error) { return lock.New(s, "/a/b") }, nil},
		{"mutex at root", func() (any, error) { return lock.New(s, "/") }, nil},
		{"mutex kazoo", func() (any, error) { return lock.New(s, "/a", lock.WithDialect(recipes.Kazoo)) }, nil},
		{"mutex zero dialect", func() (any, error) { return lock.New(s, "/a", lock.WithDialect(recipes.Dialect{})) }, nil},
		{"mutex zero option", func() (any, error) { return lock.New(s, "/a", lock.Option{}, lock.WithRevocation()) }, nil},
		{"mutex no data", func() (any, error) { return lock.New(s, "/a", lock.WithData(nil)) }, nil},
		{"mutex nil session", func() (any, error) { return lock.New(nil, "/a") }, []error{recipes.ErrNilSession}},
		{"mutex empty path", func() (any, error) { return lock.New(s, "") }, []error{recipes.ErrInvalidPath}},
		{"mutex relative path", func() (any, error) { return lock.New(s, "a/b") }, []error{recipes.ErrInvalidPath}},
		{"mutex trailing slash", func() (any, error) { return lock.New(s, "/a/") }, []error{recipes.ErrInvalidPath}},
		{"mutex reserved path", func() (any, error) { return lock.New(s, "/zookeeper/a") }, []error{recipes.ErrInvalidPath}},
		{"mutex data too large", func() (any, error) { return lock.New(s, "/a", lock.WithData(big)) }, []error{recipes.ErrDataTooLarge}},
		{"semaphore", func() (any, error) { return lock.NewSemaphore(s, "/a", 1) }, nil},
		{"semaphore text order", func() (any, error) {
			return lock.NewSemaphore(s, "/a", 3, lock.WithDialect(recipes.Curator.TextOrder()))
		}, nil},
		{"semaphore selector", func() (any, error) {
			return lock.NewSemaphore(s, "/a", 3, lock.WithDialect(recipes.CuratorSelector))
		}, nil},
		{"semaphore no lease", func() (any, error) { return lock.NewSemaphore(s, "/a", 0) }, []error{lock.ErrPermits, recipes.ErrBadArgument}},
		{"semaphore negative", func() (any, error) { return lock.NewSemaphore(s, "/a", -1) }, []error{lock.ErrPermits, recipes.ErrBadArgument}},
		{"semaphore kazoo", func() (any, error) {
			return lock.NewSemaphore(s, "/a", 1, lock.WithDialect(recipes.Kazoo))
		}, []error{lock.ErrDialect, recipes.ErrBadArgument}},
		{"semaphore nil session", func() (any, error) { return lock.NewSemaphore(nil, "/a", 1) }, []error{recipes.ErrNilSession}},
		{"semaphore bad path", func() (any, error) { return lock.NewSemaphore(s, "/a//b", 1) }, []error{recipes.ErrInvalidPath}},
		{"semaphore data too large", func() (any, error) {
			return lock.NewSemaphore(s, "/a", 1, lock.WithData(big))
		}, []error{recipes.ErrDataTooLarge}},
		{"count semaphore", func() (any, error) { return lock.NewSemaphoreCount(s, "/a", countStub{"/a-max", 3}) }, nil},
		{"count semaphore, shared.Count", func() (any, error) {
			c, err := shared.NewCount(s, "/a-max", 3)
			if err != nil {
				return nil, err
			}
			return lock.NewSemaphoreCount(s, "/a", c)
		}, nil},
		{"count semaphore nil count", func() (any, error) { return lock.NewSemaphoreCount(s, "/a", nil) }, []error{recipes.ErrBadArgument}},
		{"count semaphore nil shared.Count", func() (any, error) {
			return lock.NewSemaphoreCount(s, "/a", (*shared.Count)(nil))
		}, []error{recipes.ErrInvalidPath}},
		{"count semaphore bad count path", func() (any, error) { return lock.NewSemaphoreCount(s, "/a", countStub{"a-max", 3}) }, []error{recipes.ErrInvalidPath}},
		{"count semaphore reserved count path", func() (any, error) {
			return lock.NewSemaphoreCount(s, "/a", countStub{"/zookeeper/max", 3})
		}, []error{recipes.ErrInvalidPath}},
		{"count semaphore count path too long", func() (any, error) {
			return lock.NewSemaphoreCount(s, "/a", countStub{"/" + string(big), 3})
		}, []error{recipes.ErrDataTooLarge}},
		{"count semaphore kazoo", func() (any, error) {
			return lock.NewSemaphoreCount(s, "/a", countStub{"/a-max", 3}, lock.WithDialect(recipes.Kazoo))
		}, []error{lock.ErrDialect, recipes.ErrBadArgument}},
		{"count semaphore nil session", func() (any, error) { return lock.NewSemaphoreCount(nil, "/a", countStub{"/a-max", 3}) }, []error{recipes.ErrNilSession}},
		{"count semaphore bad path", func() (any, error) { return lock.NewSemaphoreCount(s, "a", countStub{"/a-max", 3}) }, []error{recipes.ErrInvalidPath}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, err := tc.new()
			checkNew(t, v, err, tc.want)
		})
	}
}

// countStub is a lock.CountNode.
type countStub struct {
	path string
	seed int32
}

func (c countStub) Path() string { return c.path }
func (c countStub) Seed() int32  { return c.seed }

// TestPath: Path returns the path given to the constructor.
func TestPath(t *testing.T) {
	s := new(recipes.Session)
	m, err := lock.New(s, "/a/mutex")
	if err != nil || m.Path() != "/a/mutex" {
		t.Errorf("Mutex.Path() = %q (%v), want /a/mutex", m.Path(), err)
	}
	sem, err := lock.NewSemaphore(s, "/a/sem", 2)
	if err != nil || sem.Path() != "/a/sem" {
		t.Errorf("Semaphore.Path() = %q (%v), want /a/sem", sem.Path(), err)
	}
}

// checkNew checks a constructor's result: a value and no error when want
// is empty, else no value and an error that errors.Is every sentinel of
// want.
func checkNew(t *testing.T, v any, err error, want []error) {
	t.Helper()
	if len(want) == 0 {
		if err != nil || isNil(v) {
			t.Fatalf("got %v, %v; want a value", v, err)
		}
		return
	}
	if !isNil(v) {
		t.Errorf("got a value with error %v", err)
	}
	for _, w := range want {
		if !errors.Is(err, w) {
			t.Errorf("error %v is not %v", err, w)
		}
	}
}

func isNil(v any) bool {
	switch v := v.(type) {
	case *lock.Mutex:
		return v == nil
	case *lock.Semaphore:
		return v == nil
	}
	return v == nil
}
