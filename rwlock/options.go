package rwlock

import (
	"github.com/zkrecipes/zkrecipes/internal/lockopt"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// Option configures an RWMutex. Its options are package lock's under this
// package's name: they configure an RWMutex as they do a lock.Mutex, and
// their documentation is package lock's. The zero Option changes nothing.
type Option struct {
	set lockopt.Set
}

// config applies opts over the defaults.
func config(opts []Option) lockopt.Config {
	return lockopt.New(opts, func(o Option) lockopt.Set { return o.set })
}

// WithDialect is lock.WithDialect. An RWMutex uses the dialect's read and
// write names, and New rejects a dialect without them.
func WithDialect(d recipes.Dialect) Option { return Option{lockopt.Dialect(d)} }

// WithData is lock.WithData: the identity stored in our read and write
// nodes.
func WithData(b []byte) Option { return Option{lockopt.Data(b)} }

// WithLossPolicy is lock.WithLossPolicy.
func WithLossPolicy(p recipes.LossPolicy) Option { return Option{lockopt.LossPolicy(p)} }

// WithRevocation is lock.WithRevocation: Revoked (of the write or the read side)
// is closed when someone revokes the holding.
func WithRevocation() Option { return Option{lockopt.Revocation()} }
