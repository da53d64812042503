package testutil

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// SessionWatches returns the paths server 0 of e holds a watch on for
// session sid, as the server lists them (four-letter word wchc, over TLS
// in secured mode): what a test waits for before it faults a session
// that must be waiting on a watch.
func SessionWatches(tb testing.TB, e interface {
	FourLetter(context.Context, int, string) (string, error)
}, sid int64) map[string]bool {
	tb.Helper()
	out, err := e.FourLetter(Ctx(tb, 10*time.Second), 0, "wchc")
	if err != nil {
		tb.Fatal(err)
	}
	paths, in := map[string]bool{}, false
	head := fmt.Sprintf("0x%x", sid)
	for _, line := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(line, "0x"):
			in = strings.TrimSpace(line) == head
		case in && strings.TrimSpace(line) != "":
			paths[strings.TrimSpace(line)] = true
		}
	}
	return paths
}
