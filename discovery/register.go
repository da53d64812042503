package discovery

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

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
