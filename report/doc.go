// Package report renders the lab's results for readers: markdown tables,
// written one way for every report (the correctness matrix, the mutants,
// explore, the benchmark and the lessons), and the one staged publish of a
// result dir; the static site of every result is package report/site. It
// renders what it is given and decides nothing: verdicts come from package
// checker.
package report
