// Command cel-health assesses resources with Flux's own health path for `spec.healthCheckExprs`: the expressions of
// the given Kustomization file become fluxcd/pkg/runtime/cel's status reader, the one kustomize-controller puts in front
// of kstatus' readers, and every resource file is read through it (observedGeneration check, then inProgress, failed,
// current, with Flux's CEL environment). Prints one JSON line per file: {"file", "status"} or {"file", "status":
// "Unknown", "error"} when an expression cannot be evaluated, as Flux reports it.
//
//	cel-health KUSTOMIZATION_YAML RESOURCE_YAML...
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/fluxcd/pkg/apis/kustomize"
	runtimecel "github.com/fluxcd/pkg/runtime/cel"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

type result struct {
	File   string `json:"file"`
	Status string `json:"status,omitempty"`
	Error  string `json:"error,omitempty"`
}

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: cel-health KUSTOMIZATION_YAML RESOURCE_YAML...")
		os.Exit(2)
	}
	checks, err := loadHealthChecks(os.Args[1])
	if err != nil {
		fmt.Fprintf(os.Stderr, "cel-health: %s: %v\n", os.Args[1], err)
		os.Exit(1)
	}
	newReader, err := runtimecel.NewStatusReader(checks)
	if err != nil {
		fmt.Fprintf(os.Stderr, "cel-health: %s: %v\n", os.Args[1], err)
		os.Exit(1)
	}
	// ReadStatusForObject needs neither a REST mapper nor a cluster reader: both serve only reads by object reference.
	reader := newReader(nil)
	out := json.NewEncoder(os.Stdout)
	for _, file := range os.Args[2:] {
		_ = out.Encode(assess(file, func(u *unstructured.Unstructured) (string, error) {
			s, err := reader.ReadStatusForObject(context.Background(), nil, u)
			if err != nil {
				return "", err
			}
			if s.Error != nil {
				return string(s.Status), s.Error
			}
			return string(s.Status), nil
		}))
	}
}

// loadHealthChecks reads every Kustomization document of the file and returns their spec.healthCheckExprs; the file
// must define some.
func loadHealthChecks(path string) ([]kustomize.CustomHealthCheck, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var checks []kustomize.CustomHealthCheck
	docs := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for {
		doc, err := docs.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		var k struct {
			Kind string `json:"kind"`
			Spec struct {
				HealthCheckExprs []kustomize.CustomHealthCheck `json:"healthCheckExprs"`
			} `json:"spec"`
		}
		if err := yaml.Unmarshal(doc, &k); err != nil {
			return nil, err
		}
		if k.Kind == "Kustomization" {
			checks = append(checks, k.Spec.HealthCheckExprs...)
		}
	}
	if len(checks) == 0 {
		return nil, errors.New("no Kustomization with spec.healthCheckExprs")
	}
	return checks, nil
}

func assess(file string, status func(*unstructured.Unstructured) (string, error)) result {
	data, err := os.ReadFile(file)
	if err != nil {
		return result{File: file, Error: err.Error()}
	}
	var obj unstructured.Unstructured
	if err := yaml.Unmarshal(data, &obj.Object); err != nil {
		return result{File: file, Error: err.Error()}
	}
	s, err := status(&obj)
	if err != nil {
		return result{File: file, Status: s, Error: err.Error()}
	}
	return result{File: file, Status: s}
}
