// The manifests parse into the Kubernetes API types with no unknown field,
// and say what the fleet needs: probes on /healthz and /readyz, a headless
// Service, the token from a Secret, a volume for the state dir, resource
// requests, and a termination grace longer than the drain grace.
package kubernetes

import (
	"bytes"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// docs splits a multi-document YAML file.
func docs(t *testing.T, name string) [][]byte {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	for _, d := range bytes.Split(b, []byte("\n---\n")) {
		if len(bytes.TrimSpace(d)) > 0 {
			out = append(out, d)
		}
	}
	return out
}

// strict decodes one document into v, refusing unknown fields (a typo in
// a manifest is an error, not a field Kubernetes ignores).
func strict(t *testing.T, doc []byte, v any) {
	t.Helper()
	if err := yaml.UnmarshalStrict(doc, v); err != nil {
		t.Fatalf("%v in:\n%s", err, doc)
	}
}

func TestManifests_ParseIntoTheKubernetesTypesAndDescribeTheFleet(t *testing.T) {
	var (
		dep     *appsv1.Deployment
		svc     *corev1.Service
		secrets = map[string]*corev1.Secret{}
	)
	for _, d := range docs(t, "dshd.yaml") {
		var meta struct {
			Kind string `json:"kind"`
		}
		if err := yaml.Unmarshal(d, &meta); err != nil {
			t.Fatal(err)
		}
		switch meta.Kind {
		case "Deployment":
			dep = &appsv1.Deployment{}
			strict(t, d, dep)
		case "Service":
			svc = &corev1.Service{}
			strict(t, d, svc)
		case "Secret":
			s := &corev1.Secret{}
			strict(t, d, s)
			secrets[s.Name] = s
		default:
			t.Fatalf("unexpected kind %q", meta.Kind)
		}
	}
	if dep == nil || svc == nil {
		t.Fatal("want a Deployment and a Service")
	}

	if svc.Spec.ClusterIP != corev1.ClusterIPNone {
		t.Errorf("the Service is not headless: clusterIP %q", svc.Spec.ClusterIP)
	}
	for k, v := range svc.Spec.Selector {
		if dep.Spec.Template.Labels[k] != v {
			t.Errorf("the Service selects %s=%s, which the pods do not carry", k, v)
		}
	}
	if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != 8080 {
		t.Errorf("service ports %+v", svc.Spec.Ports)
	}

	pod := dep.Spec.Template.Spec
	if len(pod.Containers) != 1 {
		t.Fatalf("%d containers", len(pod.Containers))
	}
	c := pod.Containers[0]
	args := strings.Join(c.Args, " ")
	if !strings.Contains(args, "--listen http://0.0.0.0:8080") {
		t.Errorf("the daemon does not listen for the remote transport: %s", args)
	}
	for _, p := range []struct {
		name  string
		probe *corev1.Probe
		path  string
	}{{"liveness", c.LivenessProbe, "/healthz"}, {"readiness", c.ReadinessProbe, "/readyz"}} {
		if p.probe == nil || p.probe.HTTPGet == nil || p.probe.HTTPGet.Path != p.path || p.probe.HTTPGet.Port.String() != "acp" {
			t.Errorf("%s probe %+v, want GET %s on the acp port", p.name, p.probe, p.path)
		}
	}
	if c.Resources.Requests.Cpu().IsZero() || c.Resources.Requests.Memory().IsZero() {
		t.Errorf("resource requests %v", c.Resources.Requests)
	}

	token := slices.IndexFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == "DSHD_TOKEN" })
	if token < 0 || c.Env[token].ValueFrom == nil || c.Env[token].ValueFrom.SecretKeyRef == nil {
		t.Fatal("DSHD_TOKEN does not come from a Secret")
	}
	ref := c.Env[token].ValueFrom.SecretKeyRef
	if s := secrets[ref.Name]; s == nil || s.StringData[ref.Key] == "" {
		t.Errorf("the token's Secret %s has no key %s", ref.Name, ref.Key)
	}

	stateDir := ""
	for i, a := range c.Args {
		if a == "--state-dir" && i+1 < len(c.Args) {
			stateDir = c.Args[i+1]
		}
	}
	mount := slices.IndexFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool { return m.MountPath == stateDir })
	if stateDir == "" || mount < 0 {
		t.Fatalf("the state dir %q is not on a volume", stateDir)
	}
	vol := slices.IndexFunc(pod.Volumes, func(v corev1.Volume) bool { return v.Name == c.VolumeMounts[mount].Name })
	if vol < 0 {
		t.Fatalf("the state dir's volume %q is not declared", c.VolumeMounts[mount].Name)
	}
	// An emptyDir's sizeLimit is a quota statfs does not show: the
	// daemon's own bound of its sessions must sit below it, or the kubelet
	// evicts the pod first.
	if ed := pod.Volumes[vol].EmptyDir; ed != nil && ed.SizeLimit != nil {
		bound := int64(0)
		for i, a := range c.Args {
			if a == "--max-state-bytes" && i+1 < len(c.Args) {
				bound, _ = strconv.ParseInt(c.Args[i+1], 10, 64)
			}
		}
		if bound <= 0 || bound >= ed.SizeLimit.Value() {
			t.Errorf("--max-state-bytes is %d, want a bound below the state volume's sizeLimit %s", bound, ed.SizeLimit)
		}
	}

	grace := 0
	for i, a := range c.Args {
		if a == "--drain-grace-seconds" && i+1 < len(c.Args) {
			for _, r := range c.Args[i+1] {
				grace = grace*10 + int(r-'0')
			}
		}
	}
	if pod.TerminationGracePeriodSeconds == nil || int(*pod.TerminationGracePeriodSeconds) <= grace {
		t.Errorf("terminationGracePeriodSeconds %v is not longer than the drain grace %d", pod.TerminationGracePeriodSeconds, grace)
	}
}
