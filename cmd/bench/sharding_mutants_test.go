//go:build mutants

package main

import (
	"testing"

	"github.com/locklab/locklab/impls/mutant"
)

// The mutants' list, which exists only in a bench built with the tag.
func TestShardsCoverEveryMutantOnce(t *testing.T) {
	coversOnce(t, "mutants", mutant.Names())
}
