// Package mutant is the lab's test-only switch that breaks one of our
// correct locks in a known, small way, so that the verdict matrix can be
// shown to catch it (`bench mutants`). A lock the matrix calls safe is only
// as convincing as the matrix's power to call a broken one unsafe.
//
// Mutants are compiled in only under the build tag "mutants" (Tag): each
// lock package keeps its broken variants in a mutants.go built with the tag
// and the lock as written in an unmutated.go built without it, so a
// production build (`go build ./...`, `bench matrix`, `bench bench`) holds
// no mutant code and no lock package imports this one. Without the tag this
// package is only this file: the names a production binary needs to refuse
// a mutant it cannot run.
//
// With the tag, at most one mutant is live at a time, named by the
// environment variable LOCKLAB_MUTANT (read once, at start). Worker
// processes re-execute the binary that started them, so they carry the same
// tag, and they inherit the environment, so a mutant is live in every
// client of a fault scenario. With the variable unset every On returns
// false and the locks are unchanged.
package mutant

// EnvVar names the live mutant.
const EnvVar = "LOCKLAB_MUTANT"

// Tag is the build tag that compiles the mutants in: `go build -tags
// mutants`, as `make mutants` does.
const Tag = "mutants"
