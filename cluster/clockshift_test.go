package cluster

import (
	"strings"
	"testing"
)

func TestClockShiftAvailable(t *testing.T) {
	for _, tc := range []struct {
		servers, dockerHost string
		err                 string
	}{
		{ServersLocal, "tcp://127.0.0.1:2376", ""}, // local servers ignore the engine
		{ServersContainers, "", ""},
		{ServersContainers, "unix:///var/run/docker.sock", ""},
		{ServersContainers, "tcp://127.0.0.1:2376", "DOCKER_HOST=tcp://127.0.0.1:2376 is another's"},
		{ServersContainers, "ssh://lab@builder", "need a Docker engine on this machine"},
	} {
		t.Run(tc.servers+" "+tc.dockerHost, func(t *testing.T) {
			t.Setenv(ServersEnv, tc.servers)
			t.Setenv("DOCKER_HOST", tc.dockerHost)
			err := ClockShiftAvailable()
			if tc.err == "" && err != nil {
				t.Fatalf("ClockShiftAvailable() = %v, want nil", err)
			}
			if tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
				t.Fatalf("ClockShiftAvailable() = %v, want an error containing %q", err, tc.err)
			}
		})
	}
}
