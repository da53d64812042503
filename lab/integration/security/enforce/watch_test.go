package enforce_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/group"
	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// TestGroupWatchRefused: a group.Watch of a Session without credentials
// on a server enforcing authentication ends with an error wrapping
// recipes.ErrNoAuth, within refusalBound. It ended with the connection
// loss that carried the refusal ("zk: connection closed"), which said
// nothing of why.
func TestGroupWatchRefused(t *testing.T) {
	e := shared.Start(t)
	testutil.NoLeakedGoroutines(t, testutil.Running("recipes", "group"))
	ctx := testutil.Ctx(t, time.Minute)
	anon := connectAnonymous(t, ctx, e)
	start := time.Now()
	st := group.Watch(ctx, anon, fmt.Sprintf("/zkrecipes-enforce/%d/group", time.Now().UnixNano()))
	for range st.C {
	}
	d := time.Since(start)
	if err := st.Err(); !errors.Is(err, recipes.ErrNoAuth) {
		t.Errorf("Watch ended with %v, want an error wrapping recipes.ErrNoAuth", err)
	}
	if d > refusalBound {
		t.Errorf("Watch took %v to end, want at most %v", d, refusalBound)
	}
}
