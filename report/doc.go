// Package report renders the lab's results for readers. For now that is
// markdown tables, written one way for every report (the correctness
// matrix, the mutants, explore, the benchmark and the lessons); charts and
// the site are to follow. It renders what it is given and decides nothing:
// verdicts come from package checker.
package report
