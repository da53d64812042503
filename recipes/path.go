package recipes

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// DefaultMaxData is the largest request the package sends by default:
// ZooKeeper's default jute.maxbuffer (0xfffff bytes), which the server
// compares with a request's whole encoding (see RequestSize), not only its
// data. A server with another limit can be matched with WithMaxData.
const DefaultMaxData = 0xfffff

// MaxPathLen is the longest path ValidatePath accepts, in bytes: the longest
// whose smallest request (an exists) still fits DefaultMaxData. ZooKeeper
// itself has no such rule, but a longer path can never be sent to a server
// with the default limit: the server would drop the connection.
const MaxPathLen = DefaultMaxData - reqHeaderSize - 4 - readTail

// ValidatePath reports whether p is a valid ZooKeeper path: absolute, no
// empty segment, no trailing slash (except the root "/"), no "." or ".."
// segment, valid UTF-8, at most MaxPathLen bytes (a longer one is also
// ErrDataTooLarge), and none of the
// characters ZooKeeper forbids: NUL, U+0001..U+001F, U+007F..U+009F,
// U+D800..U+F8FF, U+FFF0..U+FFFF, and any character above U+FFFF (the
// server sees those as UTF-16 surrogates, U+D800..U+DFFF, which it
// forbids). The error wraps ErrInvalidPath and names the path (abridged
// when long) and the rule. Pure; no ZooKeeper calls.
func ValidatePath(p string) error {
	bad := func(rule string) error { return fmt.Errorf("%w %q: %s", ErrInvalidPath, abridge(p), rule) }
	switch {
	case p == "":
		return bad("empty")
	case len(p) > MaxPathLen:
		// Also ErrDataTooLarge: no request carrying it can be sent.
		return fmt.Errorf("%w %q: %w: %d bytes, longer than %d", ErrInvalidPath, abridge(p), ErrDataTooLarge, len(p), MaxPathLen)
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
		case r > 0xffff:
			return bad(fmt.Sprintf("forbidden character %U (a UTF-16 surrogate pair to the server)", r))
		}
	}
	return nil
}

// abridge shortens a long path for an error message.
func abridge(p string) string {
	const keep = 64
	if len(p) <= 2*keep {
		return p
	}
	return fmt.Sprintf("%s...(%d bytes)...%s", p[:keep], len(p)-2*keep, p[len(p)-keep:])
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
		return fmt.Errorf("%w %q: reserved /zookeeper tree", ErrInvalidPath, abridge(p))
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

// checkData returns an error wrapping ErrDataTooLarge when data is longer
// than limit bytes (DefaultMaxData when limit <= 0). It is a first check
// only: the server's limit applies to the whole request, so a write must
// also pass CheckRequest or CheckMulti before it is sent. Pure.
func checkData(data []byte, limit int) error {
	if limit <= 0 {
		limit = DefaultMaxData
	}
	if len(data) > limit {
		return fmt.Errorf("%w: %d bytes, server limit %d", ErrDataTooLarge, len(data), limit)
	}
	return nil
}
