package podfields

// schedulers is the reason of the fields that place a pod on a node: the
// node runs what was bound to it.
const schedulers = "the scheduler's: it decided the node before the pod reached it"

// securityContextCheck refuses the security-context fields podlife does
// not apply, a field a future API adds included (TestSecurityContextRowsMatchTheirCheck).
const securityContextCheck = "cri/securitycontext Unapplied"

var podSpecRows = []Row{
	honouredBelow("volumes", "set up before the sandbox, as the sources below say (cri/volume)"),
	honouredBelow("initContainers", "run one at a time to completion before the containers; restartPolicy Always ones are sidecars (cri/kuberuntime)"),
	honouredBelow("containers", "created, started and restarted by the CRI syncer (cri/kuberuntime)"),
	honouredBelow("ephemeralContainers", "started in the running pod when the API adds them (cri/kuberuntime)"),
	honoured("restartPolicy", "exited containers restarted with the kubelet's crash-loop back-off (cri/kuberuntime)"),
	honoured("terminationGracePeriodSeconds", "the grace of every stop, hooks included (cri/kuberuntime)"),
	honoured("activeDeadlineSeconds", "a pod active longer is stopped, Failed with DeadlineExceeded, within a housekeeping interval; an update may set or shorten it (agent)"),
	honoured("dnsPolicy", "ClusterFirst (off the host network) and ClusterFirstWithHostNet: the cluster's DNS of --cluster-dns and --cluster-domain, or without it the node's resolv.conf and a MissingClusterDNS warning; Default: the node's resolv.conf; None: only the pod's dnsConfig (cri/dns)"),
	honoured("nodeSelector", "checked again at admission against the node's labels, as the kubelet does: a mismatch is rejected with NodeAffinity (agent/admission)"),
	honoured("serviceAccountName", "the service account of the projected token and of fieldRef spec.serviceAccountName (cri/volume, cri/envvars)"),
	meaningless("serviceAccount", "deprecated: the API server copies it into serviceAccountName"),
	meaningless("automountServiceAccountToken", "the API server's ServiceAccount admission adds the token volume or not; the node mounts the volumes the pod lists"),
	meaningless("nodeName", "the binding: the agent runs the pods bound to its node (fieldRef spec.nodeName is honoured)"),
	honoured("hostNetwork", "the sandbox uses the node's network namespace (cri/kuberuntime)"),
	honoured("hostPID", "the containers use the node's PID namespace (cri/securitycontext)"),
	honoured("hostIPC", "the sandbox uses the node's IPC namespace (cri/securitycontext)"),
	honoured("shareProcessNamespace", "the containers share the sandbox's PID namespace (cri/securitycontext)"),
	honouredBelow("securityContext", "applied to the sandbox and every container (cri/kuberuntime)"),
	refused("imagePullSecrets", "podlife pulls images without credentials: it reads no image pull Secrets yet"),
	honoured("hostname", "the sandbox's hostname and its line in /etc/hosts (cri/podfiles)"),
	honoured("subdomain", "the pod's FQDN in /etc/hosts, and with setHostnameAsFQDN its hostname (cri/podfiles)"),
	honoured("affinity", "required node affinity checked again at admission, as the kubelet does (NodeAffinity); the rest is the scheduler's (agent/admission)"),
	meaningless("schedulerName", "names the scheduler that binds the pod"),
	meaningless("tolerations", "the scheduler's and the taint eviction controller's"),
	honoured("hostAliases", "lines added to the managed /etc/hosts, hostNetwork pods included (cri/podfiles)"),
	honoured("priorityClassName", "system-node-critical and system-cluster-critical order graceful node shutdown; system-node-critical gets oom_score_adj -997 (agent/shutdown, cri/qos)"),
	honoured("priority", "the order of graceful node shutdown (agent/shutdown)"),
	honoured("dnsConfig", "nameservers, searches and options merged into the sandbox's resolv.conf, cut to the resolver's limits (cri/dns)"),
	honoured("readinessGates", "the pod is Ready only once their conditions are True (agent status manager)"),
	honoured("runtimeClassName", "the sandbox's runtime handler from the RuntimeClass read in cluster mode (an unknown one fails the sandbox, FailedCreatePodSandBox); refused standalone, with no API server to read it (cri/kuberuntime)"),
	honoured("enableServiceLinks", "in cluster mode each container's env gets the variables of the Services of the pod's namespace (unless false) and of default/kubernetes (always), from the agent's Service informer, as the kubelet's; standalone there are no Services, as for a kubelet without an API server (cri/envvars, agent/services)"),
	meaningless("preemptionPolicy", schedulers),
	honoured("overhead", "added to the pod's requests at admission (agent/admission); podlife makes no pod cgroup to size with it"),
	meaningless("topologySpreadConstraints", schedulers),
	honoured("setHostnameAsFQDN", "the sandbox's hostname is the pod's FQDN (cri/podfiles)"),
	honoured("os", "checked at admission: a pod for another OS is rejected with PodOSNotSupported (agent/admission)"),
	{Field: "hostUsers", Verdict: Refused, By: "cri/kuberuntime", Which: "`false`",
		Why: "podlife allocates no user-namespace ID ranges: every container waits in CreateContainerConfigError (the kubelet's message where the runtime has no user namespaces)"},
	meaningless("schedulingGates", "a gated pod is not scheduled, so it never reaches a node"),
	refused("resourceClaims", "podlife has no dynamic resource allocation (DRA): the claimed devices would not be there"),
	refused("resources", "podlife makes no pod-level cgroup: pod-level requests and limits would not be enforced"),
	honoured("hostnameOverride", "the sandbox's hostname and its name in /etc/hosts, as the kubelet's HostnameOverride (cri/podfiles)"),
	meaningless("schedulingGroup", schedulers+" (group scheduling)"),
	meaningless("evictionResponders", "the eviction request controller's"),
}

var podSecurityContextRows = []Row{
	honoured("seLinuxOptions", "the sandbox's and containers' SELinux label, passed to the runtime (cri/securitycontext)"),
	meaningless("windowsOptions", "Windows only: a Linux node ignores it, as the kubelet does"),
	honoured("runAsUser", "every container's user unless its own says otherwise (cri/securitycontext)"),
	honoured("runAsGroup", "every container's group unless its own says otherwise (cri/securitycontext)"),
	honoured("runAsNonRoot", "a root or non-numeric image user is refused with CreateContainerConfigError (cri/securitycontext)"),
	honoured("supplementalGroups", "added to every container's groups (cri/securitycontext)"),
	honoured("supplementalGroupsPolicy", "Merge; Strict only where the runtime's CRI Status reports it, else rejected at admission with SupplementalGroupsPolicyNotSupported (cri/securitycontext, agent/admission)"),
	honoured("fsGroup", "a supplementary group of every container, and the group owning the volumes podlife writes (cri/securitycontext, cri/volume)"),
	honoured("sysctls", "set in the sandbox; unsafe ones only with --allowed-unsafe-sysctls, else rejected at admission (cri/securitycontext, agent/admission)"),
	honoured("fsGroupChangePolicy", "OnRootMismatch skips volumes whose root has the group already (cri/volume)"),
	honoured("seccompProfile", "every container's seccomp profile unless its own says otherwise; unset is Unconfined, or RuntimeDefault with --seccomp-default (cri/securitycontext)"),
	honoured("appArmorProfile", "every container's AppArmor profile; on a host without AppArmor rejected at admission with AppArmor (cri/securitycontext, agent/admission)"),
	refusedBy("seLinuxChangePolicy", securityContextCheck, "podlife relabels no volumes: every container waits in CreateContainerConfigError"),
}
