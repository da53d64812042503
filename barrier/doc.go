// Package barrier will hold Barrier (set, remove, wait) and DoubleBarrier
// (enter and leave with n members, Curator's DistributedDoubleBarrier names).
// Nothing is implemented yet.
package barrier
