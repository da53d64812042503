// Package inspect is the logic of the zkrecipes command (cmd/zkrecipes),
// kept with the command: it is no library API and makes no compatibility
// promise. It recognises the recipe at a ZooKeeper path from its
// children's names and, for layouts with fixed child names, the names
// under those (Recognise, pure), reads what it needs to show who holds what (Inspect,
// reads only), learns whether each owner session is connected (Sessions,
// ApplyLiveness), renders that as text or JSON (WriteText, WriteJSON), asks
// a lock holder to release (Curator's revocation protocol, through
// lock.Revoke) and redraws a path as it changes (the watch command).
//
// Names are parsed with the recipes' own code: recipes.Dialect.Parse and
// recipes.SortBySeq for contenders, the recipes' predicates for who holds
// (Holds), queue.ItemNames for queue items, barrier.Members for barrier
// members and twophase's layout names; only ZooKeeper's own lock and
// election recipes, which no package here speaks, are parsed in this
// package (zookeeper.go).
//
// The command is used on live ensembles, so it must not raise false
// alarms. An owner is "disconnected" only when every member of the
// ensemble (its membership learned from the ensemble itself, not from the
// servers the operator named) answered "cons" twice without listing it
// and its node was still there after; when that cannot be known it is
// "unknown" (see sessions.go). A layout recognised by fixed child names is
// recognised only when the names under them parse. "Stale" findings are
// re-checked before they are reported where the reads could race a
// recipe's own steps (a queue claim on an item no longer queued).
//
// Invariant: nothing but Main's revoke command writes; an Inspect call
// leaves no watch set and reads a bounded number of nodes
// (Options.MaxNodes per list). No input panics: bad paths, flags and
// server answers come back as errors wrapping this package's sentinels.
package inspect
