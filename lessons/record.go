package lessons

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// loadRecord reads a measured record the pages keep beside them (sale.json,
// takeover.json); nil, nil when there is none yet (never measured).
func loadRecord[T any](dir, name string) (*T, error) {
	path := filepath.Join(dir, name)
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var r T
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &r, nil
}

// saveRecord writes a measured record as indented JSON beside the pages.
func saveRecord(dir, name string, r any) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, name), append(b, '\n'), 0o644)
}
