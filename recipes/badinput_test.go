package recipes_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/zkrecipes/recipes"
)

// TestValidatePathServerRules: ValidatePath refuses what ZooKeeper's own
// path check refuses, characters above U+FFFF included (the server sees
// UTF-16 surrogates), and paths too long for any request.
func TestValidatePathServerRules(t *testing.T) {
	for _, tc := range []struct {
		path string
		ok   bool
	}{
		{"/", true},
		{"/a/b", true},
		{"/a.b/..c/...", true},
		{"/é/ü/中文", true},
		{"/\uf900", true},          // just past the private-use range
		{"/\uffef", true},          // just before U+FFF0
		{"/a\U0001F600", false},    // emoji: a surrogate pair in Java
		{"/a/\U00010000/b", false}, // the first supplementary character
		{"/\U0010FFFF", false},     // the last one
		{"/a\x00b", false},         // NUL
		{"/a\x01", false},          // U+0001
		{"/a\x1f", false},          // U+001F
		{"/a\x7f", false},          // U+007F
		{"/a\u0080", false},        // U+0080
		{"/a\u009f", false},        // U+009F
		{"/a\ud7ff", true},         // below the surrogates
		{"/a\ue000", false},        // private use
		{"/a\uf8ff", false},        // last private use
		{"/a\ufff0", false},        // specials
		{"/a\uffff", false},        // last BMP
		{"/a\xff", false},          // not UTF-8
		{"/a\xed\xa0\x80", false},  // an encoded surrogate (CESU-8)
		{"", false},                // empty
		{"a", false},               // relative
		{"/a/", false},             // trailing slash
		{"//a", false},             // empty segment
		{"/a//b", false},           // empty segment
		{"/.", false},              // relative segment
		{"/a/./b", false},          // relative segment
		{"/a/..", false},           // relative segment
		{"/" + strings.Repeat("x", recipes.MaxPathLen-1), true},
		{"/" + strings.Repeat("x", recipes.MaxPathLen), false},
		{"/" + strings.Repeat("x", 1<<20), false},
	} {
		err := recipes.ValidatePath(tc.path)
		if (err == nil) != tc.ok {
			t.Errorf("ValidatePath(%.40q) = %v, want ok=%v", tc.path, err, tc.ok)
		}
		if err != nil && !errors.Is(err, recipes.ErrInvalidPath) {
			t.Errorf("ValidatePath(%.40q) = %v, not ErrInvalidPath", tc.path, err)
		}
		if got, want := javaAccepts(tc.path), tc.ok || len(tc.path) > recipes.MaxPathLen; got != want && utf8.ValidString(tc.path) {
			t.Errorf("reference check of %.40q = %v, want %v", tc.path, got, want)
		}
	}
	long := "/" + strings.Repeat("x", 1<<20)
	if err := recipes.ValidatePath(long); !errors.Is(err, recipes.ErrDataTooLarge) || len(err.Error()) > 400 {
		t.Errorf("1 MB path: %.400v", err)
	}
}

// javaAccepts is an independent transcription of ZooKeeper's
// PathUtils.validatePath rules applied to the path as the server sees it:
// Java chars, UTF-16 code units. It has no length rule.
func javaAccepts(p string) bool {
	u := utf16.Encode([]rune(p))
	n := len(u)
	if n == 0 || u[0] != '/' {
		return false
	}
	if n == 1 {
		return true
	}
	if u[n-1] == '/' {
		return false
	}
	for i := 1; i < n; i++ {
		c, prev := u[i], u[i-1]
		switch {
		case c == 0:
			return false
		case c == '/' && prev == '/':
			return false
		case c == '.' && prev == '.' && u[i-2] == '/' && (i+1 == n || u[i+1] == '/'):
			return false
		case c == '.' && prev == '/' && (i+1 == n || u[i+1] == '/'):
			return false
		case c <= 0x1f, c >= 0x7f && c <= 0x9f, c >= 0xd800 && c <= 0xf8ff, c >= 0xfff0:
			return false
		}
	}
	return true
}

// FuzzValidatePathUTF16: on valid UTF-8, ValidatePath accepts exactly what the
// server's rules accept (up to MaxPathLen); every accepted path, in UTF-16,
// holds no forbidden unit; nothing panics.
func FuzzValidatePathUTF16(f *testing.F) {
	for _, s := range []string{"/", "/a", "/a/b", "/a\U0001F600", "/..", "/a/.b", "/\u0085", "/\uf8ff", "//", "/a/", "/\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		err := recipes.ValidatePath(p)
		if err != nil && !errors.Is(err, recipes.ErrInvalidPath) {
			t.Fatalf("%q: %v does not wrap ErrInvalidPath", p, err)
		}
		if !utf8.ValidString(p) {
			if err == nil {
				t.Fatalf("%q: invalid UTF-8 accepted", p)
			}
			return
		}
		if want := javaAccepts(p) && len(p) <= recipes.MaxPathLen; (err == nil) != want {
			t.Fatalf("%q: ValidatePath = %v, server rules accept = %v", p, err, want)
		}
		if err == nil {
			for _, c := range utf16.Encode([]rune(p)) {
				if c == 0 || c <= 0x1f || (c >= 0x7f && c <= 0x9f) || (c >= 0xd800 && c <= 0xf8ff) || c >= 0xfff0 {
					t.Fatalf("%q accepted, holds %U as UTF-16", p, c)
				}
			}
		}
	})
}

// TestRequestSize: sizes of the frames the server compares with its limit.
func TestRequestSize(t *testing.T) {
	acl := zk.WorldACL(zk.PermAll) // 4 + (4 + 4+5 + 4+6) = 27 bytes
	for _, tc := range []struct {
		name string
		ops  []any // one: sent alone; more: a multi
		want int
	}{
		{"create", []any{&zk.CreateRequest{Path: "/a", Data: []byte("xyz"), Acl: acl}}, 8 + 6 + 7 + 27 + 4},
		{"create, nil data, no ACL", []any{&zk.CreateRequest{Path: "/a"}}, 8 + 6 + 4 + 4 + 4},
		{"setData", []any{&zk.SetDataRequest{Path: "/ab", Data: make([]byte, 10)}}, 8 + 7 + 14 + 4},
		{"delete", []any{&zk.DeleteRequest{Path: "/a"}}, 8 + 6 + 4},
		{"check", []any{&zk.CheckVersionRequest{Path: "/a"}}, 8 + 6 + 4},
		{"multi", []any{&zk.CheckVersionRequest{Path: "/a"}, &zk.DeleteRequest{Path: "/b"}}, 8 + 9 + 10 + 9 + 10 + 9},
	} {
		var got int
		var err error
		if len(tc.ops) == 1 {
			got, err = recipes.RequestSize(tc.ops[0])
		} else {
			got, err = recipes.MultiSize(tc.ops...)
		}
		if err != nil || got != tc.want {
			t.Errorf("%s: %d, %v; want %d", tc.name, got, err, tc.want)
		}
	}
	if got := recipes.ReadSize("/abc"); got != 8+8+1 {
		t.Errorf("ReadSize = %d", got)
	}
	for _, bad := range []any{nil, "create", zk.DeleteRequest{}, &zk.ACL{}} {
		if _, err := recipes.RequestSize(bad); !errors.Is(err, recipes.ErrBadArgument) {
			t.Errorf("RequestSize(%T): %v", bad, err)
		}
	}
	if _, err := recipes.MultiSize(&zk.DeleteRequest{}, nil); !errors.Is(err, recipes.ErrBadArgument) {
		t.Errorf("MultiSize with a nil op: %v", err)
	}
	at := &zk.SetDataRequest{Path: "/a", Data: make([]byte, 100-8-6-4-4)}
	if err := recipes.CheckRequest(100, at); err != nil {
		t.Errorf("at the limit: %v", err)
	}
	at.Data = append(at.Data, 0)
	if err := recipes.CheckRequest(100, at); !errors.Is(err, recipes.ErrDataTooLarge) {
		t.Errorf("one byte over: %v", err)
	}
}

// TestConnectBadServers: an empty or malformed server list fails at once
// with ErrBadArgument; nothing is dialed.
func TestConnectBadServers(t *testing.T) {
	var dials atomic.Int64
	dialer := func(network, addr string, timeout time.Duration) (net.Conn, error) {
		dials.Add(1)
		return nil, errors.New("test: no dialing")
	}
	for _, servers := range [][]string{
		nil, {}, {""}, {"host:"}, {"host:port:extra"}, {":2181"}, {"localhost:99999"}, {"localhost:0"},
		{"localhost:-1"}, {"localhost:2181", ""}, {"[::1]"}, {"::1"}, {"local host:2181"}, {"host:2181/chroot"},
		{"ho\x00st"}, {"[nonsense]:2181"}, {"a..b:2181"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		start := time.Now()
		s, err := recipes.Connect(ctx, servers, recipes.WithDialer(dialer))
		cancel()
		if s != nil {
			_ = s.Close()
		}
		if !errors.Is(err, recipes.ErrBadArgument) || time.Since(start) > time.Second {
			t.Errorf("Connect(%q) = %v after %v, want ErrBadArgument at once", servers, err, time.Since(start))
		}
	}
	if n := dials.Load(); n != 0 {
		t.Errorf("%d dials", n)
	}
}

// TestTypedNilOps: a typed nil request ((*zk.CreateRequest)(nil), ...) is
// refused with ErrBadArgument by every pure size check, alone or in a
// multi, never dereferenced (it panicked before).
func TestTypedNilOps(t *testing.T) {
	for _, op := range []any{
		(*zk.CreateRequest)(nil), (*zk.SetDataRequest)(nil), (*zk.DeleteRequest)(nil), (*zk.CheckVersionRequest)(nil),
	} {
		calls := map[string]func() error{
			"RequestSize":  func() error { _, err := recipes.RequestSize(op); return err },
			"CheckRequest": func() error { return recipes.CheckRequest(0, op) },
			"MultiSize":    func() error { _, err := recipes.MultiSize(&zk.DeleteRequest{Path: "/a"}, op); return err },
			"CheckMulti":   func() error { return recipes.CheckMulti(0, op, &zk.DeleteRequest{Path: "/a"}) },
		}
		for name, call := range calls {
			err := func() (err error) {
				defer func() {
					if r := recover(); r != nil {
						err = fmt.Errorf("panic: %v", r)
					}
				}()
				return call()
			}()
			if !errors.Is(err, recipes.ErrBadArgument) {
				t.Errorf("%s(%T(nil)) = %v, want ErrBadArgument", name, op, err)
			}
		}
	}
}
