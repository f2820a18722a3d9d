package test

import (
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"
)

const gpuResource corev1.ResourceName = "nvidia.com/gpu"

// portOf resolves a probe's or Service's target port against a
// container's ports (by name or number) with the protocol.
func portOf(c corev1.Container, p intstr.IntOrString, proto corev1.Protocol) (int32, bool) {
	if proto == "" {
		proto = corev1.ProtocolTCP
	}
	for _, cp := range c.Ports {
		cpProto := cp.Protocol
		if cpProto == "" {
			cpProto = corev1.ProtocolTCP
		}
		if cpProto != proto {
			continue
		}
		if (p.Type == intstr.String && cp.Name == p.StrVal) || (p.Type == intstr.Int && cp.ContainerPort == p.IntVal) {
			return cp.ContainerPort, true
		}
	}
	return 0, false
}

// flagValue returns the value of --name=VALUE in args.
func flagValue(args []string, name string) (string, bool) {
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			return v, true
		}
	}
	return "", false
}

func TestOverlaysRenderAndWire(t *testing.T) {
	secrets := exampleSecrets(t)
	for _, overlay := range overlays {
		t.Run(overlay, func(t *testing.T) {
			o := render(t, filepath.Join(k8sDir, "overlays", overlay))
			if len(o.namespaces) != 1 || o.namespaces[0].Name != "trigrid" {
				t.Errorf("namespaces %v", o.namespaces)
			}
			sts, ok := o.statefulSets["trigrid-coordinator"]
			if !ok {
				t.Fatal("no StatefulSet trigrid-coordinator")
			}
			dep, ok := o.deployments["trigrid-worker"]
			if !ok {
				t.Fatal("no Deployment trigrid-worker")
			}
			svc, ok := o.services["trigrid-coordinator"]
			if !ok {
				t.Fatal("no Service trigrid-coordinator")
			}
			if sts.Spec.ServiceName != svc.Name {
				t.Errorf("StatefulSet serviceName %q, Service %q", sts.Spec.ServiceName, svc.Name)
			}
			if sts.Spec.Replicas == nil || *sts.Spec.Replicas != 1 {
				t.Errorf("coordinator replicas %v, want 1", sts.Spec.Replicas)
			}
			// Selectors select their pod templates; the Service selects
			// the coordinator's pods and no worker.
			for name, sel := range map[string]map[string]string{"StatefulSet": sts.Spec.Selector.MatchLabels, "Deployment": dep.Spec.Selector.MatchLabels} {
				labels := sts.Spec.Template.Labels
				if name == "Deployment" {
					labels = dep.Spec.Template.Labels
				}
				for k, v := range sel {
					if labels[k] != v {
						t.Errorf("%s selector %s=%s not on its pod template %v", name, k, v, labels)
					}
				}
			}
			matches := func(labels map[string]string) bool {
				for k, v := range svc.Spec.Selector {
					if labels[k] != v {
						return false
					}
				}
				return len(svc.Spec.Selector) > 0
			}
			if !matches(sts.Spec.Template.Labels) || matches(dep.Spec.Template.Labels) {
				t.Errorf("Service selector %v: coordinator %v, workers %v", svc.Spec.Selector, sts.Spec.Template.Labels, dep.Spec.Template.Labels)
			}
			coord := sts.Spec.Template.Spec.Containers[0]
			for _, sp := range svc.Spec.Ports {
				if cp, ok := portOf(coord, sp.TargetPort, sp.Protocol); !ok || cp != sp.Port {
					t.Errorf("Service port %s (%d/%s -> %s): container port %d, %v", sp.Name, sp.Port, sp.Protocol, sp.TargetPort.String(), cp, ok)
				}
			}
			// The Service ports are the ones the coordinator listens on
			// and the workers join and dial.
			wantArgs := map[string]string{"listen": "0.0.0.0:7000", "gossip": "0.0.0.0:7946", "metrics": "0.0.0.0:9100", "grpc-advertise": svc.Name + ":7000"}
			for f, want := range wantArgs {
				if v, _ := flagValue(coord.Args, f); v != want {
					t.Errorf("coordinator --%s=%q, want %q (the Service's ports)", f, v, want)
				}
			}
			worker := dep.Spec.Template.Spec.Containers[0]
			if v, _ := flagValue(worker.Args, "join"); v != svc.Name+":7946" {
				t.Errorf("worker --join=%q, want the Service's gossip port", v)
			}
			if coord.Args[0] != "coordinator" || worker.Args[0] != "worker" {
				t.Errorf("subcommands %q, %q", coord.Args[0], worker.Args[0])
			}
			volumeOK(t, o, secrets, sts.Spec.Template.Spec, sts.Spec.VolumeClaimTemplates)
			volumeOK(t, o, secrets, dep.Spec.Template.Spec, nil)
			for name, pod := range o.pods() {
				for _, c := range pod.Spec.Containers {
					containerOK(t, name, pod, c, secrets)
				}
			}
			gpusOK(t, overlay, coord, worker, dep.Spec.Template.Spec)
			// The data volume is shared: ReadWriteMany.
			if pvc := o.pvcs["trigrid-data"]; !slices.Contains(pvc.Spec.AccessModes, corev1.ReadWriteMany) {
				t.Errorf("trigrid-data access modes %v, want ReadWriteMany", pvc.Spec.AccessModes)
			}
			configKeysOK(t, o)
		})
	}
}

func envValue(c corev1.Container, name string) string {
	for _, e := range c.Env {
		if e.Name == name {
			return e.Value
		}
	}
	return ""
}

// containerOK checks one container: pinned image, probes on its ports,
// resources, scrape annotations, flags and TRIGRID_* variables the binary
// accepts, Secret keys that exist.
func containerOK(t *testing.T, workload string, pod corev1.PodTemplateSpec, c corev1.Container, secrets map[string]map[string]string) {
	t.Helper()
	if c.Image != pinnedImage {
		t.Errorf("%s: image %q, want %q (pinned)", workload, c.Image, pinnedImage)
	}
	if c.ReadinessProbe == nil || c.LivenessProbe == nil {
		t.Fatalf("%s: readiness %v, liveness %v", workload, c.ReadinessProbe, c.LivenessProbe)
	}
	for what, p := range map[string]*corev1.Probe{"readiness": c.ReadinessProbe, "liveness": c.LivenessProbe, "startup": c.StartupProbe} {
		if p == nil {
			continue
		}
		want := "/healthz"
		if what == "readiness" {
			want = "/readyz"
		}
		if p.HTTPGet == nil || p.HTTPGet.Path != want {
			t.Errorf("%s: %s probe %+v, want httpGet %s", workload, what, p.ProbeHandler, want)
			continue
		}
		port, ok := portOf(c, p.HTTPGet.Port, corev1.ProtocolTCP)
		metrics, _ := flagValue(c.Args, "metrics")
		if !ok || !strings.HasSuffix(metrics, ":"+strconv.Itoa(int(port))) {
			t.Errorf("%s: %s probe port %s: container port %d, --metrics=%s", workload, what, p.HTTPGet.Port.String(), port, metrics)
		}
	}
	ann := pod.Annotations
	if ann["prometheus.io/scrape"] != "true" || ann["prometheus.io/path"] != "/metrics" {
		t.Errorf("%s: scrape annotations %v", workload, ann)
	}
	if port, ok := portOf(c, intstr.FromString("metrics"), corev1.ProtocolTCP); !ok || ann["prometheus.io/port"] != strconv.Itoa(int(port)) {
		t.Errorf("%s: prometheus.io/port %q, metrics port %d", workload, ann["prometheus.io/port"], port)
	}
	for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		if q, ok := c.Resources.Requests[r]; !ok || q.IsZero() {
			t.Errorf("%s: no %s request", workload, r)
		}
	}
	if q, ok := c.Resources.Limits[corev1.ResourceMemory]; !ok || q.Cmp(resource.MustParse("1Gi")) < 0 {
		t.Errorf("%s: memory limit %v", workload, c.Resources.Limits)
	}
	flags := flagsOf(t, c.Args[0])
	for _, a := range c.Args[1:] {
		name, _, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		if !strings.HasPrefix(a, "--") || !slices.Contains(flags, name) {
			t.Errorf("%s: argument %q: trigrid %s has no such flag", workload, a, c.Args[0])
		}
	}
	for _, e := range c.Env {
		if flag, ok := strings.CutPrefix(e.Name, "TRIGRID_"); ok {
			name := strings.ReplaceAll(strings.ToLower(flag), "_", "-")
			if !slices.Contains(flags, name) {
				t.Errorf("%s: %s: trigrid %s has no flag --%s", workload, e.Name, c.Args[0], name)
			}
		}
		if ref := secretRef(e); ref != nil {
			if _, ok := secrets[ref.Name][ref.Key]; !ok {
				t.Errorf("%s: %s: secret.example.yaml has no %s key %s", workload, e.Name, ref.Name, ref.Key)
			}
		}
	}
}

func secretRef(e corev1.EnvVar) *corev1.SecretKeySelector {
	if e.ValueFrom == nil {
		return nil
	}
	return e.ValueFrom.SecretKeyRef
}

// volumeOK checks that every mount names a volume and every volume's
// ConfigMap, Secret or claim exists.
func volumeOK(t *testing.T, o objects, secrets map[string]map[string]string, spec corev1.PodSpec, claims []corev1.PersistentVolumeClaim) {
	t.Helper()
	names := map[string]bool{}
	for _, v := range spec.Volumes {
		names[v.Name] = true
		switch {
		case v.ConfigMap != nil:
			if _, ok := o.configMaps[v.ConfigMap.Name]; !ok {
				t.Errorf("volume %s: no ConfigMap %s", v.Name, v.ConfigMap.Name)
			}
		case v.Secret != nil:
			if _, ok := secrets[v.Secret.SecretName]; !ok {
				t.Errorf("volume %s: secret.example.yaml has no Secret %s", v.Name, v.Secret.SecretName)
			}
		case v.PersistentVolumeClaim != nil:
			if _, ok := o.pvcs[v.PersistentVolumeClaim.ClaimName]; !ok {
				t.Errorf("volume %s: no PersistentVolumeClaim %s", v.Name, v.PersistentVolumeClaim.ClaimName)
			}
		}
	}
	for _, c := range claims {
		names[c.Name] = true
	}
	for _, c := range spec.Containers {
		for _, m := range c.VolumeMounts {
			if !names[m.Name] {
				t.Errorf("%s: mount %s at %s: no such volume", c.Name, m.Name, m.MountPath)
			}
		}
	}
}

// configKeysOK checks that every key of the config file is a flag of the
// coordinator or the worker (the binary refuses others at start too).
func configKeysOK(t *testing.T, o objects) {
	t.Helper()
	cm, ok := o.configMaps["trigrid-config"]
	if !ok {
		t.Fatal("no ConfigMap trigrid-config")
	}
	var keys map[string]any
	if err := kyaml.Unmarshal([]byte(cm.Data["trigrid.yaml"]), &keys); err != nil {
		t.Fatalf("trigrid.yaml: %v", err)
	}
	all := append(flagsOf(t, "coordinator"), flagsOf(t, "worker")...)
	for k := range keys {
		if !slices.Contains(all, k) {
			t.Errorf("trigrid.yaml key %q: no flag of the coordinator or the worker", k)
		}
	}
}

// gpusOK: one GPU per worker in the gpu overlay, with the node selector
// and toleration; none anywhere in the cpu overlay nor on the coordinator.
func gpusOK(t *testing.T, overlay string, coord, worker corev1.Container, wspec corev1.PodSpec) {
	t.Helper()
	gpus := func(c corev1.Container) (int64, int64) {
		l, r := c.Resources.Limits[gpuResource], c.Resources.Requests[gpuResource]
		return l.Value(), r.Value()
	}
	if l, r := gpus(coord); l != 0 || r != 0 {
		t.Errorf("coordinator asks for GPUs: %d/%d", l, r)
	}
	device := envValue(worker, "TRIGRID_DEVICE")
	switch overlay {
	case "gpu":
		if l, r := gpus(worker); l != 1 || r != 1 {
			t.Errorf("gpu worker nvidia.com/gpu limit %d request %d, want 1 and 1", l, r)
		}
		if wspec.NodeSelector["nvidia.com/gpu.present"] != "true" {
			t.Errorf("gpu worker nodeSelector %v", wspec.NodeSelector)
		}
		if !slices.ContainsFunc(wspec.Tolerations, func(tl corev1.Toleration) bool { return tl.Key == string(gpuResource) }) {
			t.Errorf("gpu worker tolerations %v", wspec.Tolerations)
		}
		if device != "gpu" {
			t.Errorf("gpu worker TRIGRID_DEVICE=%q", device)
		}
	case "cpu":
		if l, r := gpus(worker); l != 0 || r != 0 {
			t.Errorf("cpu worker asks for GPUs: %d/%d", l, r)
		}
		if len(wspec.NodeSelector) != 0 || len(wspec.Tolerations) != 0 {
			t.Errorf("cpu worker is bound to nodes: %v %v", wspec.NodeSelector, wspec.Tolerations)
		}
		if device != "cpu" {
			t.Errorf("cpu worker TRIGRID_DEVICE=%q", device)
		}
	}
}
