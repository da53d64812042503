package recipes

import "context"

// FindOwnForTest exposes the ambiguous-create resolution to the external
// tests: it looks for Curator lock nodes carrying guid under parent.
func FindOwnForTest(ctx context.Context, s *Session, parent, guid string) (path string, found bool, err error) {
	n, err := findOwn(ctx, s, Curator, RoleLock, parent, guid)
	if n == nil {
		return "", false, err
	}
	return n.path, true, err
}
