package desired

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

// FuzzBuilders feeds the builders arbitrary specs, including ones the API server would
// reject: they must never panic, must either succeed or report an InvalidSpecError naming a
// field, must respect the replicas ownership rule, and must select the pods they label.
func FuzzBuilders(f *testing.F) {
	for _, seed := range []string{
		`{"image":"nginx:1.27","replicas":2,"port":8080}`,
		`{"image":"","replicas":-1,"port":-1,"serviceType":"Weird","resources":{"limits":{"cpu":"1e1000000","memory":"-1"},"requests":{"cpu":"lots"}}}`,
		`{"image":"a@sha256:00","resources":{"limits":{"cpu":1,"memory":1073741824},"requests":{"cpu":"2"}},"autoScaling":{"enabled":true,"minReplicas":10,"maxReplicas":2}}`,
		`{"image":"x","env":[{"name":"A","value":""},{"name":"B","valueFrom":{}},{"name":"C","valueFrom":{"secretKeyRef":{"name":"s","key":"k"}}}]}`,
		`{"image":"x","readinessProbe":{},"livenessProbe":{"httpGet":{"port":"http"},"tcpSocket":{}},"startupProbe":{"grpc":{},"exec":{"command":[]}}}`,
		`{"image":"x","securityContext":{"capabilities":{}},"podSecurityContext":{"runAsNonRoot":false},"podLabels":{"myapp.example.com/name":"evil"}}`,
		`{"image":"x","tolerations":[{}],"affinity":{"nodeAffinity":{}},"topologySpreadConstraints":[{"maxSkew":-1}],"rollingUpdate":{},"podDisruptionBudget":{}}`,
		`{"image":"x","rollingUpdate":{"maxSurge":"200%","maxUnavailable":-3},"podDisruptionBudget":{"minAvailable":"x","maxUnavailable":1}}`,
		`{"image":"x","expose":{"hosts":["*.a","b.c"],"path":"/x","tls":{},"gateway":{"name":"g"},"ingressClassName":"c"}}`,
		`{"image":"x","expose":{"hosts":[]}}`,
		`{"image":"x","rolloutOnConfigChange":true,"env":[{"name":"A","valueFrom":{"configMapKeyRef":{"name":"c","key":"k"}}}],"envFrom":[{"configMapRef":{"name":"c"}},{"secretRef":{"name":"s"}}],"volumes":[{"name":"v","configMap":{"name":"d"}},{"name":"w","secret":{"secretName":"s"}},{"name":"p","projected":{"sources":[{"configMap":{"name":"e"}},{"secret":{"name":"s"}}]}}],"files":[{"path":"/etc/a","content":"x"}]}`,
	} {
		f.Add([]byte(seed), true)
	}
	f.Fuzz(func(t *testing.T, spec []byte, migrating bool) {
		app := newApp(nil)
		if err := json.Unmarshal(spec, &app.Spec); err != nil {
			return // not a spec the API server could store
		}
		d, err := Deployment(app, false)
		if err != nil {
			var invalid *InvalidSpecError
			if !errors.As(err, &invalid) || invalid.Field == "" {
				t.Fatalf("want an InvalidSpecError naming a field, got %v", err)
			}
		} else {
			if AutoscalingEnabled(app) != (d.Spec.Replicas == nil) {
				t.Fatalf("autoscaling %v but Deployment replicas %v", AutoscalingEnabled(app), d.Spec.Replicas)
			}
			for k, v := range d.Spec.Selector.MatchLabels {
				if d.Spec.Template.Labels[k] != v {
					t.Fatalf("the pod template does not carry selector label %s=%s", k, v)
				}
			}
			// Every ConfigMap the template takes values or files from, but the files
			// ConfigMap (named by its content), is one a config change can roll out for.
			referenced := ReferencedConfigMaps(app)
			files, _ := FilesOf(app)
			for _, name := range templateConfigMaps(d) {
				if files != nil && name == *files.ConfigMap.Name {
					continue
				}
				if !slices.Contains(referenced, name) {
					t.Fatalf("the pod template takes from ConfigMap %s, which ReferencedConfigMaps leaves out: %v", name, referenced)
				}
			}
		}
		svc := Service(app, migrating)
		if len(svc.Spec.Selector) == 0 {
			t.Fatal("a Service without a selector")
		}
		h := HorizontalPodAutoscaler(app)
		if AutoscalingEnabled(app) != (h != nil) {
			t.Fatalf("autoscaling %v but autoscaler %v", AutoscalingEnabled(app), h)
		}
		if h != nil && *h.Spec.MaxReplicas < *h.Spec.MinReplicas {
			t.Fatalf("maxReplicas %d below minReplicas %d", *h.Spec.MaxReplicas, *h.Spec.MinReplicas)
		}
		pdb, err := PodDisruptionBudget(app, migrating)
		if err != nil {
			var invalid *InvalidSpecError
			if !errors.As(err, &invalid) || invalid.Field == "" {
				t.Fatalf("want an InvalidSpecError naming a field for the budget, got %v", err)
			}
		}
		if pdb != nil && (pdb.Spec.MinAvailable == nil) == (pdb.Spec.MaxUnavailable == nil) {
			t.Fatal("a PodDisruptionBudget must set exactly one of minAvailable and maxUnavailable")
		}
		// Exposure: exactly one way, and either child routes every host to the Service.
		if app.Spec.Expose != nil {
			e := ExposureOf(app, ExposeDefaults{})
			if e.Route == e.Ingress {
				t.Fatalf("an exposed MyApp must get exactly one of a route and an Ingress: %+v", e)
			}
			ing := Ingress(app, e.IngressClassName)
			if len(ing.Spec.Rules) != len(app.Spec.Expose.Hosts) {
				t.Fatalf("%d Ingress rules for %d hosts", len(ing.Spec.Rules), len(app.Spec.Expose.Hosts))
			}
			route := HTTPRoute(app, examplev1.GatewayReference{Namespace: "infra", Name: "gw"})
			if *route.Spec.Rules[0].BackendRefs[0].Name != gatewayv1.ObjectName(*svc.Name) {
				t.Fatal("the HTTPRoute does not send to the MyApp's Service")
			}
			if u := URL(app); u != "" && !strings.HasSuffix(u, ExposedPath(app.Spec.Expose)) {
				t.Fatalf("status.url %q does not end in the path", u)
			}
		}
	})
}

// templateConfigMaps are the names of the ConfigMaps a built pod template refers to, in any of
// the places a pod can: env, envFrom and volumes, projected ones included.
func templateConfigMaps(d *appsv1ac.DeploymentApplyConfiguration) []string {
	var names []string
	spec := d.Spec.Template.Spec
	for _, c := range spec.Containers {
		for _, e := range c.Env {
			if e.ValueFrom != nil && e.ValueFrom.ConfigMapKeyRef != nil {
				names = append(names, *e.ValueFrom.ConfigMapKeyRef.Name)
			}
		}
		for _, e := range c.EnvFrom {
			if e.ConfigMapRef != nil {
				names = append(names, *e.ConfigMapRef.Name)
			}
		}
	}
	for _, v := range spec.Volumes {
		if v.ConfigMap != nil {
			names = append(names, *v.ConfigMap.Name)
		}
		if v.Projected != nil {
			for _, src := range v.Projected.Sources {
				if src.ConfigMap != nil {
					names = append(names, *src.ConfigMap.Name)
				}
			}
		}
	}
	return names
}
