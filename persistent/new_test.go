package persistent_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/zkrecipes/zkrecipes/persistent"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// TestNewValidates: New checks its arguments once and fails with a
// sentinel, returning no value. It sends nothing, so an unconnected Session
// serves as a non-nil one.
func TestNewValidates(t *testing.T) {
	s := new(recipes.Session)
	// A create of a path of n bytes, d bytes of data and no ACL (s has
	// none) is n+d+24 bytes on the wire (ephemeral or not).
	long := "/" + strings.Repeat("a", recipes.DefaultMaxData-24)
	protectedLong := "/" + strings.Repeat("a", recipes.DefaultMaxData-24-50)
	for _, tc := range []struct {
		name string
		s    *recipes.Session
		path string
		opts []persistent.Option
		want []error // nil: success
	}{
		{"plain", s, "/app/members/a", nil, nil},
		{"protected", s, "/app/members/a", []persistent.Option{persistent.WithProtected()}, nil},
		{"nil option", s, "/app/x", []persistent.Option{nil, persistent.WithData(nil)}, nil},
		{"under root", s, "/x", nil, nil},
		{"nil session", nil, "/app/x", nil, []error{recipes.ErrNilSession}},
		{"empty path", s, "", nil, []error{recipes.ErrInvalidPath}},
		{"root", s, "/", nil, []error{recipes.ErrInvalidPath}},
		{"relative", s, "app/x", nil, []error{recipes.ErrInvalidPath}},
		{"trailing slash", s, "/app/x/", nil, []error{recipes.ErrInvalidPath}},
		{"reserved", s, "/zookeeper/x", nil, []error{recipes.ErrInvalidPath}},
		{"bad char", s, "/app/\x01", nil, []error{recipes.ErrInvalidPath}},
		{"data too large", s, "/app/x", []persistent.Option{persistent.WithData(make([]byte, recipes.DefaultMaxData))}, []error{recipes.ErrDataTooLarge}},
		{"path fits plain", s, long[:len(long)-60], nil, nil},
		{"path too large", s, long + "aaaa", nil, []error{recipes.ErrDataTooLarge}},
		{"protected name too large", s, protectedLong + strings.Repeat("a", 30), []persistent.Option{persistent.WithProtected(), persistent.WithData(nil)}, []error{recipes.ErrDataTooLarge}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, err := persistent.New(tc.s, tc.path, tc.opts...)
			if len(tc.want) == 0 {
				if err != nil || n == nil {
					t.Fatalf("New: %v, node %v; want a node", err, n)
				}
				return
			}
			if n != nil {
				t.Errorf("New made a node with error %v", err)
			}
			for _, w := range tc.want {
				if !errors.Is(err, w) {
					t.Errorf("New: error %v is not %v", err, w)
				}
			}
		})
	}
}

// TestBeforeStart: a Node that was never started sends nothing: Present is
// done (ErrNotStarted), SetData only records, Leave returns nil, and after
// Leave every method says so. A nil *Node answers ErrNilNode.
func TestBeforeStart(t *testing.T) {
	ctx := context.Background()
	n, err := persistent.New(new(recipes.Session), "/app/x", persistent.WithData([]byte("a")))
	if err != nil {
		t.Fatal(err)
	}
	if got := n.Path(); got != "/app/x" {
		t.Errorf("Path = %q", got)
	}
	if p := n.Present(); p.Err() == nil || !errors.Is(context.Cause(p), persistent.ErrNotStarted) {
		t.Errorf("Present before Start: %v", context.Cause(p))
	}
	if err := n.SetData(ctx, []byte("b")); err != nil {
		t.Errorf("SetData before Start: %v", err)
	}
	if got := string(n.Data()); got != "b" {
		t.Errorf("Data = %q", got)
	}
	if err := n.SetData(ctx, make([]byte, recipes.DefaultMaxData)); !errors.Is(err, recipes.ErrDataTooLarge) {
		t.Errorf("SetData too large: %v", err)
	}
	if got := string(n.Data()); got != "b" {
		t.Errorf("Data after a refused SetData = %q", got)
	}
	done, cancel := context.WithCancel(ctx)
	cancel()
	if err := n.SetData(done, []byte("c")); !errors.Is(err, context.Canceled) {
		t.Errorf("SetData with a done ctx: %v", err)
	}
	if err := n.Start(done); !errors.Is(err, context.Canceled) {
		t.Errorf("Start with a done ctx: %v", err)
	}
	if got := string(n.Data()); got != "b" {
		t.Errorf("a done ctx recorded data: %q", got)
	}
	if err := n.Leave(ctx); err != nil {
		t.Errorf("Leave: %v", err)
	}
	if err := n.Leave(ctx); err != nil {
		t.Errorf("Leave again: %v", err)
	}
	if err := n.Start(ctx); !errors.Is(err, persistent.ErrClosed) {
		t.Errorf("Start after Leave: %v", err)
	}
	if err := n.SetData(ctx, nil); !errors.Is(err, persistent.ErrClosed) {
		t.Errorf("SetData after Leave: %v", err)
	}
	if c := context.Cause(n.Present()); !errors.Is(c, recipes.ErrReleased) {
		t.Errorf("Present after Leave: %v", c)
	}

	p, err := persistent.New(new(recipes.Session), "/app/y", persistent.WithProtected())
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Path(); got != "" {
		t.Errorf("protected Path before Start = %q", got)
	}

	var nilNode *persistent.Node
	if err := nilNode.Start(ctx); !errors.Is(err, persistent.ErrNilNode) {
		t.Errorf("Start on nil: %v", err)
	}
	if err := nilNode.SetData(ctx, nil); !errors.Is(err, persistent.ErrNilNode) {
		t.Errorf("SetData on nil: %v", err)
	}
	if err := nilNode.Leave(ctx); !errors.Is(err, persistent.ErrNilNode) {
		t.Errorf("Leave on nil: %v", err)
	}
	if c := context.Cause(nilNode.Present()); !errors.Is(c, persistent.ErrNilNode) {
		t.Errorf("Present on nil: %v", c)
	}
	if nilNode.Path() != "" || nilNode.Data() != nil {
		t.Error("Path or Data on nil")
	}
}
