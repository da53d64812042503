// Package leader will hold leader election on the recipes core: Election
// (Campaign, Resign, Leader, Observe), Run (a selector loop with requeue) and
// Do (run once as leader), with lifecycle events, in Curator's LeaderLatch
// wire format by default. Nothing is implemented yet.
package leader
