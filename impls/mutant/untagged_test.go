//go:build !mutants

package mutant_test

import (
	"testing"

	"github.com/locklab/locklab/impls/mutant"
)

// The mutants' own tests (mutant_test.go) build only with the tag; `make
// test` runs them in a second, tagged pass. Saying so here keeps a plain
// `go test ./impls/mutant/` from looking as if they had passed.
func TestMutantsNeedTheTag(t *testing.T) {
	t.Skipf("mutants are compiled in only with -tags %s: `go test -tags %s ./impls/mutant/` (make test runs it) checks the registry and that the matrix catches them",
		mutant.Tag, mutant.Tag)
}
