// Package test renders deploy/k8s with the kustomize Go API, decodes every
// object strictly into the Kubernetes API types, checks how the objects
// wire together, and runs the rendered containers' command lines as real
// processes on loopback: a coordinator and the CPU overlay's workers count
// testdata/ca-GrQc.txt.gz through `trigrid submit --wait --json`.
//
// It is a module of its own so that the main module does not depend on
// the Kubernetes and kustomize libraries; it builds the trigrid binary
// from the repository root with `go build`. Run it with
//
//	cd deploy/k8s/test && go test ./...
package test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sync"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/kustomize/kyaml/kio"
)

// repoRoot is the repository, three levels up from deploy/k8s/test.
var repoRoot = func() string {
	abs, err := filepath.Abs("../../..")
	if err != nil {
		panic(err)
	}
	return abs
}()

var k8sDir = filepath.Join(repoRoot, "deploy", "k8s")

// overlays are the kustomizations a user applies.
var overlays = []string{"gpu", "cpu"}

// pinnedImage is the image every container runs in the shipped overlays.
const pinnedImage = "trigrid:0.1.0"

// objects is one rendering, decoded.
type objects struct {
	namespaces   []corev1.Namespace
	configMaps   map[string]corev1.ConfigMap
	pvcs         map[string]corev1.PersistentVolumeClaim
	services     map[string]corev1.Service
	statefulSets map[string]appsv1.StatefulSet
	deployments  map[string]appsv1.Deployment
}

// strict decodes JSON into v, refusing fields v's type does not have.
func strict(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return fmt.Errorf("trailing data")
	}
	return nil
}

// render runs kustomize on dir and decodes each object strictly by its
// apiVersion and kind; an object of any other kind is an error, so a new
// kind gets a decoder and checks here first.
func render(t *testing.T, dir string) objects {
	t.Helper()
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	rm, err := k.Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		t.Fatalf("kustomize build %s: %v", dir, err)
	}
	o := objects{configMaps: map[string]corev1.ConfigMap{}, pvcs: map[string]corev1.PersistentVolumeClaim{},
		services: map[string]corev1.Service{}, statefulSets: map[string]appsv1.StatefulSet{}, deployments: map[string]appsv1.Deployment{}}
	for _, r := range rm.Resources() {
		b, err := r.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		gvk := r.GetApiVersion() + " " + r.GetKind()
		name := r.GetName()
		var derr error
		switch gvk {
		case "v1 Namespace":
			var v corev1.Namespace
			derr = strict(b, &v)
			o.namespaces = append(o.namespaces, v)
		case "v1 ConfigMap":
			var v corev1.ConfigMap
			derr = strict(b, &v)
			o.configMaps[name] = v
		case "v1 PersistentVolumeClaim":
			var v corev1.PersistentVolumeClaim
			derr = strict(b, &v)
			o.pvcs[name] = v
		case "v1 Service":
			var v corev1.Service
			derr = strict(b, &v)
			o.services[name] = v
		case "apps/v1 StatefulSet":
			var v appsv1.StatefulSet
			derr = strict(b, &v)
			o.statefulSets[name] = v
		case "apps/v1 Deployment":
			var v appsv1.Deployment
			derr = strict(b, &v)
			o.deployments[name] = v
		default:
			t.Fatalf("%s: %s %s: no strict decoder for this kind in the manifest test", dir, gvk, name)
		}
		if derr != nil {
			t.Fatalf("%s: %s %s does not decode strictly: %v", dir, gvk, name, derr)
		}
		if ns := r.GetNamespace(); gvk != "v1 Namespace" && ns != "trigrid" {
			t.Errorf("%s: %s %s in namespace %q, want trigrid", dir, gvk, name, ns)
		}
	}
	return o
}

// exampleSecrets decodes secret.example.yaml strictly: name -> key -> value.
func exampleSecrets(t *testing.T) map[string]map[string]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(k8sDir, "secret.example.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	docs, err := (&kio.ByteReader{Reader: bytes.NewReader(b), OmitReaderAnnotations: true}).Read()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]string{}
	for _, rn := range docs {
		js, err := rn.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		var s corev1.Secret
		if err := strict(js, &s); err != nil {
			t.Fatalf("secret.example.yaml: %s does not decode strictly: %v", rn.GetName(), err)
		}
		if s.Kind != "Secret" || s.APIVersion != "v1" {
			t.Fatalf("secret.example.yaml: %s %s", s.APIVersion, s.Kind)
		}
		out[s.Name] = s.StringData
	}
	return out
}

// pods are the workloads' pod templates by workload name.
func (o objects) pods() map[string]corev1.PodTemplateSpec {
	p := map[string]corev1.PodTemplateSpec{}
	for n, s := range o.statefulSets {
		p[n] = s.Spec.Template
	}
	for n, d := range o.deployments {
		p[n] = d.Spec.Template
	}
	return p
}

var (
	buildOnce sync.Once
	binary    string
	buildErr  error
)

// trigrid builds the binary once from the repository root.
func trigrid(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "trigrid-k8s-bin")
		if err != nil {
			buildErr = err
			return
		}
		binary = filepath.Join(dir, "trigrid")
		cmd := exec.Command("go", "build", "-o", binary, "./cmd/trigrid")
		cmd.Dir = repoRoot
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build ./cmd/trigrid: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binary
}

var helpFlag = regexp.MustCompile(`(?m)^\s+(?:-\w, )?--([a-z0-9][a-z0-9-]*)`)

// flagsOf returns the flags `trigrid SUB --help` lists, global ones too.
func flagsOf(t *testing.T, sub string) []string {
	t.Helper()
	out, err := exec.Command(trigrid(t), sub, "--help").CombinedOutput()
	if err != nil {
		t.Fatalf("trigrid %s --help: %v\n%s", sub, err, out)
	}
	var names []string
	for _, m := range helpFlag.FindAllStringSubmatch(string(out), -1) {
		names = append(names, m[1])
	}
	if !slices.Contains(names, "config") || len(names) < 5 {
		t.Fatalf("trigrid %s --help: found only flags %v", sub, names)
	}
	return names
}
