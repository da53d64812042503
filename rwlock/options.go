package rwlock

import (
	"github.com/zkrecipes/zkrecipes/lock"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// Option configures an RWMutex. It is lock.Option: package lock's options
// configure an RWMutex as they do a lock.Mutex, and the functions below are
// those options under this package's name; their documentation is package
// lock's.
type Option = lock.Option

// WithDialect is lock.WithDialect. An RWMutex uses the dialect's read and
// write names, and New rejects a dialect without them.
func WithDialect(d recipes.Dialect) Option { return lock.WithDialect(d) }

// WithData is lock.WithData: the identity stored in our read and write
// nodes.
func WithData(b []byte) Option { return lock.WithData(b) }

// WithLossPolicy is lock.WithLossPolicy.
func WithLossPolicy(p recipes.LossPolicy) Option { return lock.WithLossPolicy(p) }

// WithRevocation is lock.WithRevocation: Revoked (write) or RRevoked (read)
// is closed when someone revokes the holding.
func WithRevocation() Option { return lock.WithRevocation() }
