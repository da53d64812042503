package lock

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/internal/zkpath"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// CountNode names the shared count a Semaphore takes its maximum from
// (NewSemaphoreCount), as Curator's InterProcessSemaphoreV2 takes it from a
// SharedCountReader: *shared.Count is one. The count's node holds a 32-bit
// integer as 4 bytes, big endian (Curator's SharedCount layout).
type CountNode interface {
	// Path returns the path of the count's node.
	Path() string
	// Seed returns the count a missing node is created with.
	Seed() int32
}

// NewSemaphoreCount returns a semaphore at path whose maximum is the value
// of the shared count at count.Path(), read when an acquirer decides, so
// that a change of the count by any process (Go's shared.Count, Curator's
// SharedCount) is honoured by the next decision and wakes the acquirer
// waiting for a permit. A count below 1 grants no permit. A missing count
// node is created with count.Seed() (its missing parents as containers),
// as shared.Count and Curator's SharedCount do; a node that does not hold
// 4 bytes fails the acquisition with ErrBadCount. The count is read on the
// Semaphore's session, whatever session the count value itself was made
// with. Nothing is recorded (see Semaphore).
//
// It sends nothing. It fails as NewSemaphore does, and on a nil count
// (recipes.ErrBadArgument) or an invalid count path (recipes.ErrInvalidPath,
// recipes.ErrDataTooLarge).
func NewSemaphoreCount(s *recipes.Session, path string, count CountNode, opts ...Option) (*Semaphore, error) {
	cfg := config(opts)
	if err := checkArgs(s, path, cfg, recipes.RoleLease); err != nil {
		return nil, err
	}
	if count == nil {
		return nil, fmt.Errorf("lock: %w: nil count", recipes.ErrBadArgument)
	}
	cp := count.Path()
	if err := recipes.ValidateWritePath(cp); err != nil {
		return nil, fmt.Errorf("lock: count: %w", err)
	}
	seed := count.Seed()
	if err := recipes.CheckRequest(s.MaxData(), &zk.CreateRequest{Path: cp, Data: encodeCount(seed), Acl: s.ACLFor(cp)}); err != nil {
		return nil, fmt.Errorf("lock: count %s: %w", cp, err)
	}
	return &Semaphore{s: s, path: path, cfg: cfg, count: count, countPath: cp, seed: seed}, nil
}

func encodeCount(n int32) []byte { return binary.BigEndian.AppendUint32(nil, uint32(n)) }

// decodeCount reads a count node's data (Curator's SharedCount: 4 bytes,
// big endian). Pure.
func decodeCount(b []byte) (int32, error) {
	if len(b) != 4 {
		return 0, fmt.Errorf("%w: %d bytes", ErrBadCount, len(b))
	}
	return int32(binary.BigEndian.Uint32(b)), nil
}

type countRead struct {
	data []byte
	stat *zk.Stat
}

// ifMissing says what max does when the count node is missing.
type ifMissing bool

const (
	readOnly      ifMissing = false // read it as the seed, write nothing
	createMissing ifMissing = true  // create it with the seed
)

// max returns the maximum in force and, count-based, the count node's
// modification zxid: a fresh read (1 getData), never a cached value. With
// createMissing, a missing node is created with the seed (1 create, and 1
// createContainer per missing parent level); without, it reads as the
// seed and nothing is written.
func (sem *Semaphore) max(ctx context.Context, create ifMissing) (int, int64, error) {
	if sem.count == nil {
		return sem.n, 0, nil
	}
	for {
		r, err := recipes.Do(ctx, sem.s, func(conn *zk.Conn, _ int64) (countRead, error) {
			data, st, err := conn.Get(sem.countPath)
			return countRead{data, st}, err
		})
		switch {
		case err == nil:
			v, err := decodeCount(r.data)
			if err != nil {
				return 0, 0, fmt.Errorf("count %s: %w", sem.countPath, err)
			}
			return int(v), r.stat.Mzxid, nil
		case recipes.Stopped(err):
			return 0, 0, err
		case errors.Is(err, zk.ErrNoNode) && create == readOnly:
			return int(sem.seed), 0, nil
		case errors.Is(err, zk.ErrNoNode):
			if err := sem.createCount(ctx); err != nil {
				return 0, 0, err
			}
		default:
			return 0, 0, fmt.Errorf("read count %s: %w", sem.countPath, err)
		}
	}
}

// createCount makes the count node with the seed; a node that exists
// (someone else's create, or our own retried one) is fine. Cost (through
// recipes.CreateUnder): 1 create, +1 createContainer per missing parent
// level, +1 getACL on an authenticated Session's first create under the
// parent (an error wrapping recipes.ErrOpenParent under an open one).
func (sem *Semaphore) createCount(ctx context.Context) error {
	parent, _ := zkpath.Split(sem.countPath)
	err := recipes.CreateUnder(ctx, sem.s, parent, func(conn *zk.Conn, _ int64) error {
		_, err := conn.Create(sem.countPath, encodeCount(sem.seed), 0, sem.s.ACLFor(sem.countPath))
		return err
	})
	switch {
	case err == nil, errors.Is(err, zk.ErrNodeExists):
		return nil
	case recipes.Stopped(err):
		return err
	}
	return fmt.Errorf("create count %s: %w", sem.countPath, err)
}

// checkRecord makes sure, under the mutex, that the permits node records
// our fixed maximum (see Semaphore): nothing to do when this Semaphore has
// seen the record at this very node and version; otherwise 1 getData when
// there is a record, and 1 setData when there is none, or one that no
// other permit is held under. l is the first listing after our permits hs
// were created. Count-based semaphores record nothing.
func (sem *Semaphore) checkRecord(ctx context.Context, l listing, hs []*recipes.Holding) error {
	if sem.count != nil {
		return nil
	}
	leases := sem.leasesPath()
	if l.stat == nil {
		return fmt.Errorf("list %s: no stat", leases)
	}
	seen := nodeVersion{l.stat.Czxid, l.stat.Version}
	sem.mu.Lock()
	ok := sem.verified == seen
	sem.mu.Unlock()
	if ok {
		return nil
	}
	others := len(l.children) - len(hs)
	var data []byte
	if l.stat.DataLength > 0 {
		r, err := sem.readLeases(ctx)
		if err != nil {
			return err
		}
		data, seen = r.data, nodeVersion{r.stat.Czxid, r.stat.Version}
	}
	for {
		switch {
		case bytes.Equal(data, sem.record):
			sem.mu.Lock()
			sem.verified = seen
			sem.mu.Unlock()
			return nil
		case len(data) > 0 && others > 0:
			return fmt.Errorf("%w (%w): %s records a maximum of %q, this semaphore has %d, and %d other lease(s) are held",
				ErrMaxMismatch, recipes.ErrBadArgument, leases, data, sem.n, others)
		}
		// No record, or one no other permit is held under: write ours, with
		// the version read, so a concurrent write is never overwritten
		// blindly. (Do sends it again after a connection error: if the
		// first one was applied, the second fails with ErrBadVersion and
		// the record is read back.)
		st, err := recipes.Do(ctx, sem.s, func(conn *zk.Conn, _ int64) (*zk.Stat, error) {
			return conn.Set(leases, sem.record, seen.version)
		})
		switch {
		case err == nil:
			data, seen = sem.record, nodeVersion{st.Czxid, st.Version}
		case errors.Is(err, zk.ErrBadVersion):
			r, err := sem.readLeases(ctx)
			if err != nil {
				return err
			}
			data, seen = r.data, nodeVersion{r.stat.Czxid, r.stat.Version}
		case recipes.Stopped(err):
			return err
		default:
			return fmt.Errorf("record maximum in %s: %w", leases, err)
		}
	}
}

// readLeases reads the permits node's data. Cost: 1 getData.
func (sem *Semaphore) readLeases(ctx context.Context) (countRead, error) {
	leases := sem.leasesPath()
	r, err := recipes.Do(ctx, sem.s, func(conn *zk.Conn, _ int64) (countRead, error) {
		data, st, err := conn.Get(leases)
		return countRead{data, st}, err
	})
	if errors.Is(err, zk.ErrNoNode) {
		return r, fmt.Errorf("%w: %w", recipes.ErrNodeNotFound, err)
	}
	if err != nil && !recipes.Stopped(err) {
		err = fmt.Errorf("read %s: %w", leases, err)
	}
	return r, err
}
