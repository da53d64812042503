package recipes

import (
	"errors"
	"testing"
)

// TestAuthGate: a -124 reply marks the Session (authRequired wraps
// ErrNoAuth), any other reply clears the mark; a nil Session is unmarked.
func TestAuthGate(t *testing.T) {
	var s Session
	if err := s.authRequired(); err != nil {
		t.Fatalf("fresh Session: %v", err)
	}
	s.authReply(codeAuthRequired)
	if err := s.authRequired(); !errors.Is(err, ErrNoAuth) {
		t.Fatalf("after -124: %v, want ErrNoAuth", err)
	}
	s.authReply(0)
	if err := s.authRequired(); err != nil {
		t.Fatalf("after a served reply: %v", err)
	}
	if err := (*Session)(nil).authRequired(); err != nil {
		t.Fatalf("nil Session: %v", err)
	}
}
