// Package containergc is the kubelet's container garbage collector
// (kubelet: pkg/kubelet/kuberuntime/kuberuntime_gc.go, with the policy of
// pkg/kubelet/container/container_gc.go): it removes the dead instances of
// the containers of the pods that still exist beyond what the policy keeps
// (MinAge, MaxPerPodContainer, MaxContainers), each with its log files and
// its termination message file, and the dead sandboxes of a pod beyond its
// newest. What the runtime holds of a deleted pod kuberuntime removes
// whole (RemoveDeadPod), as the kubelet's collector does for pods whose
// content should be removed.
package containergc
