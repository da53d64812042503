package zkpath

import "testing"

func TestSplitJoin(t *testing.T) {
	for _, tt := range []struct{ p, parent, name string }{
		{"/a", "/", "a"}, {"/a/b", "/a", "b"}, {"/", "/", ""}, {"/a/b/c", "/a/b", "c"},
		{"/a/b.c", "/a", "b.c"}, {"/\u00e9/x", "/\u00e9", "x"},
	} {
		parent, name := Split(tt.p)
		if parent != tt.parent || name != tt.name {
			t.Errorf("Split(%q) = %q, %q; want %q, %q", tt.p, parent, name, tt.parent, tt.name)
		}
		if tt.p != "/" && Join(parent, name) != tt.p {
			t.Errorf("Join(Split(%q)) = %q", tt.p, Join(parent, name))
		}
	}
	for _, tt := range []struct{ parent, child, want string }{
		{"/", "x", "/x"}, {"/a", "x", "/a/x"}, {"/a/b", "c-0000000001", "/a/b/c-0000000001"},
	} {
		if got := Join(tt.parent, tt.child); got != tt.want {
			t.Errorf("Join(%q, %q) = %q, want %q", tt.parent, tt.child, got, tt.want)
		}
	}
}

func FuzzSplitJoin(f *testing.F) {
	for _, s := range []string{"/", "/a", "/a/b", "/a/b/c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		if len(p) < 2 || p[0] != '/' || p[len(p)-1] == '/' {
			return // Split is defined on valid paths other than the root
		}
		parent, name := Split(p)
		if Join(parent, name) != p {
			t.Fatalf("Join(Split(%q)) = %q (%q, %q)", p, Join(parent, name), parent, name)
		}
	})
}
