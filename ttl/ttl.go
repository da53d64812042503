// Package ttl runs work once per period, whoever runs it, with ZooKeeper's
// TTL nodes: persistent nodes that outlive the session that created them
// and that the server deletes on its own once they have gone unmodified,
// and childless, for their time to live.
//
// # Usage
//
//	claim, won, err := ttl.Once(ctx, s, "/app/nightly-report/"+day, 36*time.Hour, data)
//	if !won { ... }  // another caller runs this period: claim.Data, claim.Created say who and when
//	// ... run the period's work
//
// ExampleOnce has it in full, compiled (example_test.go).
//
// Once creates such a node at a path; the one caller whose create made it
// does the period's work, every other caller finds it there and skips. A
// process that dies after claiming does not release the period early (the
// node is not ephemeral), and nobody needs to clean up.
//
// Servers: TTL nodes are one of ZooKeeper's extended types (3.5.3 and
// later), off by default. The server needs zookeeper.extendedTypesEnabled
// set to true (a Java system property, or extendedTypesEnabled=true in
// zoo.cfg). A server without them refuses the create, and Once returns an
// error wrapping ErrUnsupported.
//
// Timing: the server deletes expired TTL nodes in its container sweep,
// every znode.container.checkIntervalMs (1 minute by default), so a claim
// lasts at least its period and at most about a sweep interval longer.
// Choose periods well above the sweep interval, or shorten the interval.
//
// Node data: a 36-byte claim id (a random UUID in text form) followed by
// the caller's data. The id lets a claim whose create's answer was lost to
// a connection failure find out, exactly, whether its create was applied.
//
// Cost: Once is 1 createTTL when the period is free (1 createContainer more
// per missing parent level), 1 createTTL and 1 getData when it is claimed;
// an authenticated Session's first claim under a parent adds 1 getACL
// (recipes.CreateUnder's squatting check: a parent that lets anyone create
// or delete children fails with an error wrapping recipes.ErrOpenParent).
// Nothing is sent when ctx is done.
//
// # Permissions
//
// Once needs CREATE on the parent (a TTL node per period) and READ on the
// node (to see who claimed a period). See docs/security.md.
package ttl

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/google/uuid"

	"github.com/zkrecipes/zkrecipes/internal/zkpath"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// Sentinel errors of package ttl. Errors from this package wrap them, or the
// recipes sentinels (recipes.ErrInvalidPath, recipes.ErrNilSession,
// recipes.ErrBadArgument, recipes.ErrDataTooLarge, recipes.ErrClosed), or
// go-zookeeper's errors, so that errors.Is reaches all of them.
var (
	// ErrUnsupported: the server refused a TTL node: its extended types are
	// off (zookeeper.extendedTypesEnabled), or it predates them.
	ErrUnsupported = errors.New("ttl: server has no TTL nodes (zookeeper.extendedTypesEnabled is off)")
)

// idLen is the length of a claim id: a UUID in its 36-character text form.
const idLen = 36

// MaxTTL is the longest time to live a server accepts: TTLs are kept in
// 40 bits of milliseconds.
const MaxTTL = time.Duration(1<<40-1) * time.Millisecond

// Claim is a period's claim node as read from ZooKeeper.
type Claim struct {
	Path    string
	ID      string    // the claim id of whoever created it
	Data    []byte    // the caller's data that came with it
	Created time.Time // the server's creation time (ctime)
	Czxid   int64
}

// Once claims path for one period of length period: it returns true when
// this call created the claim (the caller does the period's work), or false
// with the claim that someone else made first (the period is taken). data
// is stored with the claim for whoever reads it (for example who ran and
// when). The claim node is deleted by the server once it has gone
// unmodified for period (see the package doc on timing).
//
// It fails, sending nothing, on a nil session (recipes.ErrNilSession), an
// invalid path (recipes.ErrInvalidPath), a period not between 1 ms and
// MaxTTL (recipes.ErrBadArgument), or data too large
// (recipes.ErrDataTooLarge); with ErrUnsupported on a server without TTL
// nodes. A connection lost after the create was sent does not make Once
// guess: it reads the node and compares claim ids. Cost: see the package
// doc.
func Once(ctx context.Context, s *recipes.Session, path string, period time.Duration, data []byte) (Claim, bool, error) {
	if s == nil {
		return Claim{}, false, fmt.Errorf("ttl: %w", recipes.ErrNilSession)
	}
	if err := recipes.ValidateWritePath(path); err != nil {
		return Claim{}, false, fmt.Errorf("ttl: %w", err)
	}
	if period < time.Millisecond || period > MaxTTL {
		return Claim{}, false, fmt.Errorf("ttl: %w: period %v", recipes.ErrBadArgument, period)
	}
	id := uuid.NewString()
	body := append([]byte(id), data...)
	// A createTTL is a create with 8 bytes more (the TTL).
	sized := &zk.CreateRequest{Path: path, Data: append(bytes.Clone(body), make([]byte, 8)...), Acl: s.ACLFor(path)}
	if err := recipes.CheckRequest(s.MaxData(), sized); err != nil {
		return Claim{}, false, fmt.Errorf("ttl: %s: %w", path, err)
	}
	if err := recipes.ContextError(ctx); err != nil {
		return Claim{}, false, fmt.Errorf("ttl %s: %w", path, err)
	}
	parent, _ := zkpath.Split(path)
	for {
		var lost error // our create's answer, lost with the connection
		err := recipes.CreateUnder(ctx, s, parent, func(conn *zk.Conn, _ int64) error {
			_, err := conn.CreateTTL(path, body, zk.FlagTTL, s.ACLFor(path), period)
			if recipes.IsConnErr(err) {
				lost = err
				return nil
			}
			return err
		})
		switch {
		case lost != nil, errors.Is(err, zk.ErrNodeExists):
			// Someone's claim, or ours if the lost create was applied.
			c, err := read(ctx, s, path)
			if errors.Is(err, zk.ErrNoNode) {
				continue // nobody's (or expired already): try again
			}
			if err != nil {
				return Claim{}, false, err
			}
			return c, c.ID == id, nil
		case err == nil:
			return Claim{Path: path, ID: id, Data: bytes.Clone(data)}, true, nil
		case recipes.Stopped(err):
			return Claim{}, false, fmt.Errorf("ttl %s: %w", path, err)
		case unimplemented(err):
			return Claim{}, false, fmt.Errorf("%w: create %s: %w", ErrUnsupported, path, err)
		default:
			return Claim{}, false, fmt.Errorf("ttl: create %s: %w", path, err)
		}
	}
}

// unimplemented reports the server's UNIMPLEMENTED answer (code -6), which
// go-zookeeper v1.0.4 has no named error for.
func unimplemented(err error) bool {
	return err != nil && err.Error() == "unknown error: -6"
}

// Read returns the claim at path: an error wrapping zk.ErrNoNode when the
// period is free. Cost: 1 getData.
func Read(ctx context.Context, s *recipes.Session, path string) (Claim, error) {
	if s == nil {
		return Claim{}, fmt.Errorf("ttl: %w", recipes.ErrNilSession)
	}
	if err := recipes.ValidatePath(path); err != nil {
		return Claim{}, fmt.Errorf("ttl: %w", err)
	}
	return read(ctx, s, path)
}

func read(ctx context.Context, s *recipes.Session, path string) (Claim, error) {
	type got struct {
		data []byte
		stat *zk.Stat
	}
	g, err := recipes.Do(ctx, s, func(conn *zk.Conn, _ int64) (got, error) {
		data, stat, err := conn.Get(path)
		return got{data, stat}, err
	})
	if err != nil {
		return Claim{}, fmt.Errorf("ttl: read %s: %w", path, err)
	}
	c := Claim{Path: path, Created: time.UnixMilli(g.stat.Ctime), Czxid: g.stat.Czxid}
	if len(g.data) >= idLen {
		c.ID, c.Data = string(g.data[:idLen]), g.data[idLen:]
	} else {
		c.Data = g.data // not written by Once
	}
	return c, nil
}
