package cluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/moby/moby/client"
)

// The leftovers of dead runs: testcontainers' reaper (Ryuk) is off (an
// image from a registry, and these machines have none), so every container,
// network and volume carries its owner (pid and start time), and the first
// connection of a run removes those whose owner is dead.

// ownerOf names a process by pid and start time (field 22 of /proc/pid/stat),
// so a recycled pid does not pass for the lab that made a container.
func ownerOf(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return ""
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 {
		return ""
	}
	return strconv.Itoa(pid) + ":" + f[19]
}

// ownerDead reports whether the lab process that labelled a resource is gone.
func ownerDead(labels map[string]string) bool {
	owner, ok := labels[labelOwner]
	if !ok {
		return false // not made by a lab run (the compose file's): leave it
	}
	pid, err := strconv.Atoi(strings.SplitN(owner, ":", 2)[0])
	if err != nil {
		return true
	}
	return ownerOf(pid) != owner
}

// removeLeftovers removes the containers, networks and volumes of lab runs
// that died without cleaning up (a SIGKILL gives no chance to).
func (e *engine) removeLeftovers(ctx context.Context) error {
	f := client.Filters{}.Add("label", labelLab+"=1")
	cs, err := e.cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: f})
	if err != nil {
		return fmt.Errorf("container mode: list leftover containers: %w", err)
	}
	var errs []error
	for _, c := range cs.Items {
		if ownerDead(c.Labels) {
			if _, err := e.cli.ContainerRemove(ctx, c.ID, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true}); err != nil {
				errs = append(errs, fmt.Errorf("remove leftover container %s: %w", c.ID[:12], err))
			}
		}
	}
	ns, err := e.cli.NetworkList(ctx, client.NetworkListOptions{Filters: f})
	if err != nil {
		return fmt.Errorf("container mode: list leftover networks: %w", err)
	}
	for _, n := range ns.Items {
		if ownerDead(n.Labels) {
			if _, err := e.cli.NetworkRemove(ctx, n.ID, client.NetworkRemoveOptions{}); err != nil {
				errs = append(errs, fmt.Errorf("remove leftover network %s: %w", n.Name, err))
			}
		}
	}
	vs, err := e.cli.VolumeList(ctx, client.VolumeListOptions{Filters: f})
	if err != nil {
		return fmt.Errorf("container mode: list leftover volumes: %w", err)
	}
	for _, v := range vs.Items {
		if ownerDead(v.Labels) {
			if _, err := e.cli.VolumeRemove(ctx, v.Name, client.VolumeRemoveOptions{Force: true}); err != nil {
				errs = append(errs, fmt.Errorf("remove leftover volume %s: %w", v.Name, err))
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("container mode: %w", err)
	}
	return nil
}
