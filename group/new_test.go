package group_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/zkrecipes/zkrecipes/group"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// TestJoinValidates: Join checks its arguments before sending anything and
// fails with a sentinel, returning no Member. An unconnected Session serves
// as a non-nil one: nothing reaches it.
func TestJoinValidates(t *testing.T) {
	s := new(recipes.Session)
	ctx := context.Background()
	kazoo := group.WithDialect(recipes.Kazoo)
	shallow := group.WithShallowParty()
	for _, tc := range []struct {
		name string
		s    *recipes.Session
		path string
		id   string
		opts []group.Option
		want []error
	}{
		{"nil session", nil, "/g", "a", nil, []error{recipes.ErrNilSession}},
		{"empty path", s, "", "a", nil, []error{recipes.ErrInvalidPath}},
		{"relative path", s, "g", "a", nil, []error{recipes.ErrInvalidPath}},
		{"reserved path", s, "/zookeeper/g", "a", nil, []error{recipes.ErrInvalidPath}},
		{"empty id", s, "/g", "", nil, []error{group.ErrInvalidID, recipes.ErrBadArgument}},
		{"empty kazoo id", s, "/g", "", []group.Option{kazoo}, []error{group.ErrInvalidID, recipes.ErrBadArgument}},
		{"id with slash", s, "/g", "a/b", nil, []error{group.ErrInvalidID, recipes.ErrInvalidPath}},
		{"id dot", s, "/g", ".", nil, []error{group.ErrInvalidID, recipes.ErrInvalidPath}},
		{"id dotdot", s, "/g", "..", nil, []error{group.ErrInvalidID, recipes.ErrInvalidPath}},
		{"id control char", s, "/g", "a\x01", nil, []error{group.ErrInvalidID, recipes.ErrInvalidPath}},
		{"id not UTF-8", s, "/g", "a\xff", nil, []error{group.ErrInvalidID, recipes.ErrBadArgument}},
		{"kazoo id not UTF-8", s, "/g", "a\xff", []group.Option{kazoo}, []error{group.ErrInvalidID, recipes.ErrBadArgument}},
		{"zookeeper under root", s, "/", "zookeeper", nil, []error{group.ErrInvalidID, recipes.ErrInvalidPath}},
		{"kazoo with data", s, "/g", "a", []group.Option{kazoo, group.WithData([]byte("x"))}, []error{recipes.ErrBadArgument}},
		{"payload too large", s, "/g", "a", []group.Option{group.WithData(make([]byte, recipes.DefaultMaxData))}, []error{recipes.ErrDataTooLarge}},
		{"kazoo id too large", s, "/g", strings.Repeat("a", recipes.DefaultMaxData), []group.Option{kazoo}, []error{recipes.ErrDataTooLarge}},
		{"id too long", s, "/g", strings.Repeat("a", recipes.DefaultMaxData), nil, []error{group.ErrInvalidID, recipes.ErrInvalidPath}},
		{"empty shallow id", s, "/g", "", []group.Option{shallow}, []error{group.ErrInvalidID, recipes.ErrBadArgument}},
		{"shallow id with slash", s, "/g", "a/b", []group.Option{shallow}, []error{group.ErrInvalidID, recipes.ErrInvalidPath}},
		{"shallow id control char", s, "/g", "a\x01", []group.Option{shallow}, []error{group.ErrInvalidID, recipes.ErrInvalidPath}},
		{"shallow id not UTF-8", s, "/g", "a\xff", []group.Option{shallow}, []error{group.ErrInvalidID, recipes.ErrBadArgument}},
		{"shallow id too long", s, "/g", strings.Repeat("a", recipes.DefaultMaxData), []group.Option{shallow}, []error{group.ErrInvalidID, recipes.ErrInvalidPath}},
		{"shallow with data", s, "/g", "a", []group.Option{shallow, group.WithData([]byte("x"))}, []error{recipes.ErrBadArgument}},
		{"shallow overrides the dialect", s, "/g", "a/b", []group.Option{shallow, group.WithDialect(recipes.Curator)}, []error{group.ErrInvalidID, recipes.ErrInvalidPath}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if len(tc.want) > 0 && errors.Is(tc.want[0], group.ErrInvalidID) {
				// ValidateID says what Join says of the id, sending nothing.
				err := group.ValidateID(tc.path, tc.id, tc.opts...)
				for _, w := range tc.want {
					if !errors.Is(err, w) {
						t.Errorf("ValidateID: error %v is not %v", err, w)
					}
				}
			}
			m, err := group.Join(ctx, tc.s, tc.path, tc.id, tc.opts...)
			if m != nil {
				t.Errorf("Join made a member with error %v", err)
			}
			for _, w := range tc.want {
				if !errors.Is(err, w) {
					t.Errorf("Join: error %v is not %v", err, w)
				}
			}
		})
	}
}

// TestValidateIDAccepts: ids every layout takes, and those only the kazoo
// Party takes (its id is data, not a name).
func TestValidateIDAccepts(t *testing.T) {
	for _, id := range []string{"a", "worker-1", "host:1234", "a.b", "ü"} {
		for _, opts := range [][]group.Option{nil, {group.WithDialect(recipes.Kazoo)}, {group.WithShallowParty()}} {
			if err := group.ValidateID("/g", id, opts...); err != nil {
				t.Errorf("ValidateID(%q, %d options): %v", id, len(opts), err)
			}
		}
	}
	for _, id := range []string{"a/b", ".", "..", "a\x01"} {
		if err := group.ValidateID("/g", id, group.WithDialect(recipes.Kazoo)); err != nil {
			t.Errorf("ValidateID(%q) in kazoo's Party layout: %v", id, err)
		}
	}
	// A ShallowParty member's name starts with 33 characters of its own.
	if err := group.ValidateID("/g", ".", group.WithShallowParty()); err != nil {
		t.Errorf("ValidateID(\".\") in the ShallowParty layout: %v", err)
	}
}

// TestListValidates: Members and Watch refuse a nil session and an
// invalid path at once; Watch's C is then closed and Err says why.
func TestListValidates(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		s    *recipes.Session
		path string
		want error
	}{
		{nil, "/g", recipes.ErrNilSession},
		{new(recipes.Session), "", recipes.ErrInvalidPath},
		{new(recipes.Session), "/g/", recipes.ErrInvalidPath},
	} {
		if _, err := group.Members(ctx, tc.s, tc.path); !errors.Is(err, tc.want) {
			t.Errorf("Members(%q): %v, want %v", tc.path, err, tc.want)
		}
		w := group.Watch(ctx, tc.s, tc.path)
		for range w.C {
			t.Errorf("Watch(%q) sent a snapshot", tc.path)
		}
		if err := w.Err(); !errors.Is(err, tc.want) {
			t.Errorf("Watch(%q): %v, want %v", tc.path, err, tc.want)
		}
	}
}

// TestNilMember: methods on a nil *Member say so.
func TestNilMember(t *testing.T) {
	var m *group.Member
	ctx := context.Background()
	if err := m.Leave(ctx); !errors.Is(err, group.ErrNilMember) {
		t.Errorf("Leave: %v", err)
	}
	if err := m.Update(ctx, nil); !errors.Is(err, group.ErrNilMember) {
		t.Errorf("Update: %v", err)
	}
	if c := context.Cause(m.Present()); !errors.Is(c, group.ErrNilMember) {
		t.Errorf("Present: %v", c)
	}
	if m.ID() != "" || m.Path() != "" || m.Data() != nil {
		t.Error("ID, Path or Data on nil")
	}
}

// TestSnapshot: IDs and Get.
func TestSnapshot(t *testing.T) {
	s := group.Snapshot{{ID: "a", Node: "/g/a"}, {ID: "b", Node: "/g/x"}, {ID: "b", Node: "/g/y"}}
	if got := strings.Join(s.IDs(), ","); got != "a,b,b" {
		t.Errorf("IDs = %s", got)
	}
	if i, ok := s.Get("b"); !ok || i.Node != "/g/x" {
		t.Errorf("Get(b) = %v, %v", i, ok)
	}
	if _, ok := s.Get("c"); ok {
		t.Error("Get(c) found")
	}
	if got := group.Snapshot(nil).IDs(); len(got) != 0 {
		t.Errorf("IDs of nil = %v", got)
	}
}
