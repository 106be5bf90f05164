package scenarios_test

import (
	"strings"
	"testing"

	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/scenarios"
)

// TestExpectationTableCoversTheMatrix: every cell the matrix runs has a
// reviewed row, and every row names a lock and a scenario that exist, so
// the table can neither fall behind the matrix nor keep rows for cells
// that are gone.
func TestExpectationTableCoversTheMatrix(t *testing.T) {
	cells, err := scenarios.Cells(impls.All(), scenarios.Names())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cells {
		if _, err := c.Expect(); err != nil {
			t.Error(err)
		}
	}
	rows, err := scenarios.ExpectedRows()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range rows {
		parts := strings.Split(k, "|")
		if _, err := impls.Lookup(parts[0]); err != nil {
			t.Errorf("row %s: %v", k, err)
		}
		if _, err := scenarios.Lookup(parts[1]); err != nil {
			t.Errorf("row %s: %v", k, err)
		}
	}
}
