package interop

import (
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/lab/internal/peers"
	sharedrecipe "github.com/zkrecipes/zkrecipes/shared"
)

// TestSharedCountWithCurator: Go Counts and Curator SharedCounts increment
// the same node concurrently with compare-and-set; no increment is lost,
// and each side reads the other's value (4 bytes, big endian).
func TestSharedCountWithCurator(t *testing.T) {
	forEachRelease(t, func(t *testing.T, rel peers.Release) {
		e := ensemble(t)
		ctx := ctxFor(t, 3*time.Minute)
		path := "/interop/shared-count/" + strconv.FormatInt(time.Now().UnixNano(), 36)
		java := startPeer(t, rel, peers.Curator, e.ConnectString())
		c, err := sharedrecipe.NewCount(session(t, e.Addrs()), path, 0)
		if err != nil {
			t.Fatal(err)
		}

		// Java first: its seed and its writes are read by Go.
		if out, err := java.Do(ctx, "count-add "+path+" 3"); err != nil || out != "3" {
			t.Fatalf("count-add = %q, %v", out, err)
		}
		if got, err := c.Get(ctx); err != nil || got.Value != 3 {
			t.Fatalf("Go read %+v, %v; want 3", got, err)
		}

		const each = 40
		var wg sync.WaitGroup
		var javaErr, goErr error
		wg.Add(2)
		go func() {
			defer wg.Done()
			_, javaErr = java.Do(ctx, "count-add "+path+" "+strconv.Itoa(each))
		}()
		go func() {
			defer wg.Done()
			for i := 0; i < each && goErr == nil; {
				var cur sharedrecipe.Versioned[int32]
				if cur, goErr = c.Get(ctx); goErr != nil {
					break
				}
				var ok bool
				if _, ok, goErr = c.TrySet(ctx, cur, cur.Value+1); ok {
					i++
				}
			}
		}()
		wg.Wait()
		if javaErr != nil || goErr != nil {
			t.Fatalf("java: %v, go: %v", javaErr, goErr)
		}
		want := 3 + 2*each
		out, err := java.Do(ctx, "count-get "+path)
		if err != nil || strings.TrimSpace(out) != strconv.Itoa(want) {
			t.Fatalf("Curator reads %q, %v; want %d", out, err, want)
		}
		if got, err := c.Get(ctx); err != nil || int(got.Value) != want {
			t.Fatalf("Go reads %+v, %v; want %d", got, err, want)
		}
	})
}

// TestAtomicLongWithCurator: Go Longs and a Curator DistributedAtomicLong,
// both promoted to the same lock, increment one node concurrently; every
// increment reported as succeeded is in the final value, on both sides.
func TestAtomicLongWithCurator(t *testing.T) {
	forEachRelease(t, func(t *testing.T, rel peers.Release) {
		e := ensemble(t)
		ctx := ctxFor(t, 3*time.Minute)
		base := "/interop/atomic-long/" + strconv.FormatInt(time.Now().UnixNano(), 36)
		path, lockPath := base+"/n", base+"/lock"
		java := startPeer(t, rel, peers.Curator, e.ConnectString())
		l, err := sharedrecipe.NewLong(session(t, e.Addrs()), path, sharedrecipe.WithAttempts(3), sharedrecipe.WithPromotion(lockPath))
		if err != nil {
			t.Fatal(err)
		}
		const each = 40
		var wg sync.WaitGroup
		var javaOut string
		var javaErr, goErr error
		goFailed := 0
		wg.Add(2)
		go func() {
			defer wg.Done()
			javaOut, javaErr = java.Do(ctx, "along-add "+path+" "+lockPath+" "+strconv.Itoa(each))
		}()
		go func() {
			defer wg.Done()
			for i := 0; i < each; {
				r, err := l.Increment(ctx)
				if err != nil {
					goErr = err
					return
				}
				if r.Succeeded {
					i++
				} else {
					goFailed++
				}
			}
		}()
		wg.Wait()
		if javaErr != nil || goErr != nil {
			t.Fatalf("java: %v, go: %v", javaErr, goErr)
		}
		n, err := l.Get(ctx)
		if err != nil || n != 2*each {
			t.Fatalf("Go reads %d, %v; want %d", n, err, 2*each)
		}
		if out, err := java.Do(ctx, "along-get "+path); err != nil || out != strconv.Itoa(2*each) {
			t.Fatalf("Curator reads %q, %v; want %d", out, err, 2*each)
		}
		t.Logf("changes that gave up after their attempts: Go %d, Curator %s", goFailed, javaOut)
	})
}
