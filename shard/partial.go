package shard

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Partial is what one shard of a run writes: enough to tell which run it
// belongs to, and the full results of the cells it ran, with the files
// they link (counterexamples), so that the shards' partials alone make the
// whole run's results.
type Partial struct {
	// Command is the command that ran: "matrix", "explore", "mutants".
	Command string `json:"command"`
	// Commit is the lab's commit the bench was built from.
	Commit string `json:"commit"`
	// Options are the options that decide the run's cells and verdicts
	// (runs, TTL, seed, the cells chosen, the server mode...), as the
	// command wrote them: shards whose options differ are not one run.
	Options json.RawMessage `json:"options"`
	// Args is the command line without -shard: the unsharded run's.
	Args  []string `json:"args"`
	Shard Shard    `json:"shard"`
	// Total is the number of cells in the whole run, every shard's.
	Total int `json:"total_cells"`
	// Seconds is how long this shard ran.
	Seconds float64 `json:"seconds"`
	Cells   []Cell  `json:"cells"`
	// Files are the files the cells' results link, by their path relative
	// to the results directory (e.g. counterexamples/x.html).
	Files map[string][]byte `json:"files,omitempty"`
}

// Cell is one cell's result in a partial: its key (what the split hashes),
// its position in the whole run's order, and the command's own result
// record for it.
type Cell struct {
	Key      string          `json:"key"`
	Position int             `json:"position"`
	Result   json.RawMessage `json:"result"`
}

// FileName is the name of a shard's partial result:
// "matrix.shard-0-of-4.json".
func FileName(command string, s Shard) string {
	return fmt.Sprintf("%s.shard-%d-of-%d.json", command, s.Index, s.Count)
}

// filePattern matches every partial result's file name in a directory.
const filePattern = "*.shard-*-of-*.json"

// Write writes p into dir under FileName, atomically (a temporary file
// renamed into place), so a killed shard leaves no half-written partial
// that a merge could take for a whole one. It returns the file's path.
func (p *Partial) Write(dir string) (string, error) {
	data, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return "", fmt.Errorf("encode partial result: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("write partial result: %w", err)
	}
	path := filepath.Join(dir, FileName(p.Command, p.Shard))
	tmp, err := os.CreateTemp(dir, ".partial-")
	if err != nil {
		return "", fmt.Errorf("write partial result: %w", err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	return path, nil
}

// Loaded is a partial and the file it came from, which every complaint
// about it names.
type Loaded struct {
	Path string
	Partial
}

// Load reads partial results: each path a partial's file, or a directory
// whose partials (files named as FileName names them) are all read.
func Load(paths ...string) ([]Loaded, error) {
	var files []string
	for _, p := range paths {
		info, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("partial result: %w", err)
		}
		if !info.IsDir() {
			files = append(files, p)
			continue
		}
		found, err := filepath.Glob(filepath.Join(p, filePattern))
		if err != nil {
			return nil, err
		}
		if len(found) == 0 {
			return nil, fmt.Errorf("%s holds no partial result (no %s)", p, filePattern)
		}
		sort.Strings(found)
		files = append(files, found...)
	}
	var out []Loaded
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("partial result: %w", err)
		}
		var p Partial
		if err := json.Unmarshal(data, &p); err != nil {
			return nil, fmt.Errorf("%s is not a partial result: %w", f, err)
		}
		if p.Command == "" || !p.Shard.Sharded() {
			return nil, fmt.Errorf("%s is not a partial result: it names no command or shard", f)
		}
		out = append(out, Loaded{Path: f, Partial: p})
	}
	return out, nil
}

// Run is a whole run put back together from its shards.
type Run struct {
	Command string
	Commit  string
	Options json.RawMessage
	Args    []string
	Count   int
	// Seconds is the shards' time added up: what one machine would have
	// taken, near enough.
	Seconds float64
	// Cells are every shard's cells in the unsharded run's order.
	Cells []Cell
	Files map[string][]byte
}

// Combine checks that the partials are every shard of one run, each once,
// and puts the run back together. It refuses, naming the files, shards of
// different commands, commits or options, a shard given twice, a missing
// shard, and cells or files that two shards both claim.
func Combine(parts []Loaded) (Run, error) {
	if len(parts) == 0 {
		return Run{}, fmt.Errorf("no partial results given")
	}
	first := parts[0]
	for _, p := range parts[1:] {
		if p.Command != first.Command {
			return Run{}, fmt.Errorf("%s is a shard of bench %s but %s one of bench %s: merge one command's shards at a time",
				first.Path, first.Command, p.Path, p.Command)
		}
		if p.Commit != first.Commit {
			return Run{}, fmt.Errorf("%s was run at commit %s but %s at commit %s: the shards of one run come from one commit",
				first.Path, first.Commit, p.Path, p.Commit)
		}
		if diff, err := optionsDiff(first.Options, p.Options); err != nil {
			return Run{}, fmt.Errorf("%s, %s: %w", first.Path, p.Path, err)
		} else if diff != "" {
			return Run{}, fmt.Errorf("%s and %s were run with different options (%s): they are not shards of one run",
				first.Path, p.Path, diff)
		}
		if p.Shard.Count != first.Shard.Count || p.Total != first.Total {
			return Run{}, fmt.Errorf("%s is shard %s of %d cells but %s is shard %s of %d cells: the shards of one run split the same cells the same number of ways",
				first.Path, first.Shard, first.Total, p.Path, p.Shard, p.Total)
		}
	}
	byIndex := map[int]string{}
	for _, p := range parts {
		if prev, dup := byIndex[p.Shard.Index]; dup {
			return Run{}, fmt.Errorf("shard %s is given twice: %s and %s", p.Shard, prev, p.Path)
		}
		byIndex[p.Shard.Index] = p.Path
	}
	var missing, have []string
	for i := 0; i < first.Shard.Count; i++ {
		s := Shard{Index: i, Count: first.Shard.Count}.String()
		if _, ok := byIndex[i]; ok {
			have = append(have, s)
		} else {
			missing = append(missing, s)
		}
	}
	if len(missing) > 0 {
		return Run{}, fmt.Errorf("missing shard %s (given: %s)", strings.Join(missing, ", "), strings.Join(have, ", "))
	}

	r := Run{Command: first.Command, Commit: first.Commit, Options: first.Options, Count: first.Shard.Count,
		Files: map[string][]byte{}}
	owner := map[string]string{}
	byPosition := map[int]string{}
	fileOwner := map[string]string{}
	for _, p := range parts {
		if p.Shard.Index == 0 {
			r.Args = p.Args
		}
		r.Seconds += p.Seconds
		for _, c := range p.Cells {
			if Of(c.Key, p.Shard.Count) != p.Shard.Index {
				return Run{}, fmt.Errorf("%s holds cell %s, which belongs to shard %d/%d, not %s",
					p.Path, c.Key, Of(c.Key, p.Shard.Count), p.Shard.Count, p.Shard)
			}
			if prev, dup := owner[c.Key]; dup {
				return Run{}, fmt.Errorf("cell %s is in both %s and %s", c.Key, prev, p.Path)
			}
			if prev, dup := byPosition[c.Position]; dup {
				return Run{}, fmt.Errorf("cells %s and %s (%s) both claim position %d", prev, c.Key, p.Path, c.Position)
			}
			owner[c.Key], byPosition[c.Position] = p.Path, c.Key
			r.Cells = append(r.Cells, c)
		}
		for name, data := range p.Files {
			if prev, dup := fileOwner[name]; dup && string(r.Files[name]) != string(data) {
				return Run{}, fmt.Errorf("file %s differs between %s and %s", name, prev, p.Path)
			}
			fileOwner[name], r.Files[name] = p.Path, data
		}
	}
	if len(r.Cells) != first.Total {
		return Run{}, fmt.Errorf("the shards hold %d cells, but the run has %d", len(r.Cells), first.Total)
	}
	sort.Slice(r.Cells, func(i, j int) bool { return r.Cells[i].Position < r.Cells[j].Position })
	return r, nil
}

// optionsDiff names the options that differ between a and b ("" when
// none), as "ttl: 1s / 2s; runs: 1 / 3".
func optionsDiff(a, b json.RawMessage) (string, error) {
	var ma, mb map[string]any
	if err := json.Unmarshal(a, &ma); err != nil {
		return "", fmt.Errorf("options: %w", err)
	}
	if err := json.Unmarshal(b, &mb); err != nil {
		return "", fmt.Errorf("options: %w", err)
	}
	keys := map[string]bool{}
	for k := range ma {
		keys[k] = true
	}
	for k := range mb {
		keys[k] = true
	}
	var names []string
	for k := range keys {
		names = append(names, k)
	}
	sort.Strings(names)
	var diffs []string
	for _, k := range names {
		va, _ := json.Marshal(ma[k])
		vb, _ := json.Marshal(mb[k])
		if string(va) != string(vb) {
			diffs = append(diffs, fmt.Sprintf("%s: %s / %s", k, va, vb))
		}
	}
	return strings.Join(diffs, "; "), nil
}
