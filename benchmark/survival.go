package benchmark

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/record"
)

// noFault is the matrix's one scenario without a fault: surviving it says
// nothing about faults.
const noFault = "contention"

// LoadSurvival reads the verdict matrix. A missing file is not an error
// (nil, nil: the decision chart is left out); an unreadable one is.
func LoadSurvival(path string) (map[string]record.Survival, error) {
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the verdict matrix: %w", err)
	}
	var cells []record.Cell
	if err := json.Unmarshal(raw, &cells); err != nil {
		return nil, fmt.Errorf("decode the verdict matrix %s: %w", path, err)
	}
	out := map[string]record.Survival{}
	seen := map[[2]string]bool{}
	for _, c := range cells {
		if c.Impl == "" || c.Scenario == "" {
			return nil, fmt.Errorf("decode the verdict matrix %s: a row without impl or scenario", path)
		}
		k := [2]string{c.Impl, c.Scenario}
		if c.Fencing || c.Scenario == noFault || seen[k] {
			continue
		}
		seen[k] = true
		s := out[c.Impl]
		s.Applied++
		if checker.Survived(c.Verdict) {
			s.Safe++
		}
		out[c.Impl] = s
	}
	return out, nil
}
