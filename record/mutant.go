package record

import "github.com/locklab/locklab/checker"

// MutantCell is one cell of a mutant's lock, run with the mutant live (or
// not run, with the reason). It lives here, beside Cell, and not in the
// mutants command, which is compiled only with the mutants build tag:
// whatever reads results/mutants.json (the report site) is built without it.
type MutantCell struct {
	Cell     string             `json:"cell"`
	Expected checker.Verdict    `json:"expected"`
	Verdict  checker.Verdict    `json:"verdict,omitempty"` // with the mutant live; "" when not run
	Caught   bool               `json:"caught"`
	NotRun   string             `json:"not_run,omitempty"` // why the cell was not run
	Seed     int64              `json:"seed,omitempty"`
	Sections int                `json:"sections_checked,omitempty"`
	Grants   int                `json:"grants_after_fault,omitempty"`
	Detail   string             `json:"detail,omitempty"`
	Figures  map[string]float64 `json:"figures,omitempty"`
	Seconds  float64            `json:"seconds,omitempty"`
	// Unmutated is the same cell's verdict with no mutant, run right after
	// a catch so that the catch is the mutant's doing and not the cell's.
	Unmutated checker.Verdict `json:"unmutated,omitempty"`
}

// Mutant is one row of results/mutants.json: written by `bench
// mutants`, read by the report site.
type Mutant struct {
	Mutant   string       `json:"mutant"`
	Lock     string       `json:"lock"`
	Breaks   string       `json:"breaks"`
	Catcher  string       `json:"designed_catcher"`
	Caught   bool         `json:"caught"`
	CaughtBy []string     `json:"caught_by"`
	Cells    []MutantCell `json:"cells"`
}
