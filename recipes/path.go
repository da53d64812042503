package recipes

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// DefaultMaxData is the largest node data the package sends by default:
// ZooKeeper's default jute.maxbuffer (0xfffff bytes). A server with a larger
// limit can be matched with WithMaxData.
const DefaultMaxData = 0xfffff

// ValidatePath reports whether p is a valid ZooKeeper path: absolute, no
// empty segment, no trailing slash (except the root "/"), no "." or ".."
// segment, no NUL and none of the characters ZooKeeper forbids
// (U+0001..U+001F, U+007F..U+009F, U+D800..U+F8FF, U+FFF0..U+FFFF). The
// error wraps ErrInvalidPath and names the path and the rule. Pure; no
// ZooKeeper calls.
func ValidatePath(p string) error {
	bad := func(rule string) error { return fmt.Errorf("%w %q: %s", ErrInvalidPath, p, rule) }
	switch {
	case p == "":
		return bad("empty")
	case p[0] != '/':
		return bad("not absolute")
	case p == "/":
		return nil
	case strings.HasSuffix(p, "/"):
		return bad("trailing slash")
	case !utf8.ValidString(p):
		return bad("not valid UTF-8")
	}
	for _, seg := range strings.Split(p[1:], "/") {
		switch seg {
		case "":
			return bad("empty segment")
		case ".", "..":
			return bad("relative segment " + seg)
		}
	}
	for _, r := range p {
		switch {
		case r == 0:
			return bad("contains NUL")
		case r <= 0x1f, r >= 0x7f && r <= 0x9f, r >= 0xd800 && r <= 0xf8ff, r >= 0xfff0 && r <= 0xffff:
			return bad(fmt.Sprintf("forbidden character %U", r))
		}
	}
	return nil
}

// ValidateWritePath is ValidatePath plus the rule for writes: not the root
// and not /zookeeper or anything under it (ZooKeeper's reserved tree).
func ValidateWritePath(p string) error {
	if err := ValidatePath(p); err != nil {
		return err
	}
	if p == "/" {
		return fmt.Errorf("%w %q: root cannot be written", ErrInvalidPath, p)
	}
	if p == "/zookeeper" || strings.HasPrefix(p, "/zookeeper/") {
		return fmt.Errorf("%w %q: reserved /zookeeper tree", ErrInvalidPath, p)
	}
	return nil
}

// ValidateParentPath validates a path under which recipes create children
// (a lock or semaphore path): the root is allowed, /zookeeper is not.
func ValidateParentPath(p string) error {
	if p == "/" {
		return nil
	}
	return ValidateWritePath(p)
}

// JoinPath joins a parent path and a child name.
func JoinPath(parent, child string) string {
	if parent == "/" {
		return "/" + child
	}
	return parent + "/" + child
}

// SplitPath returns the parent and the last segment of a valid path; the
// root's parent is "/" and its name is "".
func SplitPath(p string) (parent, name string) {
	i := strings.LastIndexByte(p, '/')
	if i <= 0 {
		return "/", p[min(len(p), 1):]
	}
	return p[:i], p[i+1:]
}

// CheckData returns an error wrapping ErrDataTooLarge when data is longer
// than limit bytes (DefaultMaxData when limit <= 0).
func CheckData(data []byte, limit int) error {
	if limit <= 0 {
		limit = DefaultMaxData
	}
	if len(data) > limit {
		return fmt.Errorf("%w: %d bytes, server limit %d", ErrDataTooLarge, len(data), limit)
	}
	return nil
}
