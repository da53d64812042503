// The Provider's options: the strategy Pick uses, instance filters and
// Curator's down-instance policy with its defaults.

package discovery

import (
	"errors"
	"fmt"
	"time"

	"github.com/zkrecipes/zkrecipes/recipes"
)

// Curator's DownInstancePolicy defaults.
const (
	// DefaultDownWindow is how long errors noted against an instance
	// count (30 s).
	DefaultDownWindow = 30 * time.Second
	// DefaultDownThreshold is how many errors within the window make an
	// instance down (2).
	DefaultDownThreshold = 2
)

// ProviderOption configures NewProvider.
type ProviderOption func(*providerOptions)

type providerOptions struct {
	strategy      Strategy
	filters       []func(Instance) bool
	downWindow    time.Duration
	downThreshold int
	err           error
}

// WithStrategy sets how Pick chooses (default RoundRobin(), as Curator's
// provider). A nil Strategy is ErrBadArgument.
func WithStrategy(s Strategy) ProviderOption {
	return func(o *providerOptions) {
		if s == nil {
			o.err = errors.Join(o.err, fmt.Errorf("nil strategy: %w", recipes.ErrBadArgument))
		}
		o.strategy = s
	}
}

// WithFilter adds a filter (Curator's InstanceFilter): only instances for
// which every filter returns true are usable. Filters run on the caller's
// goroutine, outside the Provider's lock. A nil filter is ErrBadArgument.
func WithFilter(f func(Instance) bool) ProviderOption {
	return func(o *providerOptions) {
		if f == nil {
			o.err = errors.Join(o.err, fmt.Errorf("nil filter: %w", recipes.ErrBadArgument))
			return
		}
		o.filters = append(o.filters, f)
	}
}

// WithDownPolicy sets Curator's DownInstancePolicy: an instance against
// which NoteError was called threshold times within window of the first
// such call is not usable until window has passed since that first call.
// Defaults: DefaultDownWindow, DefaultDownThreshold. A window <= 0 or a
// threshold < 1 is ErrBadArgument.
func WithDownPolicy(window time.Duration, threshold int) ProviderOption {
	return func(o *providerOptions) {
		if window <= 0 || threshold < 1 {
			o.err = errors.Join(o.err, fmt.Errorf("down policy %v, %d: %w", window, threshold, recipes.ErrBadArgument))
		}
		o.downWindow, o.downThreshold = window, threshold
	}
}
