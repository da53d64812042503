//go:build zkrecipes_hooks

package recipes

import (
	"context"
	"errors"
	"testing"

	"github.com/zkrecipes/zkrecipes/internal/hooks"
)

// TestAccessorsRefuseOtherValues: the internal/hooks accessors, given
// anything but a *Session (nil included), return zero values and, for
// FindOwn, ErrNilSession; nothing panics.
func TestAccessorsRefuseOtherValues(t *testing.T) {
	for _, s := range []any{nil, (*Session)(nil), "not a session", 42} {
		p, found, err := hooks.FindOwn(context.Background(), s, "/p", "guid")
		if p != "" || found || !errors.Is(err, ErrNilSession) {
			t.Errorf("FindOwn(%#v) = %q, %v, %v; want ErrNilSession", s, p, found, err)
		}
		if armed, subs := hooks.WatchStats(s); armed != 0 || subs != 0 {
			t.Errorf("WatchStats(%#v) = %d, %d", s, armed, subs)
		}
	}
}
