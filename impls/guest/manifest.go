package guest

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/topology"
)

// Manifest is a guest's guests/NAME/guest.json.
type Manifest struct {
	Name    string        `json:"name"`
	Command []string      `json:"command"`
	Kind    topology.Kind `json:"kind"`
	Nodes   int           `json:"nodes"`
	Summary string        `json:"summary"`
	// RoundTrips per uncontended acquire-release pair, declared as every
	// server-backed lock declares them (impls.Spec.RoundTrips).
	RoundTrips impls.RoundTrips `json:"round_trips"`
	// Footprint is what the guest's library keeps on its server while it
	// holds a key (impls.Footprint), for the conformance suite to read
	// back; a guest that declares none has its read-back skipped.
	Footprint impls.Footprint `json:"footprint"`
	// Capabilities are what the guest declares; its hello must say the same.
	Capabilities Capabilities `json:"capabilities"`
	// StartTimeoutMS bounds the time to hello's answer (a JVM under load
	// starts slowly); 0 means defaultStartTimeout.
	StartTimeoutMS int64 `json:"start_timeout_ms"`

	// Dir is the guest's folder, where its command runs.
	Dir string `json:"-"`
}

// Capabilities are impls.Capabilities as the protocol spells them.
type Capabilities struct {
	Fencing    bool `json:"fencing"`
	Reentrant  bool `json:"reentrant"`
	Renewal    bool `json:"renewal"`
	LostNotify bool `json:"lostnotify"`
	NoPolling  bool `json:"nopolling"`
	Expiry     bool `json:"expiry"`
	Validity   bool `json:"validity"`
	Queued     bool `json:"queued"`
}

// Impls converts to the lab's capabilities.
func (c Capabilities) Impls() impls.Capabilities {
	return impls.Capabilities{Fencing: c.Fencing, Reentrant: c.Reentrant, Renewal: c.Renewal,
		LostNotify: c.LostNotify, NoPolling: c.NoPolling, Expiry: c.Expiry, Validity: c.Validity, Queued: c.Queued}
}

const defaultStartTimeout = 30 * time.Second

func (m Manifest) startTimeout() time.Duration {
	if m.StartTimeoutMS > 0 {
		return time.Duration(m.StartTimeoutMS) * time.Millisecond
	}
	return defaultStartTimeout
}

// ImplName is the name every command selects the guest by.
func (m Manifest) ImplName() string { return Prefix + m.Name }

// Prefix marks a guest's implementation name.
const Prefix = "guest:"

// LoadManifest reads dir/guest.json and checks it.
func LoadManifest(dir string) (Manifest, error) {
	path := filepath.Join(dir, "guest.json")
	raw, err := os.ReadFile(path)
	if err != nil {
		return Manifest{}, fmt.Errorf("guest manifest: %w", err)
	}
	var m Manifest
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return Manifest{}, fmt.Errorf("guest manifest %s: %w", path, err)
	}
	m.Dir = dir
	if err := m.check(filepath.Base(dir)); err != nil {
		return Manifest{}, fmt.Errorf("guest manifest %s: %w", path, err)
	}
	return m, nil
}

func (m Manifest) check(folder string) error {
	switch {
	case m.Name == "":
		return errors.New(`no "name"`)
	case m.Name != folder:
		return fmt.Errorf("name %q differs from its folder %q", m.Name, folder)
	case len(m.Command) == 0:
		return errors.New(`no "command"`)
	case m.Kind == "":
		return errors.New(`no "kind" (the server kind the lock needs: redis, zookeeper, ...)`)
	case m.Summary == "":
		return errors.New(`no "summary"`)
	case m.Nodes < 0:
		return fmt.Errorf("nodes %d < 0", m.Nodes)
	}
	return nil
}

// LoadAll reads every guests/*/guest.json under root. Folders without a
// manifest are skipped; a broken manifest is an error naming it.
func LoadAll(root string) ([]Manifest, error) {
	dirs, err := filepath.Glob(filepath.Join(root, "guests", "*", "guest.json"))
	if err != nil {
		return nil, err
	}
	sort.Strings(dirs)
	var out []Manifest
	var errs []error
	for _, p := range dirs {
		m, err := LoadManifest(filepath.Dir(p))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, m)
	}
	return out, errors.Join(errs...)
}

// argv resolves the command: an element naming a file in the guest's folder
// becomes its absolute path, so the command runs from any directory.
func (m Manifest) argv() []string {
	out := make([]string, len(m.Command))
	for i, a := range m.Command {
		out[i] = a
		if filepath.IsAbs(a) {
			continue
		}
		p := filepath.Join(m.Dir, a)
		if _, err := os.Stat(p); err == nil {
			out[i] = p
		}
	}
	return out
}
