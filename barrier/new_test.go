package barrier_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/zkrecipes/zkrecipes/barrier"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// TestNewValidates: New and NewDouble check their arguments once and fail
// with a sentinel, returning no value. They send nothing, so an
// unconnected Session serves as a non-nil one.
func TestNewValidates(t *testing.T) {
	s := new(recipes.Session)
	// A create of a path of n bytes, no data and no ACL (s has none) is
	// n+24 bytes on the wire. long fits ValidatePath but not a create;
	// member fits the barrier's create but not a member's, whose path is
	// 37 bytes longer.
	long := "/" + strings.Repeat("a", recipes.DefaultMaxData-21)
	member := "/" + strings.Repeat("a", recipes.DefaultMaxData-51)
	for _, tc := range []struct {
		name   string
		s      *recipes.Session
		path   string
		n      int
		opts   []barrier.Option
		single []error // New's; nil: success
		double []error // NewDouble's; nil: success
	}{
		{"valid", s, "/app/round", 3, nil, nil, nil},
		{"one member", s, "/app/round", 1, nil, nil, nil},
		{"kazoo", s, "/app/round", 3, []barrier.Option{barrier.WithDialect(recipes.Kazoo), nil}, nil, nil},
		{"nil session", nil, "/app", 3, nil, []error{recipes.ErrNilSession}, []error{recipes.ErrNilSession}},
		{"no member", s, "/app", 0, nil, nil, []error{barrier.ErrMembers, recipes.ErrBadArgument}},
		{"negative", s, "/app", -2, nil, nil, []error{barrier.ErrMembers, recipes.ErrBadArgument}},
		{"empty path", s, "", 3, nil, []error{recipes.ErrInvalidPath}, []error{recipes.ErrInvalidPath}},
		{"root", s, "/", 3, nil, []error{recipes.ErrInvalidPath}, []error{recipes.ErrInvalidPath}},
		{"relative", s, "app", 3, nil, []error{recipes.ErrInvalidPath}, []error{recipes.ErrInvalidPath}},
		{"reserved", s, "/zookeeper/b", 3, nil, []error{recipes.ErrInvalidPath}, []error{recipes.ErrInvalidPath}},
		{"create too large", s, long, 3, nil, []error{recipes.ErrDataTooLarge}, []error{recipes.ErrDataTooLarge}},
		{"member too large", s, member, 3, nil, nil, []error{recipes.ErrDataTooLarge}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := barrier.New(tc.s, tc.path)
			check(t, "New", b != nil, err, tc.single)
			d, err := barrier.NewDouble(tc.s, tc.path, tc.n, tc.opts...)
			check(t, "NewDouble", d != nil, err, tc.double)
		})
	}
}

func check(t *testing.T, name string, made bool, err error, want []error) {
	t.Helper()
	if len(want) == 0 {
		if err != nil || !made {
			t.Errorf("%s: %v, made %v; want a value", name, err, made)
		}
		return
	}
	if made {
		t.Errorf("%s made a value with error %v", name, err)
	}
	for _, w := range want {
		if !errors.Is(err, w) {
			t.Errorf("%s: error %v is not %v", name, err, w)
		}
	}
}
