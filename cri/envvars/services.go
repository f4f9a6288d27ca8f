package envvars

import (
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podlife/podlife/kubetypes"
)

// ServiceLister is the cluster's Services as the node watches them (the
// kubelet's service lister), the source of the Service variables.
type ServiceLister interface {
	// HasSynced reports whether the Services were listed at least once.
	HasSynced() bool
	// Services are the Services of namespace.
	Services(namespace string) ([]*v1.Service, error)
}

// ErrServicesNotSynced fails an API pod's container until the node read
// the Services once (the kubelet's message): started earlier, it would
// miss KUBERNETES_SERVICE_HOST, which in-cluster clients read. The pod's
// sync is retried.
var ErrServicesNotSynced = fmt.Errorf("services have not yet been read at least once, cannot construct envvars")

// masterService is the API server's Service in namespace default, whose
// variables every pod gets, enableServiceLinks or not.
const masterService = "kubernetes"

// serviceEnv is the Service variables of pod's containers, as the
// kubelet's getServiceEnvVarMap makes them: the default namespace's
// kubernetes Service always, the pod's namespace's Services unless
// enableServiceLinks is false (nil is the API's default, true), only the
// Services with a cluster IP. A Service of the pod's namespace shadows
// the default namespace's of the same name. No lister (standalone mode, a
// node without an API server) is no Services.
func serviceEnv(pod *v1.Pod, services ServiceLister) ([]v1.EnvVar, error) {
	if services == nil {
		return nil, nil
	}
	if !kubetypes.IsStatic(pod) && !services.HasSynced() {
		return nil, ErrServicesNotSynced
	}
	byName := map[string]*v1.Service{}
	add := func(namespace string, keep func(*v1.Service) bool) error {
		list, err := services.Services(namespace)
		if err != nil {
			return fmt.Errorf("failed to list services when setting up env vars: %w", err)
		}
		for _, svc := range list {
			if serviceIPSet(svc) && keep(svc) {
				byName[svc.Name] = svc
			}
		}
		return nil
	}
	if err := add(metav1.NamespaceDefault, func(s *v1.Service) bool { return s.Name == masterService }); err != nil {
		return nil, err
	}
	links := pod.Spec.EnableServiceLinks == nil || *pod.Spec.EnableServiceLinks
	if links {
		if err := add(pod.Namespace, func(*v1.Service) bool { return true }); err != nil {
			return nil, err
		}
	}
	linked := make([]*v1.Service, 0, len(byName))
	for _, svc := range byName {
		linked = append(linked, svc)
	}
	slices.SortFunc(linked, func(a, b *v1.Service) int { return strings.Compare(a.Name, b.Name) })
	return FromServices(linked), nil
}

// serviceIPSet is the kubelet's IsServiceIPSet: a headless ("None") or
// ExternalName (no cluster IP) Service has no variables.
func serviceIPSet(svc *v1.Service) bool {
	return svc.Spec.ClusterIP != "" && svc.Spec.ClusterIP != v1.ClusterIPNone
}

// FromServices is the variables that tell a container where services
// are (the kubelet's envvars.FromServices), for each Service with a
// cluster IP and a port: {NAME}_SERVICE_HOST, {NAME}_SERVICE_PORT (the
// first port), {NAME}_SERVICE_PORT_{PORTNAME} for each named port, and
// the Docker links' {NAME}_PORT (the first port's URL) and
// {NAME}_PORT_{port}_{PROTO} with its _PROTO, _PORT and _ADDR. NAME is
// the Service's name upper-cased, '-' made '_'.
func FromServices(services []*v1.Service) []v1.EnvVar {
	var out []v1.EnvVar
	for _, svc := range services {
		if !serviceIPSet(svc) || len(svc.Spec.Ports) == 0 {
			continue
		}
		prefix := envVarName(svc.Name)
		ip := svc.Spec.ClusterIP
		out = append(out,
			v1.EnvVar{Name: prefix + "_SERVICE_HOST", Value: ip},
			v1.EnvVar{Name: prefix + "_SERVICE_PORT", Value: strconv.Itoa(int(svc.Spec.Ports[0].Port))})
		for _, p := range svc.Spec.Ports {
			if p.Name != "" {
				out = append(out, v1.EnvVar{Name: prefix + "_SERVICE_PORT_" + envVarName(p.Name), Value: strconv.Itoa(int(p.Port))})
			}
		}
		out = append(out, linkVars(prefix, ip, svc.Spec.Ports)...)
	}
	return out
}

// linkVars are a Service's Docker-link variables; the first port also
// gets {NAME}_PORT, as Docker special-cases it.
func linkVars(prefix, ip string, ports []v1.ServicePort) []v1.EnvVar {
	var out []v1.EnvVar
	for i, p := range ports {
		proto := string(v1.ProtocolTCP)
		if p.Protocol != "" {
			proto = string(p.Protocol)
		}
		port := strconv.Itoa(int(p.Port))
		url := strings.ToLower(proto) + "://" + net.JoinHostPort(ip, port)
		if i == 0 {
			out = append(out, v1.EnvVar{Name: prefix + "_PORT", Value: url})
		}
		portPrefix := prefix + "_PORT_" + port + "_" + strings.ToUpper(proto)
		out = append(out,
			v1.EnvVar{Name: portPrefix, Value: url},
			v1.EnvVar{Name: portPrefix + "_PROTO", Value: strings.ToLower(proto)},
			v1.EnvVar{Name: portPrefix + "_PORT", Value: port},
			v1.EnvVar{Name: portPrefix + "_ADDR", Value: ip})
	}
	return out
}

// envVarName is a Service or port name as a variable name.
func envVarName(name string) string {
	return strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}
