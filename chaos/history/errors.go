package history

import "errors"

// Errors returned by package history; match them with errors.Is.
var (
	// ErrMalformed reports a history that cannot be read.
	ErrMalformed = errors.New("chaos: malformed history")
)
