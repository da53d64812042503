package lock

import (
	"github.com/zkrecipes/zkrecipes/internal/lockopt"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// Option configures a Mutex or a Semaphore (New, NewMulti, NewSemaphore,
// NewSemaphoreCount). Package rwlock has the same options under its own
// name (rwlock.WithDialect and so on), so each option is documented once,
// here. The zero Option changes nothing.
type Option struct {
	set lockopt.Set
}

// config applies opts over the defaults.
func config(opts []Option) lockopt.Config {
	return lockopt.New(opts, func(o Option) lockopt.Set { return o.set })
}

// WithDialect selects the wire format: recipes.Curator (the default;
// recipes.CuratorSelector is the same for locks) or recipes.Kazoo, and
// their TextOrder variants. A Mutex uses the dialect's lock names
// (Curator's InterProcessMutex "_c_<uuid36>-lock-<seq>", kazoo's Lock
// "<uuid hex32>__lock__<seq>"), an rwlock.RWMutex its read and write names
// (Curator's InterProcessReadWriteLock "__READ__" / "__WRIT__", kazoo's
// ReadLock and WriteLock "__rlock__" / "__lock__"). A Semaphore speaks
// Curator's InterProcessSemaphoreV2 only: NewSemaphore rejects recipes.Kazoo
// with ErrDialect.
func WithDialect(d recipes.Dialect) Option {
	return Option{lockopt.Dialect(d)}
}

// WithData sets the bytes stored in our nodes, the participant's identity
// (default recipes.ProcessID(), "host:pid"), as Curator stores its own:
// Participants shows who holds and who waits. The bytes are copied; nil
// stores none. More than the session's request limit allows makes the
// constructor fail with recipes.ErrDataTooLarge.
func WithData(b []byte) Option {
	return Option{lockopt.Data(b)}
}

// WithLossPolicy overrides the session's loss policy (see
// recipes.WithLossPolicy) for the holdings of this lock.
func WithLossPolicy(p recipes.LossPolicy) Option {
	return Option{lockopt.LossPolicy(p)}
}

// WithRevocation makes holdings watch their node for Curator's revocation
// message (cost: 1 getData per acquisition): when someone calls Revoke on
// the holder's node, the holding's revocation channel is closed
// (Mutex.Revoked, Permit.Revoked; the Revoked of each rwlock side) and its
// context (Context, of either rwlock side) cancelled with
// recipes.ErrRevoked. This is the "recoverable shared lock" of ZooKeeper's
// recipes.
func WithRevocation() Option {
	return Option{lockopt.Revocation()}
}
