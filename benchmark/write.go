package benchmark

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/locklab/locklab/cluster/leftovers"
	"github.com/locklab/locklab/record"
	"github.com/locklab/locklab/report"
)

// Write renders the report and its charts and publishes them into dir
// (report.Publish): every file is rendered into a staging dir first and
// moved into place only once all are written, so a failure leaves dir as
// it was. Charts of an earlier report that this one lacks are left alone.
func Write(rep *record.Bench, dir string) ([]string, error) {
	charts, err := RenderCharts(rep)
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
	if err := WriteMarkdown(rep, &md); err != nil {
		return nil, err
	}
	files["bench.md"] = md.Bytes()
	js, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode bench.json: %w", err)
	}
	files["bench.json"] = append(js, '\n')
	return publish(files, dir)
}

// WriteMarkdownOnly renders bench.md again from rep (a bench.json read
// back) and publishes it into dir as Write does, leaving the JSON and the
// charts as they are: the charts are drawn from samples bench.json does
// not keep.
func WriteMarkdownOnly(rep *record.Bench, dir string) ([]string, error) {
	var md bytes.Buffer
	if err := WriteMarkdown(rep, &md); err != nil {
		return nil, err
	}
	return publish(map[string][]byte{"bench.md": md.Bytes()}, dir)
}

// publish writes files into a staging dir and moves them into dir at once
// (report.Publish).
func publish(files map[string][]byte, dir string) ([]string, error) {
	// A lab dir (package leftovers), so a run killed while writing leaves
	// no staging dir behind for good.
	stage, err := leftovers.MakeDir("bench")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(stage)
	names := make([]string, 0, len(files))
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(stage, name), b, 0o644); err != nil {
			return nil, err
		}
		names = append(names, name)
	}
	return report.Publish(stage, dir, names)
}
