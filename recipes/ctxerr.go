package recipes

import (
	"context"
	"errors"
	"fmt"
)

// ContextError is the one way this module turns a done context into an
// error. It returns nil while ctx is not done, and ErrNilContext for a nil
// ctx (the package doc's nil-ctx rule). Once ctx is done, the error
// errors.Is ctx.Err() (context.Canceled or context.DeadlineExceeded) and
// also, when the context was given a cause of its own
// (context.WithCancelCause, WithDeadlineCause, WithTimeoutCause),
// context.Cause(ctx): a caller can test for either. Every error a recipe
// returns because its ctx ended wraps the result of ContextError.
func ContextError(ctx context.Context) error {
	if ctx == nil {
		return ErrNilContext
	}
	err := ctx.Err()
	if err == nil {
		return nil
	}
	switch cause := context.Cause(ctx); {
	case cause == nil:
		return err
	case errors.Is(cause, err):
		return cause // no cause of its own, or one that wraps ctx.Err()
	default:
		return fmt.Errorf("%w: %w", err, cause)
	}
}
