package manifests

import v1 "k8s.io/api/core/v1"

// A static pod may not reference API objects (the kubelet's file source
// refuses it with podutil.HasAPIObjectReference): it is not bound through
// the API server, so the Node authorizer would not let the node read its
// Secrets, ConfigMaps or service account tokens anyway, and a manifest on
// the node's disk must not reach into the cluster's objects. This is the
// one place podlife applies the rule; the volume and env code only needs
// an API server (standalone mode has none, and refuses every reference).

// apiObjectReference is the kind of API object the pod references, named
// as the kubelet names it in "static pods may not reference <kind>"; ""
// when it references none.
func apiObjectReference(pod *v1.Pod) string {
	spec := &pod.Spec
	if spec.ServiceAccountName != "" {
		return "serviceaccounts"
	}
	if len(spec.ImagePullSecrets) > 0 || envReferences(spec, true) || volumeReferences(spec, true) {
		return "secrets"
	}
	if envReferences(spec, false) || volumeReferences(spec, false) {
		return "configmaps"
	}
	if len(spec.ResourceClaims) > 0 {
		return "resourceclaims"
	}
	for _, v := range spec.Volumes {
		switch {
		case v.CSI != nil:
			return "csidrivers (via CSI volumes)"
		case v.Glusterfs != nil:
			return "endpoints (via glusterFS volumes)"
		case v.PersistentVolumeClaim != nil:
			return "persistentvolumeclaims"
		case v.Ephemeral != nil:
			return "persistentvolumeclaims (via ephemeral volumes)"
		case v.Projected != nil:
			for _, s := range v.Projected.Sources {
				switch {
				case s.ServiceAccountToken != nil:
					return "serviceaccounts (via projected volumes)"
				case s.ClusterTrustBundle != nil:
					return "clustertrustbundles"
				case s.PodCertificate != nil:
					return "podcertificates"
				}
			}
		}
	}
	return ""
}

// envReferences reports whether a container (init, regular or ephemeral)
// takes env from a Secret (secrets) or else a ConfigMap.
func envReferences(spec *v1.PodSpec, secrets bool) bool {
	check := func(env []v1.EnvVar, from []v1.EnvFromSource) bool {
		for _, f := range from {
			if secrets && f.SecretRef != nil || !secrets && f.ConfigMapRef != nil {
				return true
			}
		}
		for _, e := range env {
			if s := e.ValueFrom; s != nil && (secrets && s.SecretKeyRef != nil || !secrets && s.ConfigMapKeyRef != nil) {
				return true
			}
		}
		return false
	}
	for _, cs := range [][]v1.Container{spec.InitContainers, spec.Containers} {
		for i := range cs {
			if check(cs[i].Env, cs[i].EnvFrom) {
				return true
			}
		}
	}
	for i := range spec.EphemeralContainers {
		if c := &spec.EphemeralContainers[i]; check(c.Env, c.EnvFrom) {
			return true
		}
	}
	return false
}

// volumeReferences reports whether a volume shows a Secret (secrets) or
// else a ConfigMap: a secret or configMap volume, a projected source, or
// a volume type's secretRef.
func volumeReferences(spec *v1.PodSpec, secrets bool) bool {
	for _, v := range spec.Volumes {
		if secrets && (v.Secret != nil || v.AzureFile != nil || secretRefVolume(&v.VolumeSource)) || !secrets && v.ConfigMap != nil {
			return true
		}
		if v.Projected == nil {
			continue
		}
		for _, s := range v.Projected.Sources {
			if secrets && s.Secret != nil || !secrets && s.ConfigMap != nil {
				return true
			}
		}
	}
	return false
}

// secretRefVolume reports whether a volume type names a Secret for its
// credentials (the kubelet's VisitPodSecretNames visits them).
func secretRefVolume(v *v1.VolumeSource) bool {
	switch {
	case v.CephFS != nil:
		return v.CephFS.SecretRef != nil
	case v.Cinder != nil:
		return v.Cinder.SecretRef != nil
	case v.FlexVolume != nil:
		return v.FlexVolume.SecretRef != nil
	case v.ISCSI != nil:
		return v.ISCSI.SecretRef != nil
	case v.RBD != nil:
		return v.RBD.SecretRef != nil
	case v.ScaleIO != nil:
		return v.ScaleIO.SecretRef != nil
	case v.StorageOS != nil:
		return v.StorageOS.SecretRef != nil
	case v.CSI != nil:
		return v.CSI.NodePublishSecretRef != nil
	}
	return false
}
