// Package inspect is the logic of the zkrecipes command (cmd/zkrecipes):
// it recognises the recipe at a ZooKeeper path from its children's names
// (Recognise, pure), reads what it needs to show who holds what (Inspect,
// reads only), renders that as text or JSON (WriteText, WriteJSON), asks a
// lock holder to release (Curator's revocation protocol, through
// lock.Revoke) and redraws a path as it changes (the watch command).
//
// Names are parsed with the recipes' own code: recipes.Dialect.Parse and
// recipes.SortBySeq for contenders, the recipes' predicates for who holds
// (Holds), queue.ItemNames for queue items, barrier.Members for barrier
// members and twophase's layout names; only ZooKeeper's own lock and
// election recipes, which no package here speaks, are parsed in this
// package (zookeeper.go).
//
// "Nodes of sessions that no longer exist" are found in two ways (see
// sessions.go): ephemeral nodes whose owner session is connected to no
// server (the "cons" four-letter word on every server), and persistent
// nodes a dead session left half done (Report.Stale).
//
// Invariant: nothing but Main's revoke command writes; an Inspect call
// leaves no watch set and reads a bounded number of nodes
// (Options.MaxNodes per list). No input panics: bad paths, flags and
// server answers come back as errors wrapping this package's sentinels.
package inspect
