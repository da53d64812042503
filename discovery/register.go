package discovery

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/zkrecipes/internal/zkpath"
	"github.com/zkrecipes/zkrecipes/persistent"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// maxDisplace bounds how many times Register deletes a node that another
// client holds at its path and creates its own (Curator tries twice).
const maxDisplace = 3

// Registration is one instance registered by a Discovery: its node
// "<base>/<name>/<id>" holds the instance's JSON. A Dynamic instance's node
// is EPHEMERAL and kept by a persistent.Node: after the session is lost
// (expired, or replaced by go-zookeeper's next session) or the node is
// deleted by someone else, it is created again, with the latest data, as
// soon as a session is usable. A Static or Permanent instance's node is
// PERSISTENT: it outlives the session and the process until unregistered.
// Present says when the node may be absent.
//
// Invariants: while a Dynamic Registration is registered and its Session
// open, its node is created again within one round trip of the session
// being usable after the node went away, unless another client holds a
// node at the same path (then the Registration leaves it alone and creates
// its own once that one is gone: two registrants of one id never delete
// each other's nodes in a loop). Every node the Registration creates
// carries the data of the latest Update that returned (or that is in
// progress). It never writes or deletes another session's node except in
// Register's replacement (see Register).
//
// A Registration is safe for concurrent use. Update and Leave are
// serialized.
type Registration struct {
	d    *Discovery
	path string
	mode int32 // zk create flags: 0 (persistent) or zk.FlagEphemeral

	op chan struct{} // 1 slot: held while writing the node or changing state

	mu   sync.Mutex // guards inst for Instance (written under op and mu)
	inst Instance

	// Guarded by op.
	data  []byte
	done  bool             // unregistered
	node  *persistent.Node // keeps a Dynamic instance's node
	czxid int64            // Static, Permanent: our node's czxid (0: unknown)

	present context.Context // Static and Permanent: done at Leave
	release context.CancelCauseFunc
}

// Register registers inst and returns its Registration (Curator's
// registerService). Before anything is sent, inst is checked and
// completed: an empty ServiceType becomes Dynamic and a zero
// RegistrationTime becomes now, as Curator's builder does; the error wraps
// ErrInvalidInstance (and recipes.ErrInvalidPath for a name or id that is
// not a node name, else recipes.ErrBadArgument) for an empty name or id,
// one that is not a node name, a port outside 0..65535, a service type
// other than Dynamic, Static or Permanent, a payload Curator cannot read
// (see Instance), an Extra field named like a known one; it wraps
// recipes.ErrDataTooLarge when the JSON does not fit in a request, and
// ErrAlreadyRegistered when this Discovery already registers name and id.
//
// A node already at the path (a previous run of the same instance whose
// session has not expired yet, or another registrant of the id) is
// replaced, as Curator does (it deletes and creates so that watchers see
// the change): here in one multi, a delete with the node's version and
// our create, so that the other registrant's persistent.Node cannot put
// its node back in between (for Static and Permanent, with a setData of
// the same data in the same multi, whose answer carries our node's czxid
// for Leave: such a node starts at data version 1; data too large to
// go twice in a request is sent once, and the czxid read afterwards with 1
// exists). Cost: Static or
// Permanent: 1 create (+1 createContainer per missing parent level, the
// parents being container nodes as Curator makes them, and the create
// again; +1 getACL on an authenticated Session's first create under the
// service's path, see recipes.CreateUnder, whose ErrOpenParent it returns;
// +1 exists and 1 multi per node replaced). Dynamic: 1 exists (is the path free?), then
// persistent.Node.Start: 1 create + 1 exists setting its watch (+1
// createContainer per missing parent level and the create again); a node
// replaced: +1 multi, and the Node adopts it (its create fails, 1
// getData). Nothing when ctx is done. A Dynamic Registration then keeps
// its node (see persistent.Node: 1 exists per event on the node, 1 create
// + 1 exists per re-creation) until Leave or the Session's close.
func (d *Discovery) Register(ctx context.Context, inst Instance) (*Registration, error) {
	if err := d.check(ctx); err != nil {
		return nil, err
	}
	if inst.ServiceType == "" {
		inst.ServiceType = Dynamic
	}
	if inst.RegistrationTime.IsZero() {
		inst.RegistrationTime = time.Now()
	}
	path, data, err := d.prepare(inst)
	if err != nil {
		return nil, err
	}
	r := &Registration{d: d, path: path, op: make(chan struct{}, 1), inst: inst, data: data}
	if inst.ServiceType.IsDynamic() {
		r.mode = zk.FlagEphemeral
	}
	d.mu.Lock()
	if d.regs[path] != nil {
		d.mu.Unlock()
		return nil, fmt.Errorf("%w: %s", ErrAlreadyRegistered, path)
	}
	d.regs[path] = r
	d.mu.Unlock()

	r.op <- struct{}{}
	defer func() { <-r.op }()
	if r.mode == zk.FlagEphemeral {
		err = r.startNode(ctx)
	} else {
		_, err = r.create(ctx, displaceIt)
	}
	if err != nil {
		d.forget(r)
		return nil, fmt.Errorf("discovery: register %s: %w", path, err)
	}
	if r.node == nil {
		r.present, r.release = context.WithCancelCause(context.Background())
	}
	return r, nil
}

// startNode replaces another client's node at the path with ours, as
// Curator's register does (displace), then hands the node to a
// persistent.Node, which adopts it, or creates it, and keeps it.
func (r *Registration) startNode(ctx context.Context) error {
	sid, err := r.displace(ctx)
	if err != nil {
		return err
	}
	n, err := persistent.New(r.d.s, r.path, persistent.WithData(r.data))
	if err != nil {
		return err
	}
	if err := n.Start(ctx); err != nil {
		if sid != 0 {
			r.d.s.DeleteGuaranteed(r.path, sid) // ours, from displace
		}
		return err
	}
	r.node = n
	return nil
}

// displace replaces a node that another client holds at r's path (another
// session's, or a persistent one) with ours, in one multi: a delete with
// its version and our create, so that the other registrant's
// persistent.Node cannot put its node back in between; its watchers still
// see the deletion. It
// does nothing when the path is free or holds a node of our session. It
// returns the session of the node it created (0: none). Cost: 1 exists (+1
// multi per node replaced, at most maxDisplace times).
func (r *Registration) displace(ctx context.Context) (int64, error) {
	s := r.d.s
	type found struct {
		ok  bool
		st  *zk.Stat
		sid int64
	}
	for range maxDisplace {
		f, err := recipes.Do(ctx, s, func(conn *zk.Conn, id int64) (found, error) {
			ok, st, err := conn.Exists(r.path)
			return found{ok, st, id}, err
		})
		if err != nil || !f.ok || f.st.EphemeralOwner == f.sid {
			return 0, err
		}
		var sid int64
		err = recipes.Exec(ctx, s, func(conn *zk.Conn, id int64) error {
			sid = id
			res, err := conn.Multi(&zk.DeleteRequest{Path: r.path, Version: f.st.Version},
				&zk.CreateRequest{Path: r.path, Data: r.data, Acl: s.ACLFor(r.path), Flags: r.mode})
			for _, op := range res {
				if op.Error != nil {
					return op.Error
				}
			}
			return err
		})
		switch {
		case err == nil:
			return sid, nil
		case !errors.Is(err, zk.ErrNoNode) && !errors.Is(err, zk.ErrBadVersion):
			return 0, err
		}
		// Changed or gone meanwhile (or our multi applied before a lost
		// answer): look again.
	}
	return 0, fmt.Errorf("another client keeps a node at the path: %w", zk.ErrNodeExists)
}

// Present returns a context that is not done while the instance's node
// is present. For a Dynamic instance it is the persistent.Node's Present:
// done, with its cause, from the moment the node may be absent (session
// lost, node deleted, another registrant's node at the path) until it is
// created again, when Present returns a new one. For a Static or Permanent
// instance, whose node is persistent, it is done only by Leave. After
// Leave it is done with recipes.ErrReleased. No ZooKeeper calls.
func (r *Registration) Present() context.Context {
	if r == nil {
		ctx, cancel := context.WithCancelCause(context.Background())
		cancel(ErrNilReceiver)
		return ctx
	}
	if r.node != nil {
		return r.node.Present()
	}
	return r.present
}

// prepare checks an instance for registration and returns its path and
// JSON.
func (d *Discovery) prepare(inst Instance) (string, []byte, error) {
	path, err := d.InstancePath(inst.Name, inst.ID)
	if err != nil {
		return "", nil, err
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s: %s: %w", ErrInvalidInstance, path, fmt.Sprintf(format, args...), recipes.ErrBadArgument)
	}
	switch inst.ServiceType {
	case Dynamic, Static, Permanent:
	case DynamicSequential:
		return "", nil, bad("service type %s is not supported by Register (its node name is not its id)", inst.ServiceType)
	default:
		return "", nil, bad("unknown service type %q", inst.ServiceType)
	}
	for _, p := range []int{inst.Port, inst.SSLPort} {
		if p < 0 || p > 65535 {
			return "", nil, bad("port %d out of range", p)
		}
	}
	if err := checkPayload(inst.Payload); err != nil {
		return "", nil, fmt.Errorf("%w: %w", err, recipes.ErrBadArgument)
	}
	data, err := inst.MarshalJSON()
	if err != nil {
		return "", nil, fmt.Errorf("%w: %w", err, recipes.ErrBadArgument)
	}
	// The largest request: the multi that replaces another node.
	if err := recipes.CheckMulti(d.s.MaxData(), &zk.DeleteRequest{Path: path},
		&zk.CreateRequest{Path: path, Data: data, Acl: d.s.ACLFor(path)}); err != nil {
		return "", nil, fmt.Errorf("discovery: %s: %w", path, err)
	}
	return path, data, nil
}

// forget removes r from its Discovery's registrations.
func (d *Discovery) forget(r *Registration) {
	d.mu.Lock()
	if d.regs[r.path] == r {
		delete(d.regs, r.path)
	}
	d.mu.Unlock()
}

// Path returns the instance's node path.
func (r *Registration) Path() string { return r.path }

// Instance returns the instance as last registered or updated.
func (r *Registration) Instance() Instance {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.inst
}

// lock takes the write slot, or fails with ctx's error.
func (r *Registration) lock(ctx context.Context) error {
	select {
	case r.op <- struct{}{}:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("discovery %s: %w", r.path, recipes.ContextError(ctx))
	}
}

// Update replaces the registered instance's data with inst (Curator's
// updateService): same name and id (else ErrInvalidInstance), an empty
// ServiceType or a zero RegistrationTime keep the registered ones, and the
// service type cannot change (its node's mode would). inst is checked as
// by Register. A Dynamic node is written by its persistent.Node
// (SetData): on our node only, with its version; while the node is absent
// Update waits for its re-creation, which carries the new data (and if ctx
// ends first, the data is still recorded for it). A Static or Permanent
// node is likewise written only while it is the node this Registration
// created (its czxid, as for Leave), with the version read, and
// created again if it is gone; when another registrant's node holds the
// path (it replaced ours), Update leaves it alone and fails with an error
// wrapping zk.ErrNodeExists (Curator writes whatever node holds the path).
// Cost: 1 setData (Dynamic: +1 exists, the Node's watch set again after
// its own write; Static: +1 exists, the owner check); nothing when ctx is
// done. Fails with ErrUnregistered after Leave.
func (r *Registration) Update(ctx context.Context, inst Instance) error {
	if r == nil {
		return ErrNilReceiver
	}
	if ctx == nil {
		return recipes.ErrNilContext
	}
	if err := recipes.ContextError(ctx); err != nil {
		return fmt.Errorf("discovery %s: %w", r.path, err)
	}
	if err := r.lock(ctx); err != nil {
		return err
	}
	defer func() { <-r.op }()
	if r.done {
		return fmt.Errorf("%w: %s", ErrUnregistered, r.path)
	}
	if inst.Name != r.inst.Name || inst.ID != r.inst.ID {
		return fmt.Errorf("%w: update of %s names %q/%q: %w", ErrInvalidInstance, r.path, inst.Name, inst.ID, recipes.ErrBadArgument)
	}
	if inst.ServiceType == "" {
		inst.ServiceType = r.inst.ServiceType
	}
	if inst.ServiceType != r.inst.ServiceType {
		return fmt.Errorf("%w: update of %s changes its service type from %s to %s: %w", ErrInvalidInstance, r.path, r.inst.ServiceType, inst.ServiceType, recipes.ErrBadArgument)
	}
	if inst.RegistrationTime.IsZero() {
		inst.RegistrationTime = r.inst.RegistrationTime
	}
	_, data, err := r.d.prepare(inst)
	if err != nil {
		return err
	}
	r.mu.Lock()
	r.inst = inst
	r.mu.Unlock()
	r.data = data
	if r.node != nil {
		err = r.node.SetData(ctx, data)
	} else {
		err = r.setOurs(ctx)
	}
	if err != nil {
		return fmt.Errorf("discovery: update %s: %w", r.path, err)
	}
	return nil
}

// Leave stops keeping the node and deletes it (Curator's
// unregisterService); Present is then done with recipes.ErrReleased. A
// Dynamic node is deleted by its persistent.Node, only while it is ours
// (ephemeral owner and czxid), so another registrant's node at the same
// path is left alone; a Static or Permanent one likewise only while it is
// the node this Registration created (its czxid, learnt from the create's
// reply; see recipes.Session.DeleteOwned for the one round trip in which a
// replacement could still be deleted). When ctx ends or the connection
// fails before the delete is answered, the delete goes on in the
// background (a guaranteed delete, with the same check: a Static node
// under any later session, a Dynamic node while its session lives, as it
// goes with its session anyway): a Static node's Leave then returns
// ctx's error, a Dynamic one's nil. On a closed
// Session the error wraps recipes.ErrClosed (a Dynamic node went with the
// session). Cost: 1 exists + 1 delete. With a done ctx, or one that ends
// while an Update is in progress, nothing is sent and nothing changes:
// Leave returns ctx's error and may be called again. Leaving
// again after success returns ErrUnregistered.
func (r *Registration) Leave(ctx context.Context) error {
	if r == nil {
		return ErrNilReceiver
	}
	if ctx == nil {
		return recipes.ErrNilContext
	}
	if err := recipes.ContextError(ctx); err != nil {
		return fmt.Errorf("discovery %s: %w", r.path, err)
	}
	if err := r.lock(ctx); err != nil {
		return err
	}
	defer func() { <-r.op }()
	if r.done {
		return fmt.Errorf("%w: %s", ErrUnregistered, r.path)
	}
	r.done = true
	r.d.forget(r)
	if r.node != nil {
		if err := r.node.Leave(ctx); err != nil {
			return fmt.Errorf("discovery: unregister %s: %w", r.path, err)
		}
		if r.d.s.State() == recipes.StateClosed {
			return fmt.Errorf("discovery: unregister %s: %w", r.path, recipes.ErrClosed)
		}
		return nil
	}
	r.release(fmt.Errorf("%w: %s", recipes.ErrReleased, r.path))
	// Only our node: one that another registrant created at the path since
	// (it replaced ours) is left alone, now and by the background delete
	// that takes over when ctx ends first (nothing on a closed Session).
	if err := r.d.s.DeleteOwned(ctx, r.path, r.czxid, 0); err != nil {
		return fmt.Errorf("discovery: unregister %s: %w", r.path, err)
	}
	return nil
}

// readCzxid reads the czxid of the node at r's path, for a create whose
// reply the create tap missed (1 exists): the node read may already be
// another registrant's that replaced ours since, the one case in which
// Leave could delete (and Update write) a node that is not ours. 0
// when it cannot be read (Leave then deletes, and Update writes,
// whatever node is at the path).
func (r *Registration) readCzxid(ctx context.Context) int64 {
	st, err := r.stat(ctx)
	if err != nil || st == nil {
		return 0
	}
	return st.Czxid
}

// stat reads the stat of the node at r's path (1 exists, retried through
// recipes.Do), nil when there is none.
func (r *Registration) stat(ctx context.Context) (*zk.Stat, error) {
	return recipes.Do(ctx, r.d.s, func(conn *zk.Conn, _ int64) (*zk.Stat, error) {
		ok, st, err := conn.Exists(r.path)
		if err == nil && !ok {
			st = nil
		}
		return st, err
	})
}

// setOurs writes r.data to r's persistent node (Static, Permanent) only
// while it is the node this Registration created: its czxid is r.czxid
// (any node when that is unknown, 0). Each attempt reads the node's stat
// (1 exists) and writes at the version read (1 setData), reading again
// when the version changed meanwhile (or when a write's answer was lost:
// its repeat then fails on the version, and the next attempt writes the
// same data again). A node gone is created again, as ours (create without
// displacing); another registrant's node at the path is left alone and
// the error wraps zk.ErrNodeExists. ZooKeeper has no write conditional on
// a czxid: as for recipes.Session.DeleteOwned, the one round trip between the
// exists and the setData is the window in which a replacement, created
// with the very version read, would still be written. Errors: ctx's
// (Stopped), recipes.ErrClosed, or the server's answer. The caller holds
// r.op.
func (r *Registration) setOurs(ctx context.Context) error {
	for {
		st, err := r.stat(ctx)
		switch {
		case err != nil:
			return err
		case st == nil:
			taken, err := r.create(ctx, leaveIt)
			if err != nil || !taken {
				return err
			}
			continue // another registrant's node came first: look at it
		case r.czxid != 0 && st.Czxid != r.czxid:
			return fmt.Errorf("another registrant's node replaced ours: %w", zk.ErrNodeExists)
		}
		err = recipes.Exec(ctx, r.d.s, func(conn *zk.Conn, _ int64) error {
			_, err := conn.Set(r.path, r.data, st.Version)
			return err
		})
		if err == nil || !errors.Is(err, zk.ErrBadVersion) && !errors.Is(err, zk.ErrNoNode) {
			return err
		}
		// Changed or gone meanwhile: look again.
	}
}

// ifTaken says what create does with a node already at the path.
type ifTaken bool

const (
	leaveIt    ifTaken = false // leave it and report taken
	displaceIt ifTaken = true  // replace it with ours
)

// create writes r's persistent node (Static, Permanent) with r.data; the
// caller holds r.op. With displace, a node already at the path (another
// registrant's, or ours from a create whose answer was lost) is replaced
// by ours in one multi (a delete with its version, our create), at most
// maxDisplace times; without, it is left alone and create reports taken.
// Errors: ctx's (Stopped), recipes.ErrClosed, or the server's answer.
func (r *Registration) create(ctx context.Context, displace ifTaken) (taken bool, err error) {
	s := r.d.s
	parent, _ := zkpath.Split(r.path)
	for displaced := 0; ; {
		var czxid int64
		err := recipes.CreateUnder(ctx, s, parent, func(*zk.Conn, int64) error {
			var err error
			_, czxid, err = s.CreateTapped(r.path, r.data, r.mode, s.ACLFor(r.path))
			return err
		})
		switch {
		case err == nil:
			if czxid == 0 {
				czxid = r.readCzxid(ctx)
			}
			r.czxid = czxid
			return false, nil
		case !errors.Is(err, zk.ErrNodeExists):
			return false, err
		case displace == leaveIt:
			return true, nil
		case displaced >= maxDisplace:
			return false, fmt.Errorf("another client keeps a node at the path: %w", zk.ErrNodeExists)
		}
		displaced++
		st, err := r.stat(ctx)
		if err != nil {
			return false, err
		}
		if st == nil {
			continue // gone meanwhile
		}
		// The setData (same data, in the same transaction) answers with
		// the new node's stat, hence its czxid: the create tap does not
		// read multis. It leaves the node at data version 1.
		// Data too large to go twice in one request: no setData, and the
		// czxid is read afterwards (readCzxid).
		ops := []any{&zk.DeleteRequest{Path: r.path, Version: st.Version},
			&zk.CreateRequest{Path: r.path, Data: r.data, Acl: s.ACLFor(r.path), Flags: r.mode},
			&zk.SetDataRequest{Path: r.path, Data: r.data, Version: 0}}
		if recipes.CheckMulti(s.MaxData(), ops...) != nil {
			ops = ops[:2]
		}
		czxid = 0
		err = recipes.Exec(ctx, s, func(conn *zk.Conn, _ int64) error {
			res, err := conn.Multi(ops...)
			for _, op := range res {
				if op.Error != nil {
					return op.Error
				}
			}
			if err == nil && len(res) == 3 && res[2].Stat != nil {
				czxid = res[2].Stat.Czxid
			}
			return err
		})
		switch {
		case err == nil:
			if czxid == 0 {
				czxid = r.readCzxid(ctx)
			}
			r.czxid = czxid
			return false, nil
		case !errors.Is(err, zk.ErrNoNode) && !errors.Is(err, zk.ErrBadVersion):
			return false, err
		}
		// Changed or gone meanwhile (or our multi applied before a lost
		// answer): look again.
	}
}
