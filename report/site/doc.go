// Package site renders the lab's committed results as one static site a
// person opens in a browser: the verdict matrix (a table per topology, one
// shown at a time behind tabs of plain CSS), the benchmark's targets
// and charts, the explore and mutation tables, a page per lock and a page
// per cell. It is plain HTML with its CSS inline and no script of its own,
// readable from file:// with no server and nothing fetched from the
// internet.
//
// The site renders what the results say and decides nothing: a cell's
// agreement with its expectation is asked of package checker, as every
// other report does. Porcupine's pages stay the timelines (the faults are
// annotations on them): the site links and frames the files the matrix
// and explore wrote, by relative paths, rather than copying or redrawing
// them.
package site
