package cluster

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sort"
	"strings"

	"github.com/testcontainers/testcontainers-go"

	"github.com/locklab/locklab/docker"
)

// The lab's server images: built from docker/<server> on first use and
// tagged by a hash of the build context and the base image.

// image returns the tag of server's image, building it when no image of
// this content exists. The tag is a hash of the build context and the base
// image's id, so a rerun skips the build and an edited Dockerfile rebuilds.
func (e *engine) image(ctx context.Context, server string) (string, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	base := os.Getenv("LOCKLAB_BASE_IMAGE")
	if base == "" {
		base = docker.BaseImage
	}
	// By base too: a process that changes LOCKLAB_BASE_IMAGE (a test of a
	// missing base) must not be given the image built on the other one.
	key := base + "\x00" + server
	if tag, ok := e.images[key]; ok {
		return tag, nil
	}
	baseID := ""
	if bi, err := e.cli.ImageInspect(ctx, base); err == nil {
		baseID = bi.ID
	} else if base == docker.BaseImage {
		return "", fmt.Errorf("container mode: base image %s is missing: run `make setup` (scripts/setup.sh pulls or builds it)", base)
	}
	archive, sum, err := buildContext(server, base+"@"+baseID)
	if err != nil {
		return "", err
	}
	repo, tag := "locklab/"+server, sum[:16]
	ref := repo + ":" + tag
	if _, err := e.cli.ImageInspect(ctx, ref); err == nil {
		e.images[key] = ref
		return ref, nil
	}
	p, err := testcontainers.NewDockerProvider()
	if err != nil {
		return "", fmt.Errorf("container mode: %w", err)
	}
	defer p.Close()
	var log bytes.Buffer
	req := &testcontainers.ContainerRequest{FromDockerfile: testcontainers.FromDockerfile{
		ContextArchive: bytes.NewReader(archive),
		Repo:           repo,
		Tag:            tag,
		BuildArgs:      map[string]*string{"BASE": &base},
		BuildLogWriter: &log,
		KeepImage:      true,
	}}
	if _, err := p.BuildImage(ctx, req); err != nil {
		return "", fmt.Errorf("container mode: build image %s from docker/%s: %w\n%s", ref, server, err, lastLines(log.String(), 20))
	}
	e.images[key] = ref
	return ref, nil
}

// buildContext packs docker/<server> as a tar build context and hashes it
// together with salt.
func buildContext(server, salt string) ([]byte, string, error) {
	sub, err := fs.Sub(docker.Contexts, server)
	if err != nil {
		return nil, "", fmt.Errorf("container mode: no build context for %s: %w", server, err)
	}
	var names []string
	if err := fs.WalkDir(sub, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			names = append(names, p)
		}
		return err
	}); err != nil {
		return nil, "", fmt.Errorf("container mode: read docker/%s: %w", server, err)
	}
	sort.Strings(names)
	h := sha256.New()
	io.WriteString(h, salt)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, name := range names {
		b, err := fs.ReadFile(sub, name)
		if err != nil {
			return nil, "", fmt.Errorf("container mode: read docker/%s/%s: %w", server, name, err)
		}
		fmt.Fprintf(h, "\x00%s\x00%d\x00", name, len(b))
		h.Write(b)
		mode := int64(0o644)
		if strings.HasSuffix(name, ".sh") {
			mode = 0o755
		}
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: mode, Size: int64(len(b))}); err != nil {
			return nil, "", err
		}
		if _, err := tw.Write(b); err != nil {
			return nil, "", err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, "", err
	}
	return buf.Bytes(), hex.EncodeToString(h.Sum(nil)), nil
}

func lastLines(s string, n int) string {
	all := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(all) > n {
		all = all[len(all)-n:]
	}
	return strings.Join(all, "\n")
}

// ServerImage is the tag of the lab's image of server ("redis",
// "zookeeper", "postgres"), built from docker/ when the engine lacks it:
// for a tool that runs the lab's own processes on the engine (the sharding
// test runs bench in the Redis image), not for starting servers.
func ServerImage(ctx context.Context, server string) (string, error) {
	e, err := connectEngine(ctx)
	if err != nil {
		return "", err
	}
	return e.image(ctx, server)
}
