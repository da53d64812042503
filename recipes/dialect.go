package recipes

import (
	"fmt"
	"strings"

	"github.com/google/uuid"
)

// Role is what a contender node stands for within a recipe. A Dialect maps
// each role to the label written into node names.
type Role int

// Roles known to the dialects.
const (
	RoleLock  Role = iota + 1 // mutex / selector contender
	RoleRead                  // read-lock contender
	RoleWrite                 // write-lock contender
	RoleLease                 // semaphore lease
	RoleLatch                 // leader-latch participant
)

func (r Role) String() string {
	switch r {
	case RoleLock:
		return "lock"
	case RoleRead:
		return "read"
	case RoleWrite:
		return "write"
	case RoleLease:
		return "lease"
	case RoleLatch:
		return "latch"
	}
	return fmt.Sprintf("role(%d)", int(r))
}

// Dialect is a wire format: the names of contender nodes (locks,
// semaphores, read/write locks, elections) and of queue items, so that
// processes using another client library (Curator, kazoo) can share a path.
// The dialects are the package variables Curator (the default),
// CuratorSelector and Kazoo, and their TextOrder variants; the zero Dialect
// is Curator. Every recipe package takes a Dialect (its WithDialect option)
// and uses the names of the roles it needs. A Dialect is an immutable value
// and safe for concurrent use.
type Dialect struct {
	name      string
	protected bool            // names start "_c_<uuid36>-" (Curator) instead of "<uuid hex32>" (kazoo)
	labels    map[Role]string // role -> label before the sequence
	blocks    map[Role][]Role // role -> roles ordered against it (the ones that can be ahead)
	text      bool            // order by the suffix's text, as the foreign library does (TextOrder)
	election  Role            // the role election participants contend as (ElectionRole)
	item      string          // queue item prefix (QueueItem)
	ranked    bool            // every queue item names its priority (QueueItem)
}

// Curator is Apache Curator's wire format: "_c_<uuid36>-<label><seq10>" with
// labels "lock-" (InterProcessMutex), "__READ__" / "__WRIT__"
// (InterProcessReadWriteLock), "lease-" (InterProcessSemaphoreV2) and
// "latch-" (LeaderLatch, the role of elections in this dialect). Ordering
// uses the digits after the last label. Queue items are "qn-<seq10>" (ZooKeeper's
// queue recipe, Curator's SimpleDistributedQueue), "qn-<ppp>-<seq10>" when
// put with a priority.
var Curator = curatorDialect()

// CuratorSelector is Curator's wire format with elections held as Curator's
// LeaderSelector holds them: through an InterProcessMutex, so participants
// are "_c_<uuid36>-lock-<seq10>" nodes (RoleLock) and share a path with
// Curator's and this toolkit's mutexes. For every other recipe it is
// Curator, and its String is "curator".
var CuratorSelector = curatorDialect().withElection(RoleLock)

// Kazoo is the kazoo (Python) wire format: "<uuid hex32><label><seq10>" with
// "__lock__" for Lock, WriteLock and elections (kazoo's Election is a Lock)
// and "__rlock__" for ReadLock. As kazoo does, a lock is blocked by both
// readers and writers. Queue items are "entry-<ppp>-<seq10>" (kazoo's Queue
// and LockingQueue), always with a priority. kazoo's Semaphore has another
// layout: Kazoo has no lease nodes.
var Kazoo = kazooDialect()

// curatorDialect and kazooDialect build the package's dialects (functions,
// so that go doc shows the variables' names rather than their internals).
func curatorDialect() Dialect {
	return Dialect{
		name:      "curator",
		protected: true,
		labels:    map[Role]string{RoleLock: "lock-", RoleRead: "__READ__", RoleWrite: "__WRIT__", RoleLease: "lease-", RoleLatch: "latch-"},
		blocks: map[Role][]Role{
			RoleLock: {RoleLock}, RoleRead: {RoleRead, RoleWrite}, RoleWrite: {RoleRead, RoleWrite},
			RoleLease: {RoleLease}, RoleLatch: {RoleLatch},
		},
		election: RoleLatch,
		item:     "qn-",
	}
}

func kazooDialect() Dialect {
	return Dialect{
		name:   "kazoo",
		labels: map[Role]string{RoleLock: "__lock__", RoleWrite: "__lock__", RoleRead: "__rlock__", RoleLatch: "__lock__"},
		blocks: map[Role][]Role{
			RoleLock: {RoleLock, RoleRead}, RoleWrite: {RoleLock, RoleRead}, RoleRead: {RoleLock, RoleRead}, RoleLatch: {RoleLock},
		},
		election: RoleLatch,
		item:     "entry-",
		ranked:   true,
	}
}

// withElection returns d with elections contending as role r.
func (d Dialect) withElection(r Role) Dialect {
	d.election = r
	return d
}

// String returns the dialect's family name: "curator" (Curator,
// CuratorSelector and the zero Dialect) or "kazoo", whatever the variant.
func (d Dialect) String() string {
	if d.name == "" {
		return "curator"
	}
	return d.name
}

// orDefault returns Curator for the zero Dialect.
func (d Dialect) orDefault() Dialect {
	if d.name == "" {
		return Curator
	}
	return d
}

// TextOrder returns the dialect ordering contenders as Curator and kazoo
// themselves do: by the text of the sequence suffix (Curator compares the
// substring after the label as a Java String, kazoo sorts the regex group as
// a Python string) instead of by RFC 1982 serial arithmetic (the default).
// Use it when foreign clients share the path, so that every client agrees
// on who is first; keep the default on paths only this package uses.
//
// The two orders agree until the parent's sequence counter (its cversion,
// one step per child created or deleted) passes 2^31-1 and wraps to
// negative numbers, which ZooKeeper writes as "-2147483648" and up. From
// there the text order is wrong for everybody: "-" sorts before every digit,
// so a newcomer sorts ahead of a holder with a positive suffix and holds at
// once beside it, and among negative suffixes the text order runs against
// the creation order ("-2147483647" before "-2147483648"). Mutual exclusion
// between the clients of such a path holds only until the wrap; with the
// default serial order, Go clients stay correct across it but can disagree
// with foreign ones there. (kazoo's pattern also wants ten digits after the
// sign, so it ignores suffixes from "-999999999" to "-000000001"
// altogether.) Reaching the wrap takes 2^31 creates and deletes under one
// parent; a parent that may see that many should be replaced before.
func (d Dialect) TextOrder() Dialect {
	d = d.orDefault()
	d.text = true
	return d
}

// OrdersAsText reports whether d orders by the suffix's text (TextOrder).
func (d Dialect) OrdersAsText() bool { return d.text }

// ElectionRole returns the role whose nodes an election's participants
// create: RoleLatch for Curator (LeaderLatch's "latch-") and Kazoo (its
// "__lock__"), RoleLock for CuratorSelector (LeaderSelector's mutex,
// "lock-"). Pure.
func (d Dialect) ElectionRole() Role { return d.orDefault().election }

// QueueItem returns the names of the dialect's queue items: an item is
// "<prefix><seq10>", or "<prefix><ppp>-<seq10>" with a three-digit
// priority. ranked reports whether every item names its priority (kazoo's
// "entry-<ppp>-"); otherwise (Curator's "qn-") only items put with a
// priority do. Pure.
func (d Dialect) QueueItem() (prefix string, ranked bool) {
	d = d.orDefault()
	return d.item, d.ranked
}

// Supports reports whether the dialect has a name for role r.
func (d Dialect) Supports(r Role) bool {
	_, ok := d.orDefault().labels[r]
	return ok
}

// NewGUID returns a fresh identifier in the dialect's form: 36 characters
// with dashes (Curator) or 32 hex digits (kazoo).
func (d Dialect) NewGUID() string {
	u := uuid.New()
	if d.orDefault().protected {
		return u.String()
	}
	return strings.ReplaceAll(u.String(), "-", "")
}

// NodePrefix returns the name to create, to which ZooKeeper appends the
// sequence: "_c_<guid>-<label>" (Curator) or "<guid><label>" (kazoo).
func (d Dialect) NodePrefix(guid string, r Role) (string, error) {
	d = d.orDefault()
	label, ok := d.labels[r]
	if !ok {
		return "", fmt.Errorf("%w: dialect %s has no %s nodes", ErrBadArgument, d, r)
	}
	return d.protect(guid, label), nil
}

// protect returns label in the dialect's protected form for guid:
// "_c_<guid>-<label>" (Curator) or "<guid><label>" (kazoo).
func (d Dialect) protect(guid, label string) string {
	if d.orDefault().protected {
		return "_c_" + guid + "-" + label
	}
	return guid + label
}

// Contender is one parsed contender node.
type Contender struct {
	Name string // node name (no parent)
	GUID string // the creator's GUID, "" if the name carries none
	Role Role
	Seq  int32 // ZooKeeper's sequence suffix
	// key is the suffix's text when the dialect orders by text
	// (TextOrder), "" otherwise; SortBySeq compares it when every
	// contender has one.
	key string
}

// Parse parses a child name, accepting only the given roles (every role of
// the dialect when none are given). A name is recognised when it ends with
// one of those roles' labels followed by a ZooKeeper sequence suffix;
// anything else is foreign and ok is false. Pure.
func (d Dialect) Parse(name string, roles ...Role) (c Contender, ok bool) {
	d = d.orDefault()
	if len(roles) == 0 {
		for r := RoleLock; r <= RoleLatch; r++ {
			if _, found := d.labels[r]; found {
				roles = append(roles, r)
			}
		}
	}
	best := -1
	for _, r := range roles {
		label, found := d.labels[r]
		if !found {
			continue
		}
		i := strings.LastIndex(name, label)
		if i < 0 || i <= best {
			continue
		}
		seq, good := ParseSeq(name[i+len(label):])
		if !good {
			continue
		}
		best = i
		c = Contender{Name: name, Role: r, Seq: seq}
		if d.text {
			c.key = name[i+len(label):]
		}
		c.GUID = d.guidOf(name[:i])
		ok = true
	}
	if ok && !d.protected {
		// kazoo shares "__lock__" between roles; report the first role
		// asked for that uses the label, so callers see their own role.
		for _, r := range roles {
			if d.labels[r] == d.labels[c.Role] {
				c.Role = r
				break
			}
		}
	}
	return c, ok
}

// guidOf extracts the GUID from the part of a name before the label.
func (d Dialect) guidOf(head string) string {
	if d.protected {
		// "_c_" + 36 chars + "-"
		if len(head) == 40 && strings.HasPrefix(head, "_c_") && head[39] == '-' && isGUID(head[3:39], dashedGUID) {
			return head[3:39]
		}
		return ""
	}
	if len(head) == 32 && isGUID(head, plainHex) {
		return head
	}
	return ""
}

// guidForm says which spelling of a GUID isGUID accepts.
type guidForm bool

const (
	plainHex   guidForm = false // hex digits only (kazoo's uuid4().hex)
	dashedGUID guidForm = true  // hex digits, dashes allowed at 8, 13, 18, 23 (Curator's)
)

func isGUID(s string, dashes guidForm) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9', c >= 'a' && c <= 'f', c >= 'A' && c <= 'F':
		case c == '-' && dashes == dashedGUID && (i == 8 || i == 13 || i == 18 || i == 23):
		default:
			return false
		}
	}
	return true
}

// Blocking returns the roles whose nodes are ordered against a contender of
// role r (the only roles that can be ahead of it).
func (d Dialect) Blocking(r Role) []Role {
	return d.orDefault().blocks[r]
}

// HasGUID reports whether name is a node created with guid in this dialect.
func (d Dialect) HasGUID(name, guid string) bool {
	if guid == "" {
		return false
	}
	if d.orDefault().protected {
		return strings.HasPrefix(name, "_c_"+guid+"-")
	}
	return strings.HasPrefix(name, guid)
}
