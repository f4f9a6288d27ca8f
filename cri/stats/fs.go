package stats

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	"golang.org/x/sys/unix"
)

// statfs sizes the filesystem that holds path: capacity, free space and
// inodes as the kernel counts them (kubelet: cAdvisor's GetDirFsInfo).
func statfs(path string, at time.Time) (*statsapi.FsStats, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return nil, fmt.Errorf("statfs %s: %w", path, err)
	}
	bsize := uint64(st.Bsize)
	capacity, available, used := st.Blocks*bsize, st.Bavail*bsize, (st.Blocks-st.Bfree)*bsize
	inodes, free := st.Files, st.Ffree
	inodesUsed := inodes - free
	return &statsapi.FsStats{
		Time:           metav1.NewTime(at),
		CapacityBytes:  &capacity,
		AvailableBytes: &available,
		UsedBytes:      &used,
		Inodes:         &inodes,
		InodesFree:     &free,
		InodesUsed:     &inodesUsed,
	}, nil
}

// runtimeFs is what the CRI's ImageFsInfo says of one filesystem: the bytes
// and inodes the runtime uses on it, with the filesystem's own size from
// statfs of its mount point when that can be read (kubelet: the CRI stats
// provider's ImageFsStats).
func runtimeFs(u *runtimeapi.FilesystemUsage, at time.Time) *statsapi.FsStats {
	fs := &statsapi.FsStats{Time: metav1.NewTime(at)}
	if mp := u.GetFsId().GetMountpoint(); mp != "" {
		if sized, err := statfs(mp, at); err == nil {
			fs = sized
		}
	}
	if u.GetUsedBytes() != nil {
		v := u.GetUsedBytes().GetValue()
		fs.UsedBytes = &v
	}
	if u.GetInodesUsed() != nil {
		v := u.GetInodesUsed().GetValue()
		fs.InodesUsed = &v
	}
	if u.GetTimestamp() != 0 {
		fs.Time = metav1.NewTime(time.Unix(0, u.GetTimestamp()))
	}
	return fs
}
