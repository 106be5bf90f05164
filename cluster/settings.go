package cluster

import (
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
