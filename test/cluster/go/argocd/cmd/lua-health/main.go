// Command lua-health assesses resources with Argo CD's own health path: the argocd-cm given is loaded by Argo CD's
// settings manager (over a fake clientset, as `argocd admin settings resource-overrides health` does) and every
// resource file is judged by gitops-engine's GetResourceHealth with the Lua overrides, the application
// controller's code path. Prints one JSON line per file: {"file", "status", "message"} or {"file", "error"}.
//
//	lua-health ARGOCD_CM_YAML RESOURCE_YAML...
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/argoproj/gitops-engine/pkg/health"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes/fake"
	"sigs.k8s.io/yaml"

	"github.com/argoproj/argo-cd/v3/common"
	"github.com/argoproj/argo-cd/v3/util/lua"
	"github.com/argoproj/argo-cd/v3/util/settings"
)

type result struct {
	File    string `json:"file"`
	Status  string `json:"status,omitempty"`
	Message string `json:"message"`
	Error   string `json:"error,omitempty"`
}

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: lua-health ARGOCD_CM_YAML RESOURCE_YAML...")
		os.Exit(2)
	}
	overrides, err := loadOverrides(os.Args[1])
	if err != nil {
		fmt.Fprintf(os.Stderr, "lua-health: %s: %v\n", os.Args[1], err)
		os.Exit(1)
	}
	out := json.NewEncoder(os.Stdout)
	for _, file := range os.Args[2:] {
		_ = out.Encode(assess(file, overrides))
	}
}

func loadOverrides(path string) (lua.ResourceHealthOverrides, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var cm corev1.ConfigMap
	if err := yaml.Unmarshal(data, &cm); err != nil {
		return nil, err
	}
	// The settings manager only reads objects in its namespace that carry Argo CD's part-of label.
	partOf := map[string]string{"app.kubernetes.io/part-of": "argocd"}
	cm.Namespace = "default"
	cm.Labels = partOf
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: common.ArgoCDSecretName, Namespace: "default", Labels: partOf},
		Data:       map[string][]byte{"admin.password": []byte("test"), "server.secretkey": []byte("test")},
	}
	ctx := context.Background()
	manager := settings.NewSettingsManager(ctx, fake.NewClientset(secret, &cm), "default")
	if err := manager.ResyncInformers(); err != nil {
		return nil, err
	}
	overrides, err := manager.GetResourceOverrides()
	if err != nil {
		return nil, err
	}
	return lua.ResourceHealthOverrides(overrides), nil
}

func assess(file string, overrides lua.ResourceHealthOverrides) result {
	data, err := os.ReadFile(file)
	if err != nil {
		return result{File: file, Error: err.Error()}
	}
	var obj unstructured.Unstructured
	if err := yaml.Unmarshal(data, &obj.Object); err != nil {
		return result{File: file, Error: err.Error()}
	}
	h, err := health.GetResourceHealth(&obj, overrides)
	switch {
	case err != nil:
		return result{File: file, Error: err.Error()}
	case h == nil:
		return result{File: file, Error: "no health check is configured for " + obj.GroupVersionKind().String()}
	default:
		return result{File: file, Status: string(h.Status), Message: h.Message}
	}
}
