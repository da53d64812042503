package inspect

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/zkrecipes/internal/zkpath"
	"github.com/zkrecipes/zkrecipes/lock"
	"github.com/zkrecipes/zkrecipes/queue"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// Reader is the part of *zk.Conn that Inspect uses: reads only.
type Reader interface {
	Children(path string) ([]string, *zk.Stat, error)
	Get(path string) ([]byte, *zk.Stat, error)
}

// Options tune Inspect.
type Options struct {
	// MaxNodes bounds the nodes whose data is read per list (contenders,
	// items, claims, members, leases, transactions); 0 means 100. Longer
	// lists are counted and Report.Truncated is set.
	MaxNodes int
	// Now is the clock for ages; nil means time.Now.
	Now func() time.Time
}

func (o Options) max() int {
	if o.MaxNodes <= 0 {
		return 100
	}
	return o.MaxNodes
}

// Inspect reads the recipe at path and reports it. Cost: 1 getChildren of
// path, 1 getChildren per child with one of the layouts' fixed names
// ("leases", "locks", "lock", "entries", "taken", "ready"; see Recognise),
// 1 getData per node shown (at most Options.MaxNodes per list), and per
// layout: a semaphore 1 getData (the recorded maximum); a twophase root 1
// getChildren per transaction and per site and 1 getData per vote,
// decision and liveness node; an unrecognised path 1 getChildren per child
// (at most MaxNodes) to look for twophase transactions. Nothing is written
// and no watch is left. ctx is checked before each request. The owners'
// liveness is not known yet: see ApplyLiveness.
func Inspect(ctx context.Context, r Reader, path string, o Options) (*Report, error) {
	if err := recipes.ValidatePath(path); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadPath, err)
	}
	now := time.Now
	if o.Now != nil {
		now = o.Now
	}
	in := &inspector{ctx: ctx, r: r, o: o, now: now(), sub: map[string][]string{}}
	rep := &Report{Path: path, At: in.now}
	children, exists, err := in.children(path)
	if err != nil {
		return nil, err
	}
	for _, name := range fixedChildren {
		if slices.Contains(children, name) {
			if in.sub[name], _, err = in.children(zkpath.Join(path, name)); err != nil {
				return nil, err
			}
		}
	}
	l := Recognise(exists, children, in.sub)
	if l.Kind == KindUnknown {
		if ok, err := in.isTwoPhase(path, children); err != nil {
			return nil, err
		} else if ok {
			l = Layout{Kind: KindTwoPhase}
		}
	}
	rep.Kind, rep.Foreign = l.Kind, l.Foreign
	if l.Kind != KindAbsent && l.Kind != KindEmpty && l.Kind != KindUnknown && l.Kind != KindTwoPhase {
		rep.Dialect = l.Dialect.String()
		if l.ZooKeeper {
			rep.Dialect = "zookeeper"
		}
	}
	switch l.Kind {
	case KindLock, KindRWLock, KindElection:
		err = in.contenders(rep, path, l)
	case KindSemaphore:
		err = in.semaphore(rep, path, l)
	case KindQueue:
		err = in.queue(rep, path, l)
	case KindDoubleBarrier:
		err = in.barrier(rep, path, l)
	case KindTwoPhase:
		err = in.twophase(rep, path, children)
	}
	if err != nil {
		return nil, err
	}
	return rep, nil
}

// inspector is one Inspect call's state.
type inspector struct {
	ctx context.Context
	r   Reader
	o   Options
	now time.Time
	// sub: the children of the path's fixed-name children (see
	// fixedChildren), listed once.
	sub map[string][]string
}

// children lists path; exists is false when it does not exist.
func (in *inspector) children(path string) (children []string, exists bool, err error) {
	if err := recipes.ContextError(in.ctx); err != nil {
		return nil, false, err
	}
	cs, _, err := in.r.Children(path)
	if errors.Is(err, zk.ErrNoNode) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("inspect: list %s: %w", path, err)
	}
	return cs, true, nil
}

// node reads one node; a node deleted since it was listed comes back with
// Gone set.
func (in *inspector) node(path, role string) (Node, error) {
	n := Node{Name: base(path), Path: path, Role: role}
	if err := recipes.ContextError(in.ctx); err != nil {
		return n, err
	}
	data, st, err := in.r.Get(path)
	if errors.Is(err, zk.ErrNoNode) {
		n.Gone = true
		return n, nil
	}
	if err != nil {
		return n, fmt.Errorf("inspect: read %s: %w", path, err)
	}
	n.Data = Printable(data)
	n.Created = time.UnixMilli(st.Ctime).UTC()
	n.Age = Duration(max(0, in.now.Sub(n.Created)))
	n.Czxid, n.Version = st.Czxid, st.Version
	if st.EphemeralOwner != 0 {
		n.Session = SessionHex(st.EphemeralOwner)
		n.owner = st.EphemeralOwner
	}
	return n, nil
}

// missing reports whether the node at path is gone now (or, with czxid
// not 0, was replaced by another node of that name). Cost: 1 getData.
func (in *inspector) missing(path string, czxid int64) (bool, error) {
	if err := recipes.ContextError(in.ctx); err != nil {
		return false, err
	}
	_, st, err := in.r.Get(path)
	if errors.Is(err, zk.ErrNoNode) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("inspect: read %s: %w", path, err)
	}
	return czxid != 0 && st.Czxid != czxid, nil
}

// nodes reads up to MaxNodes of names under parent, in order.
func (in *inspector) nodes(rep *Report, parent string, names []string, role string) ([]Node, error) {
	if len(names) > in.o.max() {
		names, rep.Truncated = names[:in.o.max()], true
	}
	out := make([]Node, 0, len(names))
	for _, name := range names {
		n, err := in.node(zkpath.Join(parent, name), role)
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, nil
}

func (in *inspector) contenders(rep *Report, path string, l Layout) error {
	names := make([]string, len(l.Contenders))
	for i, c := range l.Contenders {
		names[i] = c.Name
	}
	ns, err := in.nodes(rep, path, names, "")
	if err != nil {
		return err
	}
	holds := Holds(l.Kind, l.Contenders)
	for i := range ns {
		seq := l.Contenders[i].Seq
		ns[i].Seq, ns[i].Role, ns[i].Holds = &seq, roleName(l.Contenders[i].Role), holds[i]
	}
	rep.Contenders = ns
	if l.Kind == KindElection && len(ns) > 0 {
		leader := ns[0]
		rep.Leader = &leader
	}
	return nil
}

// semaphore reads Curator's InterProcessSemaphoreV2 layout (every child of
// "leases" is a lease; "locks" is the mutex acquirers queue on) or kazoo's
// (GUID leases beside its "lock").
func (in *inspector) semaphore(rep *Report, path string, l Layout) error {
	if l.Dialect.String() == recipes.Kazoo.String() {
		ns, err := in.nodes(rep, path, l.Members, "lease")
		if err != nil {
			return err
		}
		rep.Leases = ns
		if data, _, err := in.r.Get(path); err == nil {
			rep.Max, _ = strconv.Atoi(strings.TrimSpace(string(data)))
		}
		return in.mutexQueue(rep, zkpath.Join(path, kazooSemLock), in.sub[kazooSemLock], recipes.Kazoo)
	}
	leases := zkpath.Join(path, leasesChild)
	var err error
	if rep.Leases, err = in.nodes(rep, leases, lock.PermitOrder(in.sub[leasesChild]), "lease"); err != nil {
		return err
	}
	if data, _, err := in.r.Get(leases); err == nil {
		rep.Max, _ = strconv.Atoi(strings.TrimSpace(string(data)))
	}
	return in.mutexQueue(rep, zkpath.Join(path, locksChild), in.sub[locksChild], recipes.Curator)
}

// mutexQueue reads the contenders of a semaphore's guarding mutex.
func (in *inspector) mutexQueue(rep *Report, path string, names []string, d recipes.Dialect) error {
	l := Recognise(true, names, nil)
	if l.Kind != KindLock || l.Dialect.String() != d.String() {
		return nil
	}
	sub := &Report{}
	if err := in.contenders(sub, path, l); err != nil {
		return err
	}
	rep.Contenders, rep.Truncated = sub.Contenders, rep.Truncated || sub.Truncated
	return nil
}

// queue reads the items (of path, or of "entries" for kazoo's
// LockingQueue) and the claims under "taken": a claim node is named after
// the item it claims, ephemeral, and holds the claimant's identity.
func (in *inspector) queue(rep *Report, path string, l Layout) error {
	items, itemsPath := l.Items, path
	if l.Sub != "" {
		itemsPath = zkpath.Join(path, l.Sub)
		items = queue.ItemNames(l.Dialect, in.sub[l.Sub])
	}
	rep.Depth = len(items)
	names := make([]string, len(items))
	for i, it := range items {
		names[i] = it.Name
	}
	ns, err := in.nodes(rep, itemsPath, names, "item")
	if err != nil {
		return err
	}
	for i := range ns {
		p, seq := items[i].Priority, items[i].Seq
		ns[i].Priority, ns[i].Seq = &p, &seq
	}
	rep.Items = ns
	if !l.Claims {
		return nil
	}
	claimsPath := zkpath.Join(path, takenChild)
	claimNames := slices.Clone(in.sub[takenChild])
	slices.Sort(claimNames)
	if rep.Claims, err = in.nodes(rep, claimsPath, claimNames, "claim"); err != nil {
		return err
	}
	for _, c := range rep.Claims {
		if c.Gone || slices.Contains(names, c.Name) || rep.Truncated {
			continue
		}
		// The items were listed before the claims: the item may have
		// been put (and claimed) since, or acked with its claim (one
		// multi). Stale only if the item is missing now and the claim
		// still there after that.
		if gone, err := in.missing(zkpath.Join(itemsPath, c.Name), 0); err != nil || !gone {
			if err != nil {
				return err
			}
			continue
		}
		if gone, err := in.missing(c.Path, c.Czxid); err != nil {
			return err
		} else if !gone {
			rep.Stale = append(rep.Stale, Finding{Path: c.Path, Why: "claim on an item that is no longer queued"})
		}
	}
	return nil
}

func (in *inspector) barrier(rep *Report, path string, l Layout) error {
	ns, err := in.nodes(rep, path, l.Members, "member")
	if err != nil {
		return err
	}
	rep.Members, rep.Ready = ns, l.Ready
	if l.Ready && len(l.Members) == 0 {
		rep.Stale = append(rep.Stale, Finding{Path: zkpath.Join(path, readyChild),
			Why: "\"ready\" with no member left: the last leaver's session ended before it deleted it, so the next round's Enter passes at once"})
	}
	return nil
}

// Printable returns data as text when it is valid UTF-8 without control
// characters other than tab and newline, else "0x" and its hex. Pure.
func Printable(data []byte) string {
	if len(data) == 0 {
		return ""
	}
	if utf8.Valid(data) && !strings.ContainsFunc(string(data), func(r rune) bool {
		return (r < 0x20 && r != '\t' && r != '\n') || r == 0x7f
	}) {
		return string(data)
	}
	return fmt.Sprintf("0x%x", data)
}

// SessionHex renders a session id as ZooKeeper's logs and "cons" do.
func SessionHex(id int64) string { return "0x" + strconv.FormatUint(uint64(id), 16) }
