package partition_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/zkrecipes/zkrecipes/group"
	"github.com/zkrecipes/zkrecipes/partition"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// TestNewValidates: New checks its arguments before sending anything and
// fails with a sentinel, returning no Partitioner. An unconnected Session
// serves as a non-nil one: nothing reaches it.
func TestNewValidates(t *testing.T) {
	s := new(recipes.Session)
	items := []string{"a", "b"}
	kazoo := partition.WithDialect(recipes.Kazoo)
	for _, tc := range []struct {
		name  string
		s     *recipes.Session
		path  string
		items []string
		opts  []partition.Option
		want  []error
	}{
		{"nil session", nil, "/p", items, nil, []error{recipes.ErrNilSession}},
		{"empty path", s, "", items, nil, []error{recipes.ErrInvalidPath}},
		{"relative path", s, "p", items, nil, []error{recipes.ErrInvalidPath}},
		{"trailing slash", s, "/p/", items, nil, []error{recipes.ErrInvalidPath}},
		{"reserved path", s, "/zookeeper/p", items, nil, []error{recipes.ErrInvalidPath}},
		{"no items", s, "/p", nil, nil, []error{partition.ErrInvalidItems, recipes.ErrBadArgument}},
		{"duplicate item", s, "/p", []string{"a", "b", "a"}, nil, []error{partition.ErrInvalidItems, recipes.ErrBadArgument}},
		{"empty item", s, "/p", []string{"a", ""}, nil, []error{partition.ErrInvalidItems, recipes.ErrInvalidPath}},
		{"item with slash", s, "/p", []string{"a/b"}, nil, []error{partition.ErrInvalidItems, recipes.ErrInvalidPath}},
		{"item dot", s, "/p", []string{"."}, nil, []error{partition.ErrInvalidItems, recipes.ErrInvalidPath}},
		{"item dotdot", s, "/p", []string{".."}, nil, []error{partition.ErrInvalidItems, recipes.ErrInvalidPath}},
		{"item control char", s, "/p", []string{"a\x01"}, nil, []error{partition.ErrInvalidItems, recipes.ErrInvalidPath}},
		{"item too long", s, "/p", []string{strings.Repeat("a", recipes.DefaultMaxData)}, nil, []error{partition.ErrInvalidItems, recipes.ErrInvalidPath}},
		{"empty id", s, "/p", items, []partition.Option{partition.WithID("")}, []error{group.ErrInvalidID, recipes.ErrBadArgument}},
		{"id with slash", s, "/p", items, []partition.Option{partition.WithID("a/b")}, []error{group.ErrInvalidID, recipes.ErrInvalidPath}},
		{"kazoo id with slash", s, "/p", items, []partition.Option{kazoo, partition.WithID("a/b")}, []error{group.ErrInvalidID, recipes.ErrInvalidPath}},
		{"id not UTF-8", s, "/p", items, []partition.Option{partition.WithID("a\xff")}, []error{group.ErrInvalidID, recipes.ErrBadArgument}},
		{"id too long", s, "/p", items, []partition.Option{partition.WithID(strings.Repeat("a", recipes.DefaultMaxData))}, []error{group.ErrInvalidID}},
		{"negative boundary", s, "/p", items, []partition.Option{partition.WithBoundary(-1)}, []error{recipes.ErrBadArgument}},
		{"nil function", s, "/p", items, []partition.Option{partition.WithFunc(nil)}, []error{recipes.ErrBadArgument}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := partition.New(tc.s, tc.path, tc.items, tc.opts...)
			if p != nil || err == nil {
				t.Fatalf("New made a partitioner, error %v", err)
			}
			for _, w := range tc.want {
				if !errors.Is(err, w) {
					t.Errorf("New: error %v is not %v", err, w)
				}
			}
		})
	}
}

// TestNewAccepts: New copies and sorts the items and keeps the id.
func TestNewAccepts(t *testing.T) {
	s := new(recipes.Session)
	items := []string{"q3", "q1", "q2"}
	for _, opts := range [][]partition.Option{nil, {partition.WithDialect(recipes.Kazoo)}} {
		p, err := partition.New(s, "/", items, append(opts, partition.WithID("w-1"), partition.WithBoundary(0), nil)...)
		if err != nil {
			t.Fatal(err)
		}
		items[0] = "changed"
		if got := strings.Join(p.Items(), ","); got != "q1,q2,q3" || p.ID() != "w-1" || p.Path() != "/" {
			t.Errorf("items %s, id %q, path %q", got, p.ID(), p.Path())
		}
		items[0] = "q3"
	}
	p, err := partition.New(s, "/p", items)
	if err != nil || p.ID() != recipes.ProcessID() {
		t.Errorf("default id %q, %v", p.ID(), err)
	}
}

// TestRunBadInput: Run with a nil ctx or on a nil Partitioner returns a
// closed Stream whose Err says why; nothing runs.
func TestRunBadInput(t *testing.T) {
	p, err := partition.New(new(recipes.Session), "/p", []string{"a"})
	if err != nil {
		t.Fatal(err)
	}
	//lint:ignore SA1012 a nil ctx is the bad input under test
	st := p.Run(nil) //nolint:staticcheck
	for range st.C {
		t.Error("sent a partition")
	}
	if err := st.Err(); !errors.Is(err, recipes.ErrBadArgument) {
		t.Errorf("nil ctx: %v", err)
	}
	var nilP *partition.Partitioner
	st = nilP.Run(context.Background())
	for range st.C {
		t.Error("sent a partition")
	}
	if err := st.Err(); !errors.Is(err, partition.ErrNilPartitioner) {
		t.Errorf("nil partitioner: %v", err)
	}
	if nilP.ID() != "" || nilP.Path() != "" || nilP.Items() != nil {
		t.Error("accessors on nil")
	}
}

// TestNilPartition: methods on a nil *Partition say so.
func TestNilPartition(t *testing.T) {
	var p *partition.Partition
	ctx := context.Background()
	if err := p.Release(ctx); !errors.Is(err, partition.ErrNilPartition) {
		t.Errorf("Release: %v", err)
	}
	if _, err := p.FencedMulti(ctx, "a"); !errors.Is(err, partition.ErrNilPartition) {
		t.Errorf("FencedMulti: %v", err)
	}
	if c := context.Cause(p.Context()); !errors.Is(c, partition.ErrNilPartition) {
		t.Errorf("Context: %v", c)
	}
	if p.Items() != nil || p.Members() != nil || p.Fence("a").Valid() {
		t.Error("Items, Members or Fence on nil")
	}
}

// TestCauses: the causes that ask for a release are revocations.
func TestCauses(t *testing.T) {
	for _, err := range []error{partition.ErrRebalance, partition.ErrStopped} {
		if !errors.Is(err, recipes.ErrRevoked) || !strings.HasPrefix(err.Error(), "partition: ") {
			t.Errorf("%v: not a recipes.ErrRevoked", err)
		}
	}
}
