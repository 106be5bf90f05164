package cluster

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/client"

	"github.com/locklab/locklab/cluster/leftovers"
)

// The leftovers of dead runs: testcontainers' reaper (Ryuk) is off (an
// image from a registry, and these machines have none), so every container,
// network and volume carries its owner (pid and start time), and the first
// connection of a run removes those whose owner is dead.

// ownerDead reports whether the lab process that labelled a resource is
// gone: the label is a leftovers.Owner (pid and start time), so a recycled
// pid does not pass for the lab that made it.
func ownerDead(labels map[string]string) bool {
	owner, ok := labels[labelOwner]
	if !ok {
		return false // not made by a lab run (the compose file's): leave it
	}
	o, err := leftovers.ParseOwner(owner)
	return err != nil || !o.Alive()
}

// The containers are one of the leftovers every run's start sweeps
// (leftovers.Sweep), whether or not the run is in container mode: a
// container-mode run SIGKILLed and followed by a local one must not leave
// its containers running.
func init() { leftovers.Register("containers", sweepContainers) }

// sweepContainers removes dead runs' containers, networks and volumes.
// With a connection to the engine (container mode) it sweeps at every
// run's start, on that connection: a container-mode run SIGKILLed while
// this process lives (a test's child, a matrix's worker) must not leave
// its containers to the next process, and beside starting containers a
// listing costs little. Without one it probes the engine once per process:
// a Docker connection, ping and three listings on every local run of a
// matrix would cost more than the runs; without an engine there is
// nothing the lab could have left there.
func sweepContainers(ctx context.Context) error {
	engineMu.Lock()
	e := theEngine
	engineMu.Unlock()
	if e != nil {
		return e.removeLeftovers(ctx)
	}
	var err error
	containerSweep.Do(func() {
		cli, cerr := newDockerClient(ctx)
		if cerr != nil {
			return
		}
		defer cli.Close()
		pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		if _, perr := cli.Ping(pctx, client.PingOptions{NegotiateAPIVersion: true}); perr != nil {
			return
		}
		err = (&engine{cli: cli}).removeLeftovers(ctx)
	})
	return err
}

var containerSweep sync.Once

// gone reports whether a removal left the thing removed: it succeeded, or
// the thing was already gone, as when two runs starting at once sweep the
// same dead run's leftovers and the other removed it first.
func gone(err error) bool { return err == nil || cerrdefs.IsNotFound(err) }

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
			if _, err := e.cli.ContainerRemove(ctx, c.ID, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true}); !gone(err) {
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
			if _, err := e.cli.NetworkRemove(ctx, n.ID, client.NetworkRemoveOptions{}); !gone(err) {
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
			if _, err := e.cli.VolumeRemove(ctx, v.Name, client.VolumeRemoveOptions{Force: true}); !gone(err) {
				errs = append(errs, fmt.Errorf("remove leftover volume %s: %w", v.Name, err))
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("container mode: %w", err)
	}
	return nil
}
