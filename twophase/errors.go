package twophase

import (
	"errors"
	"fmt"

	"github.com/zkrecipes/zkrecipes/recipes"
)

// Sentinel errors of package twophase. Errors returned by this package wrap
// one of these, or a recipes sentinel (recipes.ErrNilSession,
// recipes.ErrInvalidPath, recipes.ErrDataTooLarge, recipes.ErrClosed), or
// go-zookeeper's own error, or the context's cause; use errors.Is.
var (
	// ErrUnknownTx: no transaction of that id exists under the root (never
	// begun, or already garbage-collected).
	ErrUnknownTx = errors.New("twophase: unknown transaction")
	// ErrNotInTx: the transaction exists but does not name this site.
	ErrNotInTx = errors.New("twophase: site not in transaction")
	// ErrNotDecided: Finish on a transaction that has no decision yet.
	ErrNotDecided = errors.New("twophase: transaction not decided")
	// ErrVoteConflict: this site already voted, with the other vote. A
	// vote is written once and never changes; voting again with the same
	// vote succeeds.
	ErrVoteConflict = errors.New("twophase: site already voted differently")
	// ErrTxExists: Begin found a transaction with that id whose payload or
	// sites differ. (Begin with the same payload and sites returns the
	// existing transaction.)
	ErrTxExists = errors.New("twophase: transaction exists with other content")
	// ErrBadTxID: a transaction id is not a single valid ZooKeeper path
	// segment.
	ErrBadTxID = errors.New("twophase: invalid transaction id")
	// ErrBadSite: a site name is not a single valid ZooKeeper path segment,
	// is the reserved name "decision", is repeated, or no site was given.
	// From NewSite it also wraps recipes.ErrBadArgument.
	ErrBadSite = errors.New("twophase: invalid site")
	// ErrBadDecision: a vote or decision other than Commit or Abort.
	ErrBadDecision = errors.New("twophase: invalid vote or decision")
	// ErrCorrupt: a vote or decision node holds data this package did not
	// write.
	ErrCorrupt = errors.New("twophase: unrecognised node data")
	// ErrNilReceiver: a method was called on a nil *Coordinator, *Tx,
	// *Site or *Proposal.
	ErrNilReceiver = fmt.Errorf("twophase: nil receiver: %w", recipes.ErrBadArgument)
)
