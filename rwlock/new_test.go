package rwlock_test

import (
	"errors"
	"testing"

	"github.com/zkrecipes/zkrecipes/recipes"
	"github.com/zkrecipes/zkrecipes/rwlock"
)

// TestNewValidates: New checks its arguments once and fails with a
// sentinel, returning no RWMutex. It sends nothing, so an unconnected
// Session serves as a non-nil one.
func TestNewValidates(t *testing.T) {
	s := new(recipes.Session)
	big := make([]byte, recipes.DefaultMaxData+1)
	for _, tc := range []struct {
		name string
		path string
		s    *recipes.Session
		opts []rwlock.Option
		want []error // nil: success
	}{
		{"curator", "/a/b", s, nil, nil},
		{"root", "/", s, nil, nil},
		{"kazoo", "/a", s, []rwlock.Option{rwlock.WithDialect(recipes.Kazoo)}, nil},
		{"kazoo text order", "/a", s, []rwlock.Option{rwlock.WithDialect(recipes.Kazoo.TextOrder())}, nil},
		// A zero Option changes nothing.
		{"options and a zero one", "/a", s, []rwlock.Option{rwlock.WithData([]byte("me")), rwlock.WithRevocation(), {}}, nil},
		{"nil session", "/a", nil, nil, []error{recipes.ErrNilSession}},
		{"empty path", "", s, nil, []error{recipes.ErrInvalidPath}},
		{"relative path", "a", s, nil, []error{recipes.ErrInvalidPath}},
		{"dot segment", "/a/./b", s, nil, []error{recipes.ErrInvalidPath}},
		{"reserved path", "/zookeeper", s, nil, []error{recipes.ErrInvalidPath}},
		{"data too large", "/a", s, []rwlock.Option{rwlock.WithData(big)}, []error{recipes.ErrDataTooLarge}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := rwlock.New(tc.s, tc.path, tc.opts...)
			if len(tc.want) == 0 {
				if err != nil || m == nil {
					t.Fatalf("New = %v, %v; want an RWMutex", m, err)
				}
				if m.Path() != tc.path {
					t.Errorf("Path() = %q, want %q", m.Path(), tc.path)
				}
				return
			}
			if m != nil {
				t.Errorf("New returned an RWMutex with error %v", err)
			}
			for _, w := range tc.want {
				if !errors.Is(err, w) {
					t.Errorf("error %v is not %v", err, w)
				}
			}
		})
	}
}
