// Package report holds what a run of the chaos suite found and writes it
// out for people and for CI.
//
// What it holds:
//
//   - ScenarioResult and Summary (result.go, summary.go): what each
//     scenario did (its schedule, the targets its faults struck, its lease
//     margins, its history) and what every checker found; the text table.
//   - Status (status.go): what a checker's result amounts to (pass, fail,
//     voided, not exercised, inconclusive, capped, nothing checked) and
//     the verdicts of a scenario and of a run (pass, fail, not applicable,
//     incomplete); the cells of the tables derive from it (Cell,
//     CellClass, CellTitle, MarginCell).
//   - Attention (attention.go): what needs a reader's attention, failures
//     first, each with its replay command (replay.go) and page.
//   - The console (console.go): the progress line after each scenario (at
//     most ConsoleWidth columns, with the time elapsed and an estimate of
//     what is left) and the run's last line (FinalLine: PASS or FAIL, the
//     failing scenarios named).
//   - Write, WriteScenarioFiles, WriteIndex (report.go): the report
//     directory: index.html (html.go and report.html.tmpl: the verdict,
//     "needs attention", a summary table per workload), a page per
//     scenario under scenarios/ (fault windows as scheduled and as
//     injected, checks, violations with porcupine's visualisation of a
//     linearizability violation, a rate and latency picture: rate.go, a
//     timeline picture: timeline.go),
//     summary.json (json.go, SchemaVersion), junit.xml (junit.go) and each
//     scenario's history, gzipped, under history/. Each file is replaced
//     whole (written aside, then renamed): the runner writes them after
//     every scenario, so a run killed meanwhile leaves valid files.
//
// Invariants: the report shows what the runner recorded and nothing else:
// a cell, a line or a JUnit case is derived from the ScenarioResult alone;
// a scenario fails (FAIL, a JUnit failure or error) exactly when it has a
// violation or an error; a check that did not prove its invariant in full
// (voided, capped, inconclusive, not exercised, nothing checked) is a
// skipped JUnit case with its reason, never a pass, and never a green
// cell; a run that has not played every planned scenario is never a PASS.
// summary.json holds no number a float64 cannot hold exactly (the seed is
// a string). The package imports history, checkers and faults.
package report
