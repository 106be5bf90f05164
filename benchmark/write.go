package benchmark

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
)

// Write renders the report and its charts and moves them into dir. Every
// file is rendered into a temporary directory beside dir first and renamed
// into place only once all are written, so a failure leaves dir as it was.
func Write(rep *Report, dir string) ([]string, error) {
	charts, err := rep.RenderCharts()
	if err != nil {
		return nil, err
	}
	rep.Charts = nil
	for name := range charts {
		rep.Charts = append(rep.Charts, name)
	}
	slices.Sort(rep.Charts)

	files := map[string][]byte{}
	for name, b := range charts {
		files[name] = b
	}
	var md bytes.Buffer
	if err := rep.WriteMarkdown(&md); err != nil {
		return nil, err
	}
	files["bench.md"] = md.Bytes()
	js, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode bench.json: %w", err)
	}
	files["bench.json"] = append(js, '\n')

	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(filepath.Clean(dir)), ".bench-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	var names []string
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(tmp, name), b, 0o644); err != nil {
			return nil, err
		}
		names = append(names, name)
	}
	slices.Sort(names)
	var written []string
	for _, name := range names {
		dst := filepath.Join(dir, name)
		if err := os.Rename(filepath.Join(tmp, name), dst); err != nil {
			return written, err
		}
		written = append(written, dst)
	}
	return written, nil
}
