package cluster

import (
	"fmt"
	"maps"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/locklab/locklab/topology"
)

// settingsArgs renders a topology's declared server settings as command
// line arguments (prefix name sep value), in name order so that a run's
// command line does not change from start to start.
func settingsArgs(settings map[string]string, prefix, sep string) []string {
	names := make([]string, 0, len(settings))
	for name := range settings {
		names = append(names, name)
	}
	sort.Strings(names)
	out := make([]string, 0, len(names))
	for _, name := range names {
		out = append(out, prefix+name+sep+settings[name])
	}
	return out
}

// settingsList is settingsArgs as one line, for an error.
func settingsList(settings map[string]string, prefix, sep string) string {
	return strings.Join(settingsArgs(settings, prefix, sep), ", ")
}

// declaresAny says why a server of kind, with settings, keeps a silent
// client's session (it runs with what instead), or nil when settings
// declare one of names, each of which ends such a session in seconds
// when set so.
func declaresAny(settings map[string]string, kind, instead string, names ...string) error {
	for _, n := range names {
		if settings[n] != "" {
			return nil
		}
	}
	return fmt.Errorf("%s here runs with %s, so a partitioned holder keeps its session for longer than any cut the lab waits out (holder-partition shows it); a topology that declares %s ends it",
		kind, instead, strings.Join(names, " or "))
}

// profileSetting is the kind's setting called name as the run's profile
// gave it to the member (topology.Profile.Apply), or the fast profile's
// when the member was declared without one (a test of the server alone):
// the lab's timeouts are the profile's, never a constant of this package.
func profileSetting(settings map[string]string, kind topology.Kind, name string) string {
	if v, ok := settings[name]; ok {
		return v
	}
	return topology.Setting(kind, name)
}

// profileMillis is profileSetting for a setting in milliseconds.
func profileMillis(settings map[string]string, kind topology.Kind, name string) (time.Duration, error) {
	v := profileSetting(settings, kind, name)
	ms, err := strconv.ParseInt(v, 10, 64)
	if err != nil || ms <= 0 {
		return 0, fmt.Errorf("%s %s %q: want a positive number of milliseconds", kind, name, v)
	}
	return time.Duration(ms) * time.Millisecond, nil
}

// withoutSettings returns settings less the names given, for a kind that
// passes those on its own (a flag, a config line) and the rest as they are.
func withoutSettings(settings map[string]string, names ...string) map[string]string {
	out := maps.Clone(settings)
	for _, n := range names {
		delete(out, n)
	}
	return out
}
