// Command busynode measures a busy node, the same way under any node agent
// that serves a Node of a cluster: the kubelet or podlife. It is the
// measuring half of tools/busy-node.sh, which starts containerd, the
// control plane and each node in turn.
//
//	busynode run -kubeconfig ADMIN -node NAME -node-pid PID -runtime-endpoint unix:///... \
//	    -runtime-pid PID -label kubelet -round 1 [-pods 100] [-window 30s] >>results.jsonl
//	busynode clean -runtime-endpoint unix:///...
//	busynode table -nodes kubelet,podlife results.jsonl
//
// run creates -pods pods at once (each in its own goroutine; the API
// client unthrottled) in a new namespace, bound to the node (spec.nodeName,
// as the kubelet's node e2e density tests bind theirs: no scheduler in the
// figure), each with one busybox container that sleeps and exits on
// SIGTERM, grace 1 s, and times each pod from just before its create call
// to the first time a pod watch shows it Running with every container
// started: the kubelet's pod startup SLI (the image is local, pulled
// never). With all running it lets -settle pass, then samples the node
// process's CPU time (utime+stime of /proc/PID/stat) over -window, and
// containerd's, and the node's VmRSS and VmHWM. It then deletes every pod
// at once and times each delete call to the pod's removal from the API,
// and the first delete to the runtime holding none of the namespace's
// sandboxes or containers running (stopped) and none at all (removed;
// waited for at most -removal-wait). It prints one JSON line.
//
// clean stops and removes every sandbox and container in the runtime, so
// the next node starts on an empty one. table prints the median of each
// figure over the rounds of each node, and the ratio of the second node's
// to the first's.
//
// The kubelet counterpart is the node e2e density test
// (k8s.io/kubernetes/test/e2e_node/density_test.go): it too notes each
// pod's create time just before its create call, the Running time when
// its informer sees it, and takes nearest-rank percentiles; SIG
// Scalability's pod startup latency SLO is the same span. This measures
// any node agent that way, on a real cluster and runtime.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	var err error
	switch os.Args[1] {
	case "run":
		err = runCmd(os.Args[2:])
	case "clean":
		err = cleanCmd(os.Args[2:])
	case "table":
		err = tableCmd(os.Args[2:])
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "busynode:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: busynode run|clean|table [flags] (see the package doc)")
	os.Exit(2)
}

func runCmd(args []string) error {
	fs := flag.NewFlagSet("run", flag.ExitOnError)
	var o options
	fs.StringVar(&o.kubeconfig, "kubeconfig", os.Getenv("KUBECONFIG"), "an admin's kubeconfig")
	fs.StringVar(&o.node, "node", "", "the Node's name")
	fs.IntVar(&o.nodePID, "node-pid", 0, "the node agent's process")
	fs.StringVar(&o.endpoint, "runtime-endpoint", "", "the CRI endpoint, unix:///PATH")
	fs.IntVar(&o.runtimePID, "runtime-pid", 0, "containerd's process (0: not measured)")
	fs.StringVar(&o.label, "label", "", "the node's name in the results (kubelet, podlife)")
	fs.IntVar(&o.round, "round", 1, "the round's number")
	fs.IntVar(&o.pods, "pods", 100, "pods created at once")
	fs.StringVar(&o.image, "image", "localhost/podlife/busybox:latest", "the containers' image (present on the node)")
	fs.DurationVar(&o.settle, "settle", 10*time.Second, "wait after all pods run before the CPU window")
	fs.DurationVar(&o.window, "window", 30*time.Second, "the CPU sampling window with the pods idle")
	fs.DurationVar(&o.removalWait, "removal-wait", 75*time.Second, "how long to wait for the runtime to remove the pods after the first delete")
	fs.DurationVar(&o.timeout, "timeout", 5*time.Minute, "limit for all running and for all gone")
	_ = fs.Parse(args)
	if o.node == "" || o.nodePID <= 0 || o.endpoint == "" || o.label == "" || o.kubeconfig == "" || o.pods <= 0 {
		return fmt.Errorf("run needs -kubeconfig, -node, -node-pid, -runtime-endpoint, -label and -pods > 0")
	}
	ctx := context.Background()
	res, err := run(ctx, o)
	if err != nil {
		return err
	}
	return json.NewEncoder(os.Stdout).Encode(res)
}

func cleanCmd(args []string) error {
	fs := flag.NewFlagSet("clean", flag.ExitOnError)
	endpoint := fs.String("runtime-endpoint", "", "the CRI endpoint, unix:///PATH")
	_ = fs.Parse(args)
	rt, err := dialRuntime(*endpoint)
	if err != nil {
		return err
	}
	defer rt.close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	n, err := rt.removeAll(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "busynode: removed %d sandboxes and containers left in the runtime\n", n)
	return nil
}

func tableCmd(args []string) error {
	fs := flag.NewFlagSet("table", flag.ExitOnError)
	nodes := fs.String("nodes", "kubelet,podlife", "the nodes' labels, in the table's column order")
	_ = fs.Parse(args)
	if fs.NArg() != 1 {
		return fmt.Errorf("table needs one results file")
	}
	f, err := os.Open(fs.Arg(0))
	if err != nil {
		return err
	}
	defer f.Close()
	results, err := readResults(f)
	if err != nil {
		return err
	}
	return writeTable(os.Stdout, results, strings.Split(*nodes, ","))
}
