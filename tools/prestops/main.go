// Command prestops measures how long a node takes to stop pods that have an
// exec preStop hook (issue 21's figure: 30 pods with a 1 s `sleep 1`
// preStop): it writes N static pod manifests into the node's manifest
// directory, waits until their containers run, removes the manifests at
// once, and reads from the runtime when each container exited (its
// FinishedAt) and when each sandbox stopped. The same figures for any node
// that reads static pods (podlife, a standalone kubelet) on the same CRI
// runtime; with -floor, for no node at all: the program itself makes the
// sandboxes and containers and, for each pod at once, runs the hook
// (ExecSync), stops the container and stops the sandbox, which is the
// least any node can do with that runtime on that machine.
//
//	prestops -endpoint unix:///run/containerd/containerd.sock -manifests DIR [-pods 30]
//	prestops -endpoint ... -floor [-pods 30]
//
// It prints one line: the node, the time from the removal to the first and
// the last container exit, and to the last sandbox stop. tools/prestops.sh
// runs it against the floor, podlife and a kubelet, interleaved.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	internalapi "k8s.io/cri-api/pkg/apis"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	remote "k8s.io/cri-client/pkg"

	"github.com/podlife/podlife/cri"
)

// namePrefix marks this program's pods; static pod names get the node's
// name appended.
const namePrefix = "prestops-"

// containerCmd exits the moment SIGTERM arrives: the shell waits on a
// background sleep, so its trap runs at once.
var containerCmd = []string{"sh", "-c", `trap "exit 0" TERM; sleep 3600 & wait`}

func main() {
	endpoint := flag.String("endpoint", "", "the CRI endpoint (unix:///...)")
	manifests := flag.String("manifests", "", "the node's static pod directory")
	pods := flag.Int("pods", 30, "pods to stop at once")
	image := flag.String("image", "localhost/podlife/busybox:latest", "the container image (present on the runtime)")
	node := flag.String("node", "node", "the node's name, for the output line")
	floor := flag.Bool("floor", false, "drive the runtime directly, no node")
	clean := flag.Bool("clean", false, "only stop and remove what is left of this program's pods on the runtime")
	flag.Parse()
	if *endpoint == "" || (*manifests == "" && !*floor && !*clean) || *pods < 1 {
		flag.Usage()
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	rt, err := remote.NewRemoteRuntimeServiceBuilder().WithEndpoint(*endpoint).WithConnectionTimeout(10 * time.Second).Build(ctx)
	if err != nil {
		fail(fmt.Errorf("connecting to %s: %w", *endpoint, err))
	}
	if *clean {
		if err := removeOurs(ctx, rt); err != nil {
			fail(err)
		}
		return
	}
	var r result
	if *floor {
		*node = "floor"
		r, err = runFloor(ctx, rt, *pods, *image)
	} else {
		r, err = runNode(ctx, rt, *manifests, *pods, *image)
	}
	if err != nil {
		fail(err)
	}
	fmt.Printf("prestops: node=%s pods=%d first_exit=%.3fs last_exit=%.3fs last_sandbox_stop=%.3fs\n",
		*node, *pods, r.firstExit.Seconds(), r.lastExit.Seconds(), r.lastSandboxStop.Seconds())
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "prestops:", err)
	os.Exit(1)
}

// result is what one stop measured, from the instant it began.
type result struct {
	firstExit, lastExit, lastSandboxStop time.Duration
}

func manifest(i int, image string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: %s%d
  namespace: default
spec:
  terminationGracePeriodSeconds: 10
  containers:
  - name: app
    image: %s
    imagePullPolicy: Never
    command: [%q, %q, %q]
    lifecycle:
      preStop:
        exec:
          command: [sleep, "1"]
`, namePrefix, i, image, containerCmd[0], containerCmd[1], containerCmd[2])
}

// runNode writes the manifests, waits for their containers, removes the
// manifests and watches the runtime until every container exited and
// every sandbox stopped.
func runNode(ctx context.Context, rt internalapi.RuntimeService, dir string, pods int, image string) (result, error) {
	var paths []string
	for i := range pods {
		p := filepath.Join(dir, fmt.Sprintf("%s%d.yaml", namePrefix, i))
		if err := os.WriteFile(p, []byte(manifest(i, image)), 0o644); err != nil {
			return result{}, err
		}
		paths = append(paths, p)
	}
	if err := waitRunning(ctx, rt, pods); err != nil {
		return result{}, err
	}
	time.Sleep(2 * time.Second) // let the node settle after the starts
	start := time.Now()
	for _, p := range paths {
		if err := os.Remove(p); err != nil {
			return result{}, err
		}
	}
	return watchStop(ctx, rt, start, pods)
}

// ours lists this program's running containers and ready sandboxes.
func ours(ctx context.Context, rt internalapi.RuntimeService) (containers []*runtimeapi.Container, sandboxes []*runtimeapi.PodSandbox, err error) {
	cs, err := rt.ListContainers(ctx, nil)
	if err != nil {
		return nil, nil, err
	}
	for _, c := range cs {
		if strings.HasPrefix(c.Labels[cri.PodNameLabel], namePrefix) {
			containers = append(containers, c)
		}
	}
	sbs, err := rt.ListPodSandbox(ctx, nil)
	if err != nil {
		return nil, nil, err
	}
	for _, s := range sbs {
		if strings.HasPrefix(s.GetMetadata().GetName(), namePrefix) {
			sandboxes = append(sandboxes, s)
		}
	}
	return containers, sandboxes, nil
}

func waitRunning(ctx context.Context, rt internalapi.RuntimeService, pods int) error {
	deadline := time.Now().Add(5 * time.Minute)
	for {
		cs, _, err := ours(ctx, rt)
		if err != nil {
			return err
		}
		running := 0
		for _, c := range cs {
			if c.State == runtimeapi.ContainerState_CONTAINER_RUNNING {
				running++
			}
		}
		if running == pods {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d of %d containers run after 5 min", running, pods)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// watchStop polls the runtime every 25 ms until the pods' containers all
// exited and their sandboxes all stopped (or are gone). Each container's
// exit is its FinishedAt, read once it is seen exited: the instant it
// died, whatever the poll's latency; a sandbox's stop is when the poll
// first saw it not ready.
func watchStop(ctx context.Context, rt internalapi.RuntimeService, start time.Time, pods int) (result, error) {
	exits := map[string]time.Time{}
	var lastSandboxStop time.Time
	deadline := start.Add(2 * time.Minute)
	for {
		cs, sbs, err := ours(ctx, rt)
		if err != nil {
			return result{}, err
		}
		for _, c := range cs {
			if _, seen := exits[c.Id]; seen || c.State == runtimeapi.ContainerState_CONTAINER_RUNNING {
				continue
			}
			st, err := rt.ContainerStatus(ctx, c.Id, false)
			if err != nil {
				continue // removed meanwhile
			}
			if at := st.GetStatus().GetFinishedAt(); at > 0 {
				exits[c.Id] = time.Unix(0, at)
			}
		}
		ready := slices.ContainsFunc(sbs, func(s *runtimeapi.PodSandbox) bool { return s.State == runtimeapi.PodSandboxState_SANDBOX_READY })
		if !ready && lastSandboxStop.IsZero() {
			lastSandboxStop = time.Now()
		}
		if len(exits) >= pods && !lastSandboxStop.IsZero() {
			break
		}
		if time.Now().After(deadline) {
			return result{}, fmt.Errorf("after 2 min: %d of %d containers seen exited, sandboxes ready: %v", len(exits), pods, ready)
		}
		time.Sleep(25 * time.Millisecond)
	}
	r := result{lastSandboxStop: lastSandboxStop.Sub(start)}
	for _, at := range exits {
		d := at.Sub(start)
		if r.firstExit == 0 || d < r.firstExit {
			r.firstExit = d
		}
		r.lastExit = max(r.lastExit, d)
	}
	return r, nil
}

// removeOurs stops and removes every sandbox of this program's pods (and
// so their containers): what a node stopped while its pods ran left.
func removeOurs(ctx context.Context, rt internalapi.RuntimeService) error {
	_, sbs, err := ours(ctx, rt)
	if err != nil {
		return err
	}
	var errs []error
	for _, s := range sbs {
		if err := rt.StopPodSandbox(ctx, s.Id); err != nil {
			errs = append(errs, err)
		}
		if err := rt.RemovePodSandbox(ctx, s.Id); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// runFloor makes the pods itself, then for each at once: the hook, the
// container's stop, the sandbox's stop; then it removes them.
func runFloor(ctx context.Context, rt internalapi.RuntimeService, pods int, image string) (result, error) {
	logDir, err := os.MkdirTemp("", "prestops-floor")
	if err != nil {
		return result{}, err
	}
	defer func() { _ = os.RemoveAll(logDir) }()
	type pod struct{ sandbox, container string }
	var all []pod
	defer func() {
		for _, p := range all {
			_ = rt.StopPodSandbox(context.Background(), p.sandbox)
			_ = rt.RemovePodSandbox(context.Background(), p.sandbox)
		}
	}()
	for i := range pods {
		name := fmt.Sprintf("%s%d", namePrefix, i)
		uid := fmt.Sprintf("prestops-floor-%d-%d", os.Getpid(), i)
		labels := map[string]string{cri.PodNameLabel: name, cri.PodUIDLabel: uid}
		sb := &runtimeapi.PodSandboxConfig{
			Metadata:     &runtimeapi.PodSandboxMetadata{Name: name, Uid: uid, Namespace: "default"},
			Hostname:     name,
			LogDirectory: filepath.Join(logDir, name),
			Labels:       labels,
		}
		id, err := rt.RunPodSandbox(ctx, sb, "")
		if err != nil {
			return result{}, err
		}
		all = append(all, pod{sandbox: id})
		p := &all[len(all)-1]
		p.container, err = rt.CreateContainer(ctx, id, &runtimeapi.ContainerConfig{
			Metadata: &runtimeapi.ContainerMetadata{Name: "app"},
			Image:    &runtimeapi.ImageSpec{Image: image},
			Command:  containerCmd,
			Labels:   map[string]string{cri.PodNameLabel: name, cri.PodUIDLabel: uid, cri.ContainerNameLabel: "app"},
			LogPath:  "app.log",
		}, sb)
		if err != nil {
			return result{}, err
		}
		if err := rt.StartContainer(ctx, p.container); err != nil {
			return result{}, err
		}
	}
	if err := waitRunning(ctx, rt, pods); err != nil {
		return result{}, err
	}
	time.Sleep(2 * time.Second)
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, 3*pods)
	for _, p := range all {
		wg.Go(func() {
			if _, _, err := rt.ExecSync(ctx, p.container, []string{"sleep", "1"}, 0); err != nil {
				errs <- fmt.Errorf("preStop exec: %w", err)
			}
			if err := rt.StopContainer(ctx, p.container, 9); err != nil {
				errs <- fmt.Errorf("stop container: %w", err)
			}
			if err := rt.StopPodSandbox(ctx, p.sandbox); err != nil {
				errs <- fmt.Errorf("stop sandbox: %w", err)
			}
		})
	}
	r, err := watchStop(ctx, rt, start, pods)
	wg.Wait()
	close(errs)
	for e := range errs {
		err = errors.Join(err, e)
	}
	return r, err
}
