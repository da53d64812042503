package discovery

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/zkrecipes/internal/zkpath"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// Discovery is curator-x-discovery's ServiceDiscovery on one base path of
// one Session: it registers instances ("<base>/<name>/<id>") and queries
// them. It keeps no cache; a Provider does.
//
// A Discovery is safe for concurrent use. Its only state is the set of
// names and ids it registers (so that one Discovery does not register the
// same instance twice).
type Discovery struct {
	s    *recipes.Session
	base string

	mu   sync.Mutex
	regs map[string]*Registration // by path, while registered
}

// New returns a Discovery of the services under basePath (Curator's
// ServiceDiscoveryBuilder.basePath). Nothing is sent to ZooKeeper. It
// fails, wrapping a sentinel, on a nil session (recipes.ErrNilSession) or
// an invalid path or one in the reserved /zookeeper tree
// (recipes.ErrInvalidPath); the root "/" is allowed. A closed session is
// reported by every method as recipes.ErrClosed.
func New(s *recipes.Session, basePath string) (*Discovery, error) {
	if s == nil {
		return nil, fmt.Errorf("discovery: %w", recipes.ErrNilSession)
	}
	if err := recipes.ValidateParentPath(basePath); err != nil {
		return nil, fmt.Errorf("discovery: base path: %w", err)
	}
	return &Discovery{s: s, base: basePath, regs: make(map[string]*Registration)}, nil
}

// BasePath returns the base path.
func (d *Discovery) BasePath() string { return d.base }

// Session returns the Session the Discovery uses.
func (d *Discovery) Session() *recipes.Session { return d.s }

// ServicePath returns the path of the service's node ("<base>/<name>"),
// whose children are its instances. It fails, wrapping ErrInvalidInstance
// and recipes.ErrBadArgument, when name is empty, and with
// recipes.ErrInvalidPath when it is not a usable node name. Pure.
func (d *Discovery) ServicePath(name string) (string, error) {
	if err := checkSegment("name", name); err != nil {
		return "", err
	}
	p := zkpath.Join(d.base, name)
	if err := recipes.ValidateWritePath(p); err != nil {
		return "", fmt.Errorf("%w: name %q: %w", ErrInvalidInstance, name, err)
	}
	return p, nil
}

// InstancePath returns the path of an instance's node
// ("<base>/<name>/<id>"). Errors as ServicePath, for the name and the id.
// Pure.
func (d *Discovery) InstancePath(name, id string) (string, error) {
	sp, err := d.ServicePath(name)
	if err != nil {
		return "", err
	}
	if err := checkSegment("id", id); err != nil {
		return "", err
	}
	p := zkpath.Join(sp, id)
	if err := recipes.ValidateWritePath(p); err != nil {
		return "", fmt.Errorf("%w: id %q: %w", ErrInvalidInstance, id, err)
	}
	return p, nil
}

// checkSegment refuses a name or id that is not one path segment (Curator
// would nest a "/" in it); the characters ZooKeeper forbids are left to
// ValidatePath.
func checkSegment(what, v string) error {
	switch {
	case v == "":
		return fmt.Errorf("%w: empty %s: %w", ErrInvalidInstance, what, recipes.ErrBadArgument)
	case strings.Contains(v, "/"), v == ".", v == "..":
		return fmt.Errorf("%w: %s %q is not a node name: %w", ErrInvalidInstance, what, v, recipes.ErrInvalidPath)
	}
	return nil
}

// check reports a nil receiver or a done ctx (a done ctx sends nothing).
func (d *Discovery) check(ctx context.Context) error {
	if d == nil {
		return ErrNilReceiver
	}
	if err := recipes.ContextError(ctx); err != nil {
		return fmt.Errorf("discovery %s: %w", d.base, err)
	}
	return nil
}

// Names returns the names of the services under the base path, sorted
// (Curator's queryForNames). A missing base path lists as none. Cost: 1
// getChildren (retried on connection errors); nothing when ctx is done.
func (d *Discovery) Names(ctx context.Context) ([]string, error) {
	if err := d.check(ctx); err != nil {
		return nil, err
	}
	names, err := d.list(ctx, d.base)
	if err != nil {
		return nil, fmt.Errorf("discovery: names under %s: %w", d.base, err)
	}
	return names, nil
}

// Instances returns the instances of service name, sorted by node name
// (Curator's queryForInstances). A service with no node lists as none; a
// node deleted between the listing and its read, and a node whose data is
// not an instance's JSON, are left out (Curator's query would fail on the
// latter; Instance reports it). Cost: 1 getChildren + 1 getData per
// instance (each retried on connection errors); nothing when ctx is done.
func (d *Discovery) Instances(ctx context.Context, name string) ([]Instance, error) {
	if err := d.check(ctx); err != nil {
		return nil, err
	}
	sp, err := d.ServicePath(name)
	if err != nil {
		return nil, err
	}
	ids, err := d.list(ctx, sp)
	if err != nil {
		return nil, fmt.Errorf("discovery: instances of %s: %w", sp, err)
	}
	out := make([]Instance, 0, len(ids))
	for _, id := range ids {
		inst, err := d.read(ctx, zkpath.Join(sp, id))
		switch {
		case err == nil:
			out = append(out, inst)
		case errors.Is(err, ErrNotFound), errors.Is(err, ErrMalformed):
		default:
			return nil, err
		}
	}
	return out, nil
}

// Instance returns the instance id of service name (Curator's
// queryForInstance). It fails with an error wrapping ErrNotFound (and
// zk.ErrNoNode) when there is no such node, ErrMalformed when its data is
// not an instance's JSON. Cost: 1 getData (retried on connection errors);
// nothing when ctx is done.
func (d *Discovery) Instance(ctx context.Context, name, id string) (Instance, error) {
	if err := d.check(ctx); err != nil {
		return Instance{}, err
	}
	p, err := d.InstancePath(name, id)
	if err != nil {
		return Instance{}, err
	}
	return d.read(ctx, p)
}

// list returns path's children, sorted; none when path does not exist.
func (d *Discovery) list(ctx context.Context, path string) ([]string, error) {
	children, err := recipes.Do(ctx, d.s, func(conn *zk.Conn, _ int64) ([]string, error) {
		c, _, err := conn.Children(path)
		return c, err
	})
	if errors.Is(err, zk.ErrNoNode) {
		return []string{}, nil
	}
	if err != nil {
		return nil, err
	}
	slices.Sort(children)
	return children, nil
}

// read reads and decodes the instance at path.
func (d *Discovery) read(ctx context.Context, path string) (Instance, error) {
	data, err := recipes.Do(ctx, d.s, func(conn *zk.Conn, _ int64) ([]byte, error) {
		b, _, err := conn.Get(path)
		return b, err
	})
	switch {
	case errors.Is(err, zk.ErrNoNode):
		return Instance{}, fmt.Errorf("%w: %s: %w", ErrNotFound, path, err)
	case err != nil:
		return Instance{}, fmt.Errorf("discovery: read %s: %w", path, err)
	}
	inst, err := Unmarshal(data)
	if err != nil {
		return Instance{}, fmt.Errorf("discovery: %s: %w", path, err)
	}
	return inst, nil
}
