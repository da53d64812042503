package inspect

import (
	"time"

	"github.com/zkrecipes/zkrecipes/recipes"
)

// Report is what Inspect learned about one path at one moment. Its JSON
// form is the command's -json output; field names are part of that
// interface.
type Report struct {
	Path    string    `json:"path"`
	Kind    Kind      `json:"kind"`
	Dialect string    `json:"dialect,omitempty"`
	At      time.Time `json:"at"`
	// Contenders: lock, rwlock, election, and a Curator semaphore's
	// mutex queue, in the recipe's order.
	Contenders []Node `json:"contenders,omitempty"`
	// Leader: an election's first participant.
	Leader *Node `json:"leader,omitempty"`
	// Leases: a semaphore's leases (holders); Max its recorded maximum,
	// 0 when none is recorded.
	Leases []Node `json:"leases,omitempty"`
	Max    int    `json:"max,omitempty"`
	// Queue: items in consumption order (Depth counts them all, Items
	// holds at most Options.MaxNodes of them), and live claims.
	Depth  int    `json:"depth,omitempty"`
	Items  []Node `json:"items,omitempty"`
	Claims []Node `json:"claims,omitempty"`
	// Double barrier: members (leave order) and whether "ready" exists.
	Members []Node `json:"members,omitempty"`
	Ready   bool   `json:"ready,omitempty"`
	// Twophase: transactions, undecided first, then by id.
	Transactions []Tx `json:"transactions,omitempty"`
	// Sessions says how the owners' liveness was learned (see Liveness):
	// whether every member of the ensemble answered "cons", and if not,
	// why.
	Sessions SessionInfo `json:"sessions"`
	// Stale lists nodes left by sessions that no longer exist (see
	// Finding).
	Stale []Finding `json:"stale,omitempty"`
	// Foreign lists children the recognised layout does not account for.
	Foreign []string `json:"foreign,omitempty"`
	// Truncated: more nodes than Options.MaxNodes; only that many were read.
	Truncated bool `json:"truncated,omitempty"`
}

// Node is one node of a recipe with what its stat and data say.
type Node struct {
	Name string `json:"name"`
	Path string `json:"path"`
	// Role: lock, read, write, latch, lease, item, claim, member.
	Role string `json:"role,omitempty"`
	Seq  *int32 `json:"seq,omitempty"`
	// Holds: this contender holds (lock, rwlock, election's leader,
	// a semaphore mutex's head).
	Holds bool `json:"holds,omitempty"`
	// Data is the node's data as text when it is printable UTF-8, else
	// hex with a "0x" prefix.
	Data string `json:"data,omitempty"`
	// Session is the ephemeral owner's id in hex, "" for a persistent node.
	Session string    `json:"session,omitempty"`
	Created time.Time `json:"created"`
	Age     Duration  `json:"age"`
	Czxid   int64     `json:"czxid"`
	Version int32     `json:"version"`
	// Liveness of the owner session: "connected" (a server listed it),
	// "disconnected" (every member of the ensemble was asked, twice, and
	// none listed it, and the node was still there after: its client is
	// gone or cut off, and the node lasts until the session expires) or
	// "unknown" (a member was not asked, or the check was off); "" for a
	// persistent node. Live is the same as a boolean, nil when unknown.
	Liveness string `json:"liveness,omitempty"`
	Live     *bool  `json:"live,omitempty"`
	// owner is the ephemeral owner's id (0 for a persistent node).
	owner int64
	// Gone: the node was listed but deleted before it could be read.
	Gone bool `json:"gone,omitempty"`
	// Priority: a queue item's priority.
	Priority *int `json:"priority,omitempty"`
}

// Tx is one twophase transaction.
type Tx struct {
	ID       string   `json:"id"`
	Payload  string   `json:"payload,omitempty"`
	Decision string   `json:"decision,omitempty"` // "" while undecided
	Age      Duration `json:"age"`
	Sites    []Site   `json:"sites"`
}

// Site is one site of a transaction.
type Site struct {
	Name string `json:"name"`
	// Alive is the session id (hex) of the site's liveness node, "" when
	// none exists.
	Alive string `json:"alive,omitempty"`
	Vote  string `json:"vote,omitempty"` // "commit", "abort" or ""
	Done  bool   `json:"done,omitempty"`
}

// SessionInfo says how session liveness was learned (see Liveness).
type SessionInfo struct {
	// Known: every member of the ensemble answered "cons", so an owner
	// none of them lists is disconnected.
	Known bool `json:"known"`
	// Connected counts the sessions the servers asked listed.
	Connected int `json:"connected,omitempty"`
	// Members is the size of the ensemble's membership (0 when it could
	// not be learned); Asked how many of them answered "cons".
	Members int `json:"members,omitempty"`
	Asked   int `json:"asked,omitempty"`
	// Why says, when not Known, why liveness is unknown; Missing lists
	// each member not asked, or server that did not answer, and why.
	Why     string   `json:"why,omitempty"`
	Missing []string `json:"missing,omitempty"`
}

// Finding is a node left behind by a session that no longer exists, or one
// whose owner is no longer connected.
type Finding struct {
	Path string `json:"path"`
	Why  string `json:"why"`
}

// Duration is a time.Duration that marshals as text ("12.3s").
type Duration time.Duration

// MarshalText renders d rounded to 100 ms.
func (d Duration) MarshalText() ([]byte, error) {
	return []byte(time.Duration(d).Round(100 * time.Millisecond).String()), nil
}

// UnmarshalText parses MarshalText's text, so that scripts in Go can
// decode the JSON output into a Report.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

// String is MarshalText's text.
func (d Duration) String() string {
	b, _ := d.MarshalText()
	return string(b)
}

// roleName names a contender's role as the report shows it.
func roleName(r recipes.Role) string { return r.String() }
