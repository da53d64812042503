// Package lock provides distributed mutual exclusion on ZooKeeper: Mutex
// (Curator's InterProcessMutex wire format by default, kazoo's as an
// option), MultiMutex (several Mutex paths held all or nothing, taken in
// one global order: Curator's InterProcessMultiLock), Semaphore (Curator's
// InterProcessSemaphoreV2 wire format: a fixed maximum, recorded so that
// peers with another are refused, or one read from a shared count that may
// change at run time; several permits at once; a try that writes nothing
// when no permit is free) and revocation (Curator's protocol: "__REVOKE__"
// written into the holder's node).
//
// # Usage
//
//	s, err := recipes.Connect(ctx, []string{"127.0.0.1:2181"}) // one Session per process
//	defer s.Close()
//	m, err := lock.New(s, "/app/locks/report")      // checks its arguments, sends nothing
//	err = m.Lock(ctx)                               // uncontended: 1 create + 1 getChildren
//	defer m.Unlock(ctx)                             // 1 delete
//	<-m.Context().Done()                            // the lock may be lost (context.Cause says why)
//	_, err = m.FencedMulti(ctx, &zk.SetDataRequest{Path: "/app/report", Data: b, Version: -1})
//
// ExampleMutex has it in full, compiled (the examples are in example_test.go; go
// doc does not print them); ExampleSemaphore and ExampleMultiMutex show the
// others.
//
// Every holding exposes a context that is cancelled, with a cause that
// errors.Is one of the recipes sentinels (recipes.ErrSuspended,
// recipes.ErrLeaseExpired, recipes.ErrSessionLost, recipes.ErrNodeDeleted,
// recipes.ErrRevoked, recipes.ErrReleased), the moment it may be lost, and a
// fencing token; FencedMulti makes ZooKeeper itself reject writes once the
// holding is gone.
//
// What the context guarantees: it is done, on the holder's own monotonic
// clock, at the latest the session's lease margin (recipes.WithLeaseMargin;
// a tenth of the negotiated session timeout by default) before the server
// can expire the session, whatever the loss policy and whatever
// go-zookeeper has noticed: the session's lease runs from the send time of
// the newest request or ping the server answered (see
// recipes.Session.LeaseDeadline) and costs no request. So a holder that
// checks the context before each action stops before any other client can
// acquire the lock or permit, provided the action takes effect within the
// margin. A process paused between its check and its action is not
// covered: only a fenced write (FencedMulti) is a guarantee against that.
// The fencing token is our node's czxid, read from the create's reply (the
// Session taps its connection's reply headers), so it costs no request.
//
// Releasing follows recipes.Held.Release for Mutex.Unlock and Permit.Release
// alike: nil only when a live holding was released; otherwise an error that
// errors.Is recipes.ErrReleased: ErrNotHeld (which matches it) when nothing
// is held, sending nothing, or, after the holding was lost, an error that
// also wraps the loss's cause.
//
// Requests per operation (measured on the wire by the package's tests):
//
//	Mutex.Lock, uncontended     1 create + 1 getChildren
//	Mutex.Lock, queued          1 create + 1 getChildren + 1 getData (watch),
//	                            then nothing more when the one ahead leaves
//	                            if it was the only one ahead; 1 getData more
//	                            with two ahead; 1 getChildren more with more
//	Mutex.TryLock, held         1 getChildren, no write
//	Mutex.TryLock, free         1 getChildren + 1 create + 1 getChildren
//	Mutex.Unlock                1 delete; wakes exactly the one waiter behind
//	Mutex.Context, first call   1 getData (in the background, arms the watch)
//	WithRevocation              +1 getData per acquisition
//	Semaphore.Acquire, free     5: mutex (1 create + 1 getChildren), permit
//	                            (1 create), 1 getChildren of the permits,
//	                            mutex release (1 delete); the first one of a
//	                            Semaphore on a permits node +1 setData (no
//	                            record yet) or +1 getData (a record to read)
//	  count-based               6: the same + 1 getData of the count
//	Semaphore.AcquireN(k)       the same with k permit creates
//	Semaphore.TryAcquire, full  1 getChildren (+1 getData, count-based);
//	                            mutex held: +1 getChildren; no write
//	Semaphore.TryAcquire, free  7 (9 count-based): the listing (and the
//	                            count), 1 getChildren of the mutex, then
//	                            Acquire's 5 (6)
//	Semaphore.Participants      1 getChildren + 1 getData per permit
//	Permit.Release               1 delete (Permits.Release: 1 per permit)
//	MultiMutex.Lock             a Mutex.Lock per path, in sorted order
//	MultiMutex.Unlock           1 delete per path
//	MultiMutex.FencedMulti      1 multi (a version check per held node)
//	a second Unlock or Release  nothing (recipes.ErrReleased)
//	Revoke                      1 setData
//
// # Permissions
//
// ZooKeeper checks a create and a delete against the parent's ACL, a
// setData against the node's, a read against the node's. A Mutex (and each
// path of a MultiMutex) needs CREATE and DELETE on the lock's path (its
// contender node; a failed TryLock deletes it) and READ on the path and on
// the node ahead; Unlock needs DELETE on the path; Revoke needs WRITE on the
// holder's node; Participants and observers need READ. A Semaphore needs
// the same on <path>/locks (its guarding mutex), CREATE and DELETE on
// <path>/leases, CREATE on <path> the first time, WRITE on <path>/leases
// (the recorded maximum), READ on all three (and on the count node of
// NewSemaphoreCount). With recipes.DefaultAuthACL (the default of an
// authenticated Session) only the creator's principals can do all of this
// and anyone can read; grant other principals with recipes.WithACLProvider.
// An authenticated Session refuses a lock path that anyone may create or
// delete under (recipes.ErrOpenParent). docs/security.md lists
// every package.
//
// Bad input, nil receivers and nil contexts follow the conventions of
// every zkrecipes package (see "Conventions" in package recipes): a
// method on a nil receiver that returns an error returns ErrNilReceiver.
package lock
