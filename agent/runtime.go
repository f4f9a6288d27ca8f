package agent

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	internalapi "k8s.io/cri-api/pkg/apis"
	remote "k8s.io/cri-client/pkg"

	"github.com/podlife/podlife/cri"
	"github.com/podlife/podlife/cri/embedded"
	"github.com/podlife/podlife/cri/mount"
	"github.com/podlife/podlife/cri/securitycontext"
)

// runtimeConnectTimeout bounds dialling the runtime and each CRI call the
// client makes without its own deadline.
const runtimeConnectTimeout = 10 * time.Second

// runtimeConn is the agent's connection to its CRI runtime.
type runtimeConn struct {
	// runtime and images (the syncer's, the prober's) and poll (the
	// status cache's) are the CRI services behind a cri.Limit: every call
	// goes through them, in its lane and with its deadline.
	runtime cri.Runtime
	images  cri.Images
	poll    cri.Runtime
	// service and imageService are the clients themselves.
	service      internalapi.RuntimeService
	imageService internalapi.ImageManagerService
	// name is the runtime's own name ("containerd"), for container IDs.
	name     string
	version  string // the runtime's own version
	endpoint string
	// embedded is the in-process runtime when no endpoint was configured.
	embedded *embedded.Runtime
	// features are what the runtime's Status said it supports when the
	// agent connected (user namespaces, supplementalGroupsPolicy Strict).
	features securitycontext.RuntimeFeatures
	// mounts is whether the runtime sees the agent's mounts (the
	// embedded runtime, in process, needs none: Visible).
	mounts mount.Propagation
}

// connectRuntime dials endpoint, or starts the embedded runtime under
// rootDir when endpoint is "", with its CRI calls in the lanes that lanes
// sizes.
func connectRuntime(ctx context.Context, endpoint, rootDir string, lanes cri.Lanes) (*runtimeConn, error) {
	c := &runtimeConn{endpoint: endpoint}
	if endpoint == "" {
		emb, err := embedded.Start(filepath.Join(rootDir, "cri"))
		if err != nil {
			return nil, err
		}
		c.embedded, c.endpoint = emb, emb.Endpoint()
	}
	var err error
	c.service, err = remote.NewRemoteRuntimeServiceBuilder().WithEndpoint(c.endpoint).WithConnectionTimeout(runtimeConnectTimeout).Build(ctx)
	if err == nil {
		c.imageService, err = remote.NewRemoteImageServiceBuilder().WithEndpoint(c.endpoint).WithConnectionTimeout(runtimeConnectTimeout).Build(ctx)
	}
	if err == nil {
		err = c.identify(ctx)
	}
	if err == nil && c.embedded == nil {
		// A runtime that cannot see the volumes' mounts would run pods
		// on empty directories: refused. One that cannot be checked is
		// logged by New.
		c.mounts = mount.RuntimeSeesMounts(endpoint, rootDir)
		err = c.mounts.Err(endpoint, rootDir)
	}
	if err != nil {
		c.close()
		return nil, fmt.Errorf("CRI runtime at %s: %w", c.endpoint, err)
	}
	limited := cri.Limit(c.service, c.imageService, lanes)
	c.runtime, c.images, c.poll = limited.Runtime, limited.Images, limited.Poll
	return c, nil
}

// identify asks the runtime its name, which also proves it answers.
func (c *runtimeConn) identify(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, runtimeConnectTimeout)
	defer cancel()
	v, err := c.service.Version(ctx, "v1")
	if err != nil {
		return err
	}
	c.name, c.version = v.GetRuntimeName(), v.GetRuntimeVersion()
	// A runtime whose Status fails, or says nothing of its features
	// (containerd 1.6), supports none of them: the pods that need them are
	// refused rather than run without.
	if st, err := c.service.Status(ctx, false); err == nil {
		c.features = securitycontext.FeaturesOf(st)
	}
	return nil
}

func (c *runtimeConn) close() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if c.service != nil {
		_ = c.service.Close(ctx)
	}
	if c.imageService != nil {
		_ = c.imageService.Close(ctx)
	}
	if c.embedded != nil {
		_ = c.embedded.Stop()
	}
}
