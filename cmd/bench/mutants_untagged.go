//go:build !mutants

package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/locklab/locklab/impls/mutant"
)

// mutantsCmd, in a bench built without the mutants tag, has no mutants to
// run: they are compiled in only with the tag, so that a production build
// holds none of them (see package mutant).
func mutantsCmd(_ context.Context, _ []string, _, _ io.Writer) error {
	return fmt.Errorf("%w: this bench was built without the %q build tag and holds no mutants: run `make mutants` or `go run -tags %s ./cmd/bench mutants`",
		errUsage, mutant.Tag, mutant.Tag)
}

// liveMutant is "" in a bench built without the mutants tag, where no
// mutant can be live. A LOCKLAB_MUTANT set anyway is refused rather than
// ignored: whoever set it expects a broken lock, and a verdict on the lock
// as written must never pass for the mutant's.
func liveMutant() (string, error) {
	if name := os.Getenv(mutant.EnvVar); name != "" {
		return "", fmt.Errorf("%w: %s=%s is set, but this bench was built without the %q build tag and holds no mutants: run it with `go run -tags %s ./cmd/bench`",
			errUsage, mutant.EnvVar, name, mutant.Tag, mutant.Tag)
	}
	return "", nil
}
