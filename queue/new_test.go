package queue_test

import (
	"errors"
	"testing"

	"github.com/zkrecipes/zkrecipes/queue"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// TestNewValidates: New checks its arguments once and fails with a
// sentinel, returning no Queue. It sends nothing, so an unconnected
// Session serves as a non-nil one.
func TestNewValidates(t *testing.T) {
	s := new(recipes.Session)
	big := make([]byte, recipes.DefaultMaxData+1)
	for _, tc := range []struct {
		name string
		s    *recipes.Session
		path string
		opts []queue.Option
		want []error // nil: success
	}{
		{"fifo", s, "/app/jobs", nil, nil},
		{"root", s, "/", nil, nil},
		{"kazoo", s, "/q/entries", []queue.Option{queue.WithDialect(recipes.Kazoo), queue.WithClaimPath("/q/taken")}, nil},
		{"zero dialect", s, "/q", []queue.Option{queue.WithDialect(recipes.Dialect{})}, nil},
		{"priority", s, "/q", []queue.Option{queue.WithPriority(), nil}, nil},
		{"claim path outside", s, "/q", []queue.Option{queue.WithClaimPath("/claims/q")}, nil},
		{"no data", s, "/q", []queue.Option{queue.WithData(nil)}, nil},
		{"nil session", nil, "/q", nil, []error{recipes.ErrNilSession}},
		{"empty path", s, "", nil, []error{recipes.ErrInvalidPath}},
		{"relative path", s, "q", nil, []error{recipes.ErrInvalidPath}},
		{"reserved path", s, "/zookeeper/q", nil, []error{recipes.ErrInvalidPath}},
		{"bad claim path", s, "/q", []queue.Option{queue.WithClaimPath("taken")}, []error{recipes.ErrInvalidPath}},
		{"root claim path", s, "/q", []queue.Option{queue.WithClaimPath("/")}, []error{recipes.ErrInvalidPath}},
		{"reserved claim path", s, "/q", []queue.Option{queue.WithClaimPath("/zookeeper/taken")}, []error{recipes.ErrInvalidPath}},
		{"claim path is the queue", s, "/q", []queue.Option{queue.WithClaimPath("/q")}, []error{recipes.ErrBadArgument}},
		{"max items zero", s, "/q", []queue.Option{queue.WithMaxItems(0)}, []error{recipes.ErrBadArgument}},
		{"max items negative", s, "/q", []queue.Option{queue.WithMaxItems(-5)}, []error{recipes.ErrBadArgument}},
		{"data too large", s, "/q", []queue.Option{queue.WithData(big)}, []error{recipes.ErrDataTooLarge}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q, err := queue.New(tc.s, tc.path, tc.opts...)
			if len(tc.want) == 0 {
				if err != nil || q == nil {
					t.Fatalf("New = %v, %v; want a Queue", q, err)
				}
				return
			}
			if q != nil {
				t.Errorf("New returned a Queue with error %v", err)
			}
			for _, w := range tc.want {
				if !errors.Is(err, w) {
					t.Errorf("error %v is not %v", err, w)
				}
			}
		})
	}
}
