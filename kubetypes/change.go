package kubetypes

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
)

// Op is what happened to a pod between two reports of its source.
type Op int

const (
	Add Op = iota + 1
	Update
	Remove
)

func (o Op) String() string {
	switch o {
	case Add:
		return "Add"
	case Update:
		return "Update"
	case Remove:
		return "Remove"
	}
	return fmt.Sprintf("Op(%d)", int(o))
}

// Change is one pod added, updated or removed by a config source (kubelet:
// kubetypes.PodUpdate), with the manifest it comes from ("" for a pod of
// the API server). For Remove, Pod is the pod as last reported.
type Change struct {
	Op   Op
	Pod  *v1.Pod
	Path string
}
