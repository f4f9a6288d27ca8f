package agent

import (
	"context"
	"fmt"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/podlife/podlife/agent/certificate"
	"github.com/podlife/podlife/agent/node"
)

// clientConfig is the node's API client configuration: the kubeconfig as
// it is or, with a bootstrap kubeconfig, a client certificate bootstrapped
// when needed (this waits until the CSR is signed or ctx ends) and rotated
// by the returned certificate.Client, which runCluster runs.
func (a *Agent) clientConfig(ctx context.Context) (*rest.Config, *certificate.Client, error) {
	cfg := a.cfg
	if cfg.BootstrapKubeconfig == "" {
		restCfg, err := clientcmd.BuildConfigFromFlags("", cfg.Kubeconfig)
		if err != nil {
			return nil, nil, fmt.Errorf("kubeconfig %s: %w", cfg.Kubeconfig, err)
		}
		return restCfg, nil, nil
	}
	certDir, err := certificate.PrepareCertDir(cfg.ResolvedCertDir())
	if err != nil {
		return nil, nil, err
	}
	certs, err := certificate.NewClient(ctx, certificate.ClientConfig{
		BootstrapConfig: certificate.BootstrapConfig{
			Kubeconfig: cfg.Kubeconfig, BootstrapKubeconfig: cfg.BootstrapKubeconfig,
			CertDir: certDir, NodeName: cfg.NodeName, Logger: a.log,
		},
		Registerer: a.registry,
	})
	if err != nil {
		return nil, nil, err
	}
	return certs.Config(), certs, nil
}

// servingCertificate is the serving certificate from the CSR API
// (RotateServerCertificates), requested by runCluster with the node's own
// client; nil when not asked for. The kubelet API serves it
// (listenKubeletAPI), and its fallback until the first is issued.
func (a *Agent) servingCertificate(client kubernetes.Interface, nm *node.Manager) (*certificate.Serving, error) {
	if !a.cfg.RotateServerCertificates {
		return nil, nil
	}
	certDir, err := certificate.PrepareCertDir(a.cfg.ResolvedCertDir())
	if err != nil {
		return nil, err
	}
	return certificate.NewServing(certificate.ServingConfig{
		CertDir: certDir, NodeName: a.cfg.NodeName, Client: client, Addresses: nm.Addresses,
		Logger: a.log, Registerer: a.registry,
	})
}
