package volume

import (
	"io/fs"
	"os"
	"path/filepath"

	v1 "k8s.io/api/core/v1"
)

// A pod's fsGroup (spec.securityContext.fsGroup) owns the volumes podlife
// makes for it, as the kubelet's SetVolumeOwnership
// (pkg/volume/volume_linux.go) does: every file, directory and link of
// the volume gets group fsGroup, files the group's read bits (and write
// bits in a volume the pod may write, an emptyDir), directories the
// group's search bit and setgid, so what a container creates in them
// belongs to fsGroup too. An emptyDir is changed once, when it is made
// (the kubelet's is, and a container's own chmod or chgrp later is the
// pod's business); the files the agent writes (secret, configMap,
// downwardAPI, projected) each time they are written. A hostPath is the
// node's own and never touched.
//
// fsGroupChangePolicy does not change any of this: the kubelet passes no
// policy to the ownership change of these volume types (only volumes of
// other plugins, which podlife does not mount, skip it OnRootMismatch),
// so every one of them is changed whole.

const (
	// writableGroupBits and readOnlyGroupBits are the kubelet's rwMask
	// and roMask, searchBits its execMask, added to a directory's mode.
	writableGroupBits = 0o660
	readOnlyGroupBits = 0o440
	searchBits        = 0o110
)

// ownership is what the pod's security context asks of the files of its
// volumes: their group, and the owner of a projected token.
type ownership struct {
	// fsGroup is the pod's fsGroup; nil leaves groups and modes as they
	// are.
	fsGroup *int64
	// fsUser is the user every container of the pod runs as, when they
	// all set one and it is the same: the owner of a projected volume's
	// token (the kubelet's FsUserFrom); nil when not.
	fsUser *int64
}

// podOwnership is the pod's ownership of its volumes.
func podOwnership(pod *v1.Pod) ownership {
	var o ownership
	if sc := pod.Spec.SecurityContext; sc != nil {
		o.fsGroup = sc.FSGroup
	}
	o.fsUser = commonRunAsUser(pod)
	return o
}

// commonRunAsUser is the runAsUser every container of the pod (init,
// regular and ephemeral) has, its own or else the pod's; nil when one has
// none or two differ.
func commonRunAsUser(pod *v1.Pod) *int64 {
	var podUser *int64
	if sc := pod.Spec.SecurityContext; sc != nil {
		podUser = sc.RunAsUser
	}
	var common *int64
	check := func(sc *v1.SecurityContext) bool {
		user := podUser
		if sc != nil && sc.RunAsUser != nil {
			user = sc.RunAsUser
		}
		if user == nil || (common != nil && *common != *user) {
			return false
		}
		common = user
		return true
	}
	for _, c := range allContainers(pod) {
		if !check(c.SecurityContext) {
			return nil
		}
	}
	for i := range pod.Spec.EphemeralContainers {
		if !check(pod.Spec.EphemeralContainers[i].SecurityContext) {
			return nil
		}
	}
	return common
}

// groupBits are the bits fsGroup adds to a file's mode in a volume; a
// directory gets searchBits and setgid besides.
func groupBits(readOnly bool) fs.FileMode {
	if readOnly {
		return readOnlyGroupBits
	}
	return writableGroupBits
}

// changeOwnership gives everything under root, root included, group
// fsGroup and the group's bits (changeFilePermission of the kubelet's
// SetVolumeOwnership). Links are not followed: a link's own group
// changes, and its target's mode is left alone (it is in the volume, and
// changed on its own).
func changeOwnership(root string, fsGroup int64, readOnly bool) error {
	bits := groupBits(readOnly)
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := os.Lchown(p, -1, int(fsGroup)); err != nil {
			return err
		}
		if d.Type()&fs.ModeSymlink != 0 {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		mode := info.Mode().Perm() | info.Mode()&(fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky) | bits
		if d.IsDir() {
			mode |= searchBits | fs.ModeSetgid
		}
		return os.Chmod(p, mode)
	})
}
