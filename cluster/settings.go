package cluster

import (
	"fmt"
	"sort"
	"strings"
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
