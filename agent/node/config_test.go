package node

import (
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

func TestConfigValidation(t *testing.T) {
	client := kubernetes.NewForConfigOrDie(&rest.Config{Host: "https://127.0.0.1:1"})
	valid := Config{Client: client, NodeName: "n1", Capacity: fullCapacity}
	for _, tc := range []struct {
		name    string
		edit    func(c *Config)
		wantErr string
	}{
		{"valid", func(*Config) {}, ""},
		{"no client", func(c *Config) { c.Client = nil }, "Client is required"},
		{"bad name", func(c *Config) { c.NodeName = "Not_A_Name" }, `invalid node name "Not_A_Name"`},
		{"forbidden label", func(c *Config) { c.Labels = map[string]string{"node-role.kubernetes.io/control-plane": ""} },
			"NodeRestriction forbids a node to set the labels node-role.kubernetes.io/control-plane"},
		{"partial second lease", func(c *Config) { c.LeaseDuration = 1500 * time.Millisecond }, "whole number of seconds"},
		{"negative", func(c *Config) { c.RenewInterval = -time.Second }, "negative duration"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := valid
			tc.edit(&cfg)
			got, err := cfg.withDefaults()
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				if got.StatusUpdateFrequency != 10*time.Second || got.StatusReportFrequency != 5*time.Minute ||
					got.LeaseDuration != 40*time.Second || got.RenewInterval != 10*time.Second ||
					got.Clock == nil || got.Logger == nil || got.Ready == nil || got.Allocatable == nil {
					t.Errorf("defaults not filled in: %+v", got)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("error %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}
