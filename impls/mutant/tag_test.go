package mutant_test

import (
	"go/build"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/locklab/locklab/impls/mutant"
)

const mutantImport = "github.com/locklab/locklab/impls/mutant"

// importers lists the packages under impls/ (this one aside) whose files,
// as the build tags select them, import package mutant.
func importers(t *testing.T, tags []string) []string {
	t.Helper()
	ctx := build.Default
	ctx.BuildTags = tags
	var out []string
	err := filepath.WalkDir("..", func(path string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() || filepath.Base(path) == "mutant" {
			return err
		}
		pkg, err := ctx.ImportDir(path, 0)
		if _, none := err.(*build.NoGoError); none {
			return nil
		}
		if err != nil {
			return err
		}
		if slices.Contains(pkg.Imports, mutantImport) {
			out = append(out, filepath.ToSlash(path))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// A production build holds no mutant: without the tag no lock package
// imports this one, while with it the six lock families that have mutants
// do. The second half keeps the first honest: a renamed tag, or a
// mutants.go that lost its constraint, would make them differ.
func TestOnlyTheTagCompilesMutantsIn(t *testing.T) {
	if got := importers(t, nil); len(got) != 0 {
		t.Errorf("without the %q tag these packages import package mutant: %v; put the mutant code in a file built only with the tag", mutant.Tag, got)
	}
	want := []string{"../etcdlock", "../mysqllock", "../pglock", "../redisfair", "../redislock", "../redisson", "../redlock", "../zklock"}
	if got := importers(t, []string{mutant.Tag}); !slices.Equal(got, want) {
		t.Errorf("with the %q tag the packages importing package mutant are %v, want %v", mutant.Tag, got, want)
	}
}
