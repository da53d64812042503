package testenv

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// New starts an ensemble for a test (see Start) and closes it with
// tb.Cleanup, also when the test fails, and on SIGINT or SIGTERM of the
// test binary. It fails the test at once if the
// ensemble cannot start. Progress goes to the test log.
func New(tb testing.TB, cfg Config) *Ensemble {
	tb.Helper()
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(tbWriter{tb}, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	e, err := Start(ctx, cfg)
	if err != nil {
		tb.Fatalf("testenv: start ensemble: %v", err)
	}
	closeOnInterrupt(e)
	tb.Cleanup(func() {
		defer forgetOnInterrupt(e)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if err := e.Close(ctx); err != nil {
			tb.Errorf("testenv: %v", err)
		}
	})
	return e
}

// tbWriter sends log lines to the test's log.
type tbWriter struct{ tb testing.TB }

func (w tbWriter) Write(p []byte) (int, error) {
	w.tb.Helper()
	w.tb.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}
