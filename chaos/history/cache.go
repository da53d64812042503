package history

// The event and the operation of the cache workload (see workloads.Cache).
const (
	// KindCacheEvent: an event a cache (Client) delivered about the node
	// at Key: Detail is its type ("added", "updated", "removed", or
	// "reset" and "initialized", which name no node), Value the node's
	// Stat.Mzxid and Arg its Stat.Czxid (0 for a removal).
	KindCacheEvent Kind = "cache-event"
	// FnConverge is a round's wait for a cache to equal ZooKeeper's state of
	// the tree at Key, read directly once the writers paused: invoked when
	// that state was read (Arg = the round), ok once the cache's view
	// equals it (Value = the milliseconds it took), failed when it still
	// differed after the workload's bound (Detail says how).
	FnConverge Fn = "converge"
)
