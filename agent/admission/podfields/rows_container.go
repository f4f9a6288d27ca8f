package podfields

import (
	"reflect"
	"strings"

	v1 "k8s.io/api/core/v1"
)

var containerRows = []Row{
	honoured("name", "the container's name in the runtime and in its status"),
	honoured("image", "pulled as imagePullPolicy says and run (cri/kuberuntime)"),
	honoured("command", "the runtime's entrypoint, $(VAR) expanded (cri/envvars)"),
	honoured("args", "the entrypoint's arguments, $(VAR) expanded (cri/envvars)"),
	honoured("workingDir", "the container's working directory (cri/kuberuntime)"),
	honouredBelow("ports", "named ports for probes and hooks (cri/prober, cri/lifecycle)"),
	honoured("envFrom", "every key of the ConfigMap or Secret, with prefix and optional (cri/envvars)"),
	honouredBelow("env", "the container's environment, in order (cri/envvars)"),
	honouredBelow("resources", "cgroup limits and oom_score_adj (cri/qos) and admission (agent/admission)"),
	meaningless("resizePolicy", "applies to in-place resize only, which podlife does not do"),
	honoured("restartPolicy", "Always makes an init container a sidecar; on a regular container it replaces the pod's policy (cri/kuberuntime)"),
	honoured("restartPolicyRules", "exit-code rules that decide whether the container restarts (cri/kuberuntime); a RestartAllContainers action is a node feature podlife does not declare, rejected with PodFeatureUnsupported (agent/admission)"),
	honouredBelow("volumeMounts", "bind mounts of the pod's volumes (cri/volume)"),
	refused("volumeDevices", "podlife attaches no block devices: raw block volumes need a persistentVolumeClaim, which it does not mount either"),
	honouredBelow("livenessProbe", "a failure restarts the container (cri/prober)"),
	honouredBelow("readinessProbe", "the container's ready state (cri/prober)"),
	honouredBelow("startupProbe", "liveness and readiness wait for it; a failure restarts the container (cri/prober)"),
	honouredBelow("lifecycle", "hooks run around start and stop (cri/lifecycle)"),
	honoured("terminationMessagePath", "a file mounted there becomes the terminated state's message (cri/podfiles)"),
	honoured("terminationMessagePolicy", "FallbackToLogsOnError reads the log's tail (cri/podfiles)"),
	honoured("imagePullPolicy", "Always, IfNotPresent, Never (cri/kuberuntime)"),
	honouredBelow("securityContext", "the container's user, capabilities, profiles and root filesystem (cri/kuberuntime)"),
	honoured("stdin", "the runtime keeps the container's stdin open, for attach (cri/kuberuntime)"),
	honoured("stdinOnce", "stdin is closed after the first attach ends (cri/kuberuntime)"),
	honoured("tty", "the runtime gives the container a terminal (cri/kuberuntime)"),
}

// ephemeralContainerRows are a container's, and the target it debugs.
var ephemeralContainerRows = append(append([]Row(nil), containerRows...),
	honoured("targetContainerName", "the ephemeral container joins the target container's PID namespace (cri/kuberuntime)"))

var securityContextRows = []Row{
	honoured("capabilities", "added to and dropped from the runtime's default set (cri/securitycontext)"),
	honoured("privileged", "all capabilities and devices, no masked paths (cri/securitycontext)"),
	honoured("seLinuxOptions", "the container's SELinux label, passed to the runtime (cri/securitycontext)"),
	meaningless("windowsOptions", "Windows only: a Linux node ignores it, as the kubelet does"),
	honoured("runAsUser", "the container's user (cri/securitycontext)"),
	honoured("runAsGroup", "the container's group (cri/securitycontext)"),
	honoured("runAsNonRoot", "a root or non-numeric image user is refused with CreateContainerConfigError (cri/securitycontext)"),
	honoured("readOnlyRootFilesystem", "the root filesystem is mounted read-only (cri/securitycontext)"),
	honoured("allowPrivilegeEscalation", "false sets no_new_privs (cri/securitycontext)"),
	honoured("procMount", "Default: the kubelet's masked and read-only /proc paths; Unmasked: none (cri/securitycontext)"),
	honoured("seccompProfile", "RuntimeDefault, Unconfined or Localhost (a file under <root-dir>/seccomp) (cri/securitycontext)"),
	honoured("appArmorProfile", "the container's AppArmor profile; on a host without AppArmor rejected at admission with AppArmor (cri/securitycontext, agent/admission)"),
}

// onHostNetwork exempts a pod on the node's network: its ports are the
// node's already (the API server sets hostPort to containerPort).
func onHostNetwork(pod *v1.Pod, v reflect.Value) bool { return !pod.Spec.HostNetwork && !unset(v) }

const noHostPorts = "podlife maps no host ports (its network has no port mapping): the port would not be reachable on the node"

var containerPortRows = []Row{
	honoured("name", "probes and hooks name the port (cri/prober, cri/lifecycle)"),
	honoured("containerPort", "the number a named port stands for (cri/prober, cri/lifecycle)"),
	meaningless("protocol", "informational without a host port, as in the kubelet"),
	{Field: "hostPort", Verdict: Refused, Why: noHostPorts, Which: "unless hostNetwork", Refuses: onHostNetwork},
	{Field: "hostIP", Verdict: Refused, Why: noHostPorts, Which: "unless hostNetwork", Refuses: onHostNetwork},
}

var envVarRows = []Row{
	honoured("name", "the variable's name (cri/envvars)"),
	honoured("value", "the variable's value, $(VAR) expanded (cri/envvars)"),
	honouredBelow("valueFrom", "the value read from the source below (cri/envvars)"),
}

var envVarSourceRows = []Row{
	honoured("fieldRef", "the pod's metadata, spec and status fields the downward API allows (cri/envvars)"),
	honoured("resourceFieldRef", "a container's requests and limits with divisor (cri/envvars)"),
	honoured("configMapKeyRef", "a key of a ConfigMap, read in cluster mode; optional as in the kubelet (cri/envvars)"),
	honoured("secretKeyRef", "a key of a Secret, read in cluster mode; optional as in the kubelet (cri/envvars)"),
	honoured("fileKeyRef", "a key of an env file in one of the pod's emptyDir volumes, read when the container is created (after the init containers that write it); a missing file, invalid file or required key leaves it waiting in CreateContainerConfigError, as in the kubelet (cri/envvars)"),
}

// unenforcedResources refuses the resources podlife would not hold a
// container to: huge pages (none are set up) and, for limits, local
// storage (the kubelet enforces it by eviction; podlife evicts nothing).
func unenforcedResources(limits bool) func(*v1.Pod, reflect.Value) bool {
	return func(_ *v1.Pod, v reflect.Value) bool {
		for name := range v.Interface().(v1.ResourceList) {
			if strings.HasPrefix(string(name), v1.ResourceHugePagesPrefix) || limits && name == v1.ResourceEphemeralStorage {
				return true
			}
		}
		return false
	}
}

var resourceRows = []Row{
	{Field: "limits", Verdict: Refused, Which: "`hugepages-*`, `ephemeral-storage`", Refuses: unenforcedResources(true),
		Why: "cpu and memory limits are enforced (cri/qos); podlife sets up no huge pages and evicts nothing for local storage, so these limits would not hold"},
	{Field: "requests", Verdict: Refused, Which: "`hugepages-*`", Refuses: unenforcedResources(false),
		Why: "cpu and memory requests give CPU shares and admission (cri/qos, agent/admission); podlife sets up no huge pages"},
	refused("claims", "podlife has no dynamic resource allocation (DRA): the claimed devices would not be there"),
}

var volumeMountRows = []Row{
	honoured("name", "the pod volume to mount (cri/volume)"),
	honoured("readOnly", "a read-only bind mount (cri/volume)"),
	honoured("recursiveReadOnly", "the CRI mount's recursive_read_only as the kubelet resolves it: IfPossible when the runtime handler supports it, Enabled or CreateContainerConfigError; the container status' volumeMounts say which (cri/volume)"),
	honoured("mountPath", "where the container sees the volume (cri/volume)"),
	honoured("subPath", "a path opened beneath the volume and mounted by descriptor (cri/volume)"),
	honoured("mountPropagation", "the CRI mount's propagation, as the kubelet's: None private, HostToContainer rslave, Bidirectional rshared (privileged containers only, as the API server checks); the pods root is made rshared for them (cri/volume)"),
	refusedBy("subPathExpr", "cri/volume", "subPathExpr is not supported: the pod's sync fails with FailedMount"),
	refusedBy("bindMountOptions", "agent/admission DeclaredFeatures", "a node feature podlife does not declare (it applies no bind mount options): rejected at admission with PodFeatureUnsupported"),
}

var probeRows = []Row{
	honoured("exec", "a command run through CRI ExecSync; exit 0 passes (cri/prober)"),
	honoured("httpGet", "an HTTP GET to the pod IP or host; 2xx and 3xx pass (cri/prober)"),
	honoured("tcpSocket", "a TCP connection (cri/prober)"),
	honoured("grpc", "the grpc.health.v1 check (cri/prober)"),
	honoured("initialDelaySeconds", "the wait before the first run (cri/prober)"),
	honoured("timeoutSeconds", "each run's timeout (cri/prober)"),
	honoured("periodSeconds", "the time between runs (cri/prober)"),
	honoured("successThreshold", "passes in a row to succeed (cri/prober)"),
	honoured("failureThreshold", "failures in a row to fail (cri/prober)"),
	honoured("terminationGracePeriodSeconds", "the grace of the kill a failed probe causes (cri/kuberuntime)"),
}

var lifecycleRows = []Row{
	honouredBelow("postStart", "run once the container started; a failure kills it (cri/lifecycle)"),
	honouredBelow("preStop", "run inside the grace period before the stop (cri/lifecycle)"),
	honoured("stopSignal", "CRI StopSignal; the runtime must honour it (cri/kuberuntime)"),
}

var lifecycleHandlerRows = []Row{
	honoured("exec", "a command run through CRI ExecSync (cri/lifecycle)"),
	honoured("httpGet", "an HTTP GET to the pod IP or host (cri/lifecycle)"),
	honoured("tcpSocket", "deprecated: fails, as in the kubelet (cri/lifecycle)"),
	honoured("sleep", "a pause of the given seconds (cri/lifecycle)"),
}
