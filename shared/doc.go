// Package shared keeps one value in one ZooKeeper node that many processes
// read, watch and change: Value holds raw bytes (Curator's SharedValue),
// Count a 32-bit integer (Curator's SharedCount, stored as 4 bytes, big
// endian) and Long a 64-bit counter (Curator's DistributedAtomicLong, 8
// bytes, big endian, optionally promoted to a lock under contention), so Go
// and Java processes can share the same node.
//
// # Usage
//
//	limit, err := shared.NewCount(s, "/app/limit", 10) // 10 when the node is new; sends nothing
//	cur, err := limit.Get(ctx)                         // 1 getData
//	cur, ok, err := limit.TrySet(ctx, cur, cur.Value+1) // 1 setData; !ok: another writer came first
//	w := limit.Watch(ctx)                              // the current value, then every change
//	defer w.Stop()
//	for v := range w.C { ... }
//
// ExampleCount has it in full, compiled, with the retry and ErrUncertain;
// ExampleValue_FencedTrySet and ExampleLong show the others (example_test.go).
//
// # Changes
//
// Every change is a compare-and-set on the node's data version: TrySet
// writes only if the node is still at the version the caller read, and
// otherwise reports false with what is there now, for the caller to retry.
// It never turns into a blind set: version -1, which ZooKeeper reads as
// "any version", is refused with recipes.ErrBadArgument, nothing sent.
// FencedTrySet does the same inside one multi with a holding's fence check
// (any recipes.Held, or a lock.Mutex or rwlock.RWMutex that holds), so it commits only while that holding is held.
//
// A write whose connection fails after it was sent has an unknown outcome:
// ZooKeeper may still apply it. The methods never guess: they return an
// error wrapping ErrUncertain, and the caller reads the value again to see
// where it stands.
//
// # Watching
//
// Watch streams the value each time it changes, in the order ZooKeeper
// applied the changes: every value sent has a larger modification zxid
// (Versioned.Zxid) than the one before, so a watcher never goes back, even
// across reconnections or a node deleted and created again (whose version
// starts again at 0). go-zookeeper has one-shot watches only: each change
// costs the watcher 1 getData, and values written in quick succession may be
// skipped (a watcher sees the latest, never a value older than one it has
// seen).
//
// # Costs
//
//   - Get: 1 getData; 1 create and 1 getData more when the node is missing
//     (it is created with the seed, its missing parents as containers).
//   - TrySet, Set: 1 setData; TrySet costs 1 getData more when it fails.
//   - FencedTrySet: 1 multi (plus 1 getData when the version moved).
//   - Watch: 1 getData per change seen; 1 create when the node is missing.
//   - Long: 1 getData per read; per change, 1 getData and 1 setData (or
//     create) per optimistic attempt, and with promotion the lock's cost
//     (1 create + 1 getChildren uncontended, 1 delete to release) and the
//     attempts again. A Long's promotions take its lock one at a time: a
//     change waits in the process, sending nothing, for the one under way.
//
// Nothing is sent when ctx is already done; calls wait for a usable session
// and retry reads after connection errors, as every zkrecipes call does.
//
// Values, Counts and Longs are safe for concurrent use and hold no goroutine of
// their own; each Watch runs one goroutine until its ctx ends or it is
// stopped.
//
// # Errors
//
// Bad input, nil receivers and nil contexts follow the conventions of
// every zkrecipes package (see "Conventions" in package recipes).
// Bad input is refused before anything is sent, with an error wrapping
// recipes.ErrBadArgument (or recipes.ErrInvalidPath, recipes.ErrNilSession,
// recipes.ErrDataTooLarge): a compare-and-set against version -1, a nil
// holding, attempts below 1, a promotion lock that lock.New refuses. A
// Long's Add whose sum would overflow an int64 is refused once the value is
// read, nothing written (ErrOverflow, also recipes.ErrBadArgument).
//
// # Permissions
//
// Get and Watch on a missing node need CREATE on its parent (the seed is
// created); TrySet, Set and a Long's changes need WRITE on the node (a
// fenced set also READ on the holding's node, for the multi's check); Get
// and Watch need READ. A Long promoted to a lock needs what package lock's
// Mutex needs on its lock path. See docs/security.md.
package shared
