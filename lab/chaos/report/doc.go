// Package report holds what a run of the chaos suite found and writes it
// out for people and for CI.
//
// What it holds:
//
//   - ScenarioResult and Summary (result.go, summary.go): what each
//     scenario did (its schedule, the targets its faults struck, its lease
//     margins, its history) and what every checker found; the text table
//     and the progress line zkchaos prints.
//   - Write (report.go): the report directory: index.html (html.go and
//     report.html.tmpl: totals, a summary table per workload, and per
//     scenario its schedule, a timeline picture (timeline.go) and its
//     violations), summary.json, junit.xml (junit.go: a suite per
//     scenario, a case for its run and one per checker, each with its real
//     time) and every scenario's history as JSON under history/.
//
// Invariants: the report shows what the runner recorded and nothing else:
// a cell, a line or a JUnit case is derived from the ScenarioResult alone;
// a scenario fails (FAIL, a JUnit failure or error) exactly when it has a
// violation or an error; an inconclusive check is a skipped JUnit case,
// never a pass. The package imports history, checkers and faults.
package report
