package recipes

import (
	"context"
	"fmt"
	"log/slog"
)

// SlogObserver is an Observer that writes every event to a slog.Logger,
// with the attributes listed in docs/observability.md:
//
//   - a call: debug "zookeeper call" (op, path, session, duration, and err
//     unless it succeeded);
//   - a holding: debug "zookeeper holding acquired" (kind, path, session,
//     waited); "zookeeper holding ended" (kind, path, session, held,
//     cause) at debug when released, warn when lost;
//   - a lease renewal: debug "zookeeper lease renewed" (session,
//     remaining, timeout, margin); an expiry: warn "zookeeper lease
//     expired" (the same);
//   - a state change: debug "zookeeper state" (state, session). The
//     Session itself logs state changes too, at info and warn for the
//     troubled ones (WithLogger).
//
// Debug events cost nothing but the level check when the logger's handler
// does not log debug.
type SlogObserver struct {
	l *slog.Logger
}

var _ Observer = (*SlogObserver)(nil)

// NewSlogObserver returns an observer logging to l; a nil l fails with
// ErrBadArgument.
func NewSlogObserver(l *slog.Logger) (*SlogObserver, error) {
	if l == nil {
		return nil, fmt.Errorf("%w: nil logger", ErrBadArgument)
	}
	return &SlogObserver{l: l}, nil
}

func (o *SlogObserver) log(level slog.Level, msg string, attrs ...slog.Attr) {
	o.l.LogAttrs(context.Background(), level, msg, attrs...)
}

func (o *SlogObserver) enabled(level slog.Level) bool {
	return o.l.Enabled(context.Background(), level)
}

func sessionAttr(id int64) slog.Attr { return slog.String("session", fmt.Sprintf("0x%x", id)) }

// ObserveCall logs c at debug level.
func (o *SlogObserver) ObserveCall(c CallEvent) {
	if !o.enabled(slog.LevelDebug) {
		return
	}
	attrs := []slog.Attr{slog.String("op", c.Op), slog.String("path", c.Path), sessionAttr(c.SessionID), slog.Duration("duration", c.Duration)}
	if c.Err != nil {
		attrs = append(attrs, slog.String("err", c.Err.Error()))
	}
	o.log(slog.LevelDebug, "zookeeper call", attrs...)
}

// ObserveHolding logs h: at warn level a holding lost, else at debug.
func (o *SlogObserver) ObserveHolding(h HoldingEvent) {
	level, msg := slog.LevelDebug, "zookeeper holding acquired"
	if h.Phase == HoldingEnded {
		msg = "zookeeper holding ended"
		if h.Lost() {
			level = slog.LevelWarn
		}
	}
	if !o.enabled(level) {
		return
	}
	attrs := []slog.Attr{slog.String("kind", h.Kind), slog.String("path", h.Path), sessionAttr(h.SessionID)}
	if h.Phase == HoldingAcquired {
		attrs = append(attrs, slog.Duration("waited", h.Waited))
	} else {
		attrs = append(attrs, slog.Duration("held", h.Held), slog.String("cause", fmt.Sprint(h.Cause)))
	}
	o.log(level, msg, attrs...)
}

// ObserveState logs c at debug level.
func (o *SlogObserver) ObserveState(c StateChange) {
	if o.enabled(slog.LevelDebug) {
		o.log(slog.LevelDebug, "zookeeper state", slog.String("state", c.State.String()), sessionAttr(c.SessionID))
	}
}

// ObserveLease logs a renewal at debug level, an expiry at warn.
func (o *SlogObserver) ObserveLease(e LeaseEvent) {
	level, msg := slog.LevelDebug, "zookeeper lease renewed"
	if e.Expired {
		level, msg = slog.LevelWarn, "zookeeper lease expired"
	}
	if o.enabled(level) {
		o.log(level, msg, sessionAttr(e.SessionID), slog.Duration("remaining", e.Remaining),
			slog.Duration("timeout", e.Timeout), slog.Duration("margin", e.Margin))
	}
}
