// Package podfiles makes the files of a pod that its containers mount
// from the pod's directory, and reads them back (kubelet: kubelet_pods.go's
// managed hosts file, and the termination message path of
// kuberuntime_container.go with its getTerminationMessage): the pod's
// /etc/hosts, with its hostname, and each container instance's
// termination message file, whose content, or else the tail of the
// container's log, becomes the message of its terminated state.
package podfiles
