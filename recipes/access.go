//go:build zkrecipes_hooks

package recipes

import (
	"context"
	"fmt"

	"github.com/zkrecipes/zkrecipes/internal/hooks"
)

// The accessors of internal/hooks, for the integration tests in the lab
// module; they add no exported API.
func init() {
	hooks.FindOwn = func(ctx context.Context, s any, parent, guid string) (string, bool, error) {
		ss, _ := s.(*Session)
		if ss == nil {
			return "", false, fmt.Errorf("%w: not a *recipes.Session", ErrNilSession)
		}
		n, err := findOwn(ctx, ss, Curator, RoleLock, parent, guid)
		if n == nil {
			return "", false, err
		}
		return n.path, true, err
	}
	hooks.WatchStats = func(s any) (int, int) {
		ss, _ := s.(*Session)
		if ss == nil {
			return 0, 0
		}
		return ss.watchStats()
	}
	hooks.FanStats = func(s any) (int, int, int) {
		ss, _ := s.(*Session)
		if ss == nil {
			return 0, 0, 0
		}
		return ss.fanStats()
	}
}
