package podfields

// volumeCheck is the code that refuses the volume types podlife cannot
// mount; notMounted is the reason it gives.
const (
	volumeCheck = "cri/volume Check"
	notMounted  = "podlife does not mount this volume type: the pod's sync fails with FailedMount and the pod stays ContainerCreating"
)

// volumeRows are a volume's name and each of its sources (v1.VolumeSource,
// inline in v1.Volume).
var volumeRows = []Row{
	honoured("name", "the volume's directory under the pod's, and what mounts name (cri/volume)"),
	honoured("hostPath", "a bind mount of the node's path, after its type check (cri/volume)"),
	honoured("emptyDir", "a directory, or a tmpfs of sizeLimit with medium Memory; medium HugePages fails the sync (cri/volume)"),
	refusedBy("gcePersistentDisk", volumeCheck, notMounted),
	refusedBy("awsElasticBlockStore", volumeCheck, notMounted),
	refusedBy("gitRepo", volumeCheck, notMounted),
	honoured("secret", "the Secret's keys written atomically, read in cluster mode (cri/volume)"),
	refusedBy("nfs", volumeCheck, notMounted),
	refusedBy("iscsi", volumeCheck, notMounted),
	refusedBy("glusterfs", volumeCheck, notMounted),
	refusedBy("persistentVolumeClaim", volumeCheck, notMounted),
	refusedBy("rbd", volumeCheck, notMounted),
	refusedBy("flexVolume", volumeCheck, notMounted),
	refusedBy("cinder", volumeCheck, notMounted),
	refusedBy("cephfs", volumeCheck, notMounted),
	refusedBy("flocker", volumeCheck, notMounted),
	honoured("downwardAPI", "the pod's fields as files, rewritten when labels or annotations change (cri/volume)"),
	refusedBy("fc", volumeCheck, notMounted),
	refusedBy("azureFile", volumeCheck, notMounted),
	honoured("configMap", "the ConfigMap's keys written atomically, read in cluster mode (cri/volume)"),
	refusedBy("vsphereVolume", volumeCheck, notMounted),
	refusedBy("quobyte", volumeCheck, notMounted),
	refusedBy("azureDisk", volumeCheck, notMounted),
	refusedBy("photonPersistentDisk", volumeCheck, notMounted),
	honouredBelow("projected", "the sources below in one directory, written atomically (cri/volume)"),
	refusedBy("portworxVolume", volumeCheck, notMounted),
	refusedBy("scaleIO", volumeCheck, notMounted),
	refusedBy("storageos", volumeCheck, notMounted),
	refusedBy("csi", volumeCheck, notMounted),
	refusedBy("ephemeral", volumeCheck, notMounted),
	refusedBy("image", volumeCheck, notMounted),
}

var projectedRows = []Row{
	honouredBelow("sources", "each source's files (cri/volume)"),
	honoured("defaultMode", "the files' mode unless an item sets its own (cri/volume)"),
	refusedBy("defaultUser", volumeCheck, "file owners (the alpha AtomicWriteVolumeUserFields) are not supported: the pod's sync fails with FailedMount"),
}

const notProjected = "podlife does not project this source: the pod's sync fails with FailedMount"

var projectionRows = []Row{
	honoured("secret", "the Secret's keys, read in cluster mode (cri/volume)"),
	honoured("downwardAPI", "the pod's fields as files (cri/volume)"),
	honoured("configMap", "the ConfigMap's keys, read in cluster mode (cri/volume)"),
	honoured("serviceAccountToken", "a token from the TokenRequest API, bound to the pod, refreshed at 80% of its life (cri/volume, agent/token)"),
	refusedBy("clusterTrustBundle", volumeCheck, notProjected),
	refusedBy("podCertificate", volumeCheck, notProjected),
}
