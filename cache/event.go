package cache

import (
	"fmt"

	"github.com/go-zookeeper/zk"
)

// Node is a node as the cache read it: its full path, its data and its
// stat. Stat is that of the last read of the node's data; its NumChildren,
// Cversion and Pzxid are not refreshed by changes to the children alone
// (a TreeCache or ChildrenCache lists the children themselves).
//
// The incarnation of a node is its Stat.Czxid: a node deleted and created
// again at the same path has a larger one, and its Version starts again at
// 0. Stat.Mzxid, the zxid of the write that set the data, grows with every
// change of a path's node, across incarnations too: it is what orders what
// a cache reports.
type Node struct {
	Path string
	Data []byte
	Stat zk.Stat
}

// EventType says what an Event reports.
type EventType int

// Event types.
const (
	// EventAdded: a node entered the cache (Event.Node as read). For a
	// path it follows nothing, or an EventRemoved.
	EventAdded EventType = iota + 1
	// EventUpdated: a cached node's data changed (Event.Node as read now,
	// with a larger Stat.Mzxid than the path's previous event).
	EventUpdated
	// EventRemoved: a node left the cache (Event.Node: the last state the
	// cache had): it was deleted, or deleted and created again (an
	// EventAdded with the new incarnation follows). A node's descendants
	// are removed before it.
	EventRemoved
	// EventInitialized: the cache holds the whole subtree it watches, as
	// read from ZooKeeper after Watch, or after an EventReset. Event.Node is
	// zero.
	EventInitialized
	// EventReset: the session was lost (expired, replaced, or its lease
	// ran out). The view stays as it was, possibly stale, and ephemeral
	// nodes of the lost session may still be in it; the cache reads
	// everything again once a session is usable, reports the differences
	// as EventAdded, EventUpdated and EventRemoved, then EventInitialized.
	// Event.Node is zero.
	EventReset
)

func (t EventType) String() string {
	switch t {
	case EventAdded:
		return "added"
	case EventUpdated:
		return "updated"
	case EventRemoved:
		return "removed"
	case EventInitialized:
		return "initialized"
	case EventReset:
		return "reset"
	}
	return fmt.Sprintf("event(%d)", int(t))
}

// Event is one change of a cache's view, in the order the cache applied
// it: by the time an Event is received, the view (Get, Current, Nodes)
// already includes it.
type Event struct {
	Type EventType
	Node Node
}

func (e Event) String() string {
	if e.Node.Path == "" {
		return e.Type.String()
	}
	return fmt.Sprintf("%s %s (czxid %d, mzxid %d)", e.Type, e.Node.Path, e.Node.Stat.Czxid, e.Node.Stat.Mzxid)
}
