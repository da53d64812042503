package history

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// The event and the operations of the group membership workload (see
// workloads.Membership). A member's Leave is FnLeave with Key = its id.
const (
	// KindView: what an observer (Client) sees of the group at Key: Detail
	// lists the members with the session that owns each one's node
	// (FormatView), Value counts them. Mode says where the list comes from
	// (ViewWatch, ViewMembers), or that the observer's Watch ended
	// (ViewClosed; Detail says why).
	KindView Kind = "view"
	// FnJoin is a member's Join of the group, Key = its id; ok Value = the
	// member's session id when Join returned.
	FnJoin Fn = "join"
	// FnUpdate is a member's Update of its payload, Key = its id.
	FnUpdate Fn = "update"
	// FnMembers is an observer's Members call on the group at Key; ok
	// Value = the number of members. Its list is the KindView event (Mode
	// ViewMembers) with the same Op, recorded just before the ok.
	FnMembers Fn = "members"
)

// Modes of a KindView event.
const (
	// ViewWatch: a Snapshot of the observer's Watch, in effect from its
	// event until the observer's next watch view (or its ViewClosed).
	ViewWatch = "watch"
	// ViewMembers: the result of a Members call, read between the call's
	// invoke and this event.
	ViewMembers = "members"
	// ViewClosed: the observer's Watch ended; no watch view is in effect
	// from then on.
	ViewClosed = "closed"
)

// ViewEntry is one member in a view: its id and the session that owns its
// node (the node's ephemeral owner).
type ViewEntry struct {
	ID      string
	Session int64
}

// FormatView renders entries as a KindView's Detail: "id@0xsession" joined
// by commas, sorted by id then session. Ids must not contain a comma.
func FormatView(entries []ViewEntry) string {
	es := append([]ViewEntry(nil), entries...)
	sort.Slice(es, func(i, j int) bool {
		if es[i].ID != es[j].ID {
			return es[i].ID < es[j].ID
		}
		return es[i].Session < es[j].Session
	})
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = fmt.Sprintf("%s@0x%x", e.ID, e.Session)
	}
	return strings.Join(parts, ",")
}

// ParseView reads a Detail written by FormatView ("" is an empty view).
// An entry without "@0x<hex>" after its id is ErrMalformed.
func ParseView(detail string) ([]ViewEntry, error) {
	if detail == "" {
		return nil, nil
	}
	var out []ViewEntry
	for _, p := range strings.Split(detail, ",") {
		i := strings.LastIndex(p, "@0x")
		if i <= 0 {
			return nil, fmt.Errorf("%w: view entry %q", ErrMalformed, p)
		}
		s, err := strconv.ParseUint(p[i+3:], 16, 64)
		if err != nil {
			return nil, fmt.Errorf("%w: view entry %q: %v", ErrMalformed, p, err)
		}
		out = append(out, ViewEntry{ID: p[:i], Session: int64(s)})
	}
	return out, nil
}
