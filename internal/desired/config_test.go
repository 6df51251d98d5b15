package desired

import (
	"encoding/json"
	"maps"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

func TestReferencedConfigMaps(t *testing.T) {
	app := newApp(func(a *examplev1.MyApp) {
		a.Spec.Env = []examplev1.EnvVar{
			{Name: "A", ValueFrom: &examplev1.EnvVarSource{ConfigMapKeyRef: &examplev1.KeySelector{Name: "zeta", Key: "a"}}},
			{Name: "B", ValueFrom: &examplev1.EnvVarSource{SecretKeyRef: &examplev1.KeySelector{Name: "secret", Key: "b"}}},
			{Name: "C", ValueFrom: &examplev1.EnvVarSource{ConfigMapKeyRef: &examplev1.KeySelector{Name: "alpha", Key: "c"}}},
		}
		a.Spec.EnvFrom = []examplev1.EnvFromSource{
			{ConfigMapRef: &examplev1.EnvFromReference{Name: "zeta"}},
			{SecretRef: &examplev1.EnvFromReference{Name: "other-secret"}},
		}
		a.Spec.Volumes = []examplev1.Volume{
			{Name: "a", ConfigMap: &examplev1.ConfigMapVolumeSource{Name: "mid"}},
			{Name: "b", Secret: &examplev1.SecretVolumeSource{SecretName: "volume-secret"}},
			{Name: "c", EmptyDir: &examplev1.EmptyDirVolumeSource{}},
			{Name: "p", Projected: &examplev1.ProjectedVolumeSource{Sources: []examplev1.VolumeProjection{
				{ConfigMap: &examplev1.ConfigMapProjection{Name: "projected"}},
				{Secret: &examplev1.SecretProjection{Name: "projected-secret"}}}}},
		}
		a.Spec.Files = []examplev1.File{{Path: "/etc/app", Content: "x"}}
	})
	got := ReferencedConfigMaps(app)
	want := []string{"alpha", "mid", "projected", "zeta"}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
	app.Spec.EnvFrom = append(app.Spec.EnvFrom, examplev1.EnvFromSource{ConfigMapRef: &examplev1.EnvFromReference{Name: "maybe", Optional: ptr(true)}})
	app.Spec.Volumes = append(app.Spec.Volumes,
		examplev1.Volume{Name: "d", ConfigMap: &examplev1.ConfigMapVolumeSource{Name: "maybe", Optional: ptr(true)}},
		examplev1.Volume{Name: "e", ConfigMap: &examplev1.ConfigMapVolumeSource{Name: "mid", Optional: ptr(true)}})
	required := RequiredConfigMaps(app)
	if !required["alpha"] || !required["zeta"] || !required["mid"] || !required["projected"] || required["maybe"] || len(required) != 4 {
		t.Fatalf("required: got %v, want alpha, mid, projected and zeta (mid is required by one of its references)", required)
	}
	if got := ReferencedConfigMaps(newApp(nil)); len(got) != 0 {
		t.Fatalf("a MyApp without references: got %v", got)
	}
}

func TestConfigMapDigest(t *testing.T) {
	cm := func(data map[string]string, binary map[string][]byte) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c", Labels: map[string]string{"x": "y"}}, Data: data, BinaryData: binary}
	}
	base := ConfigMapDigest(cm(map[string]string{"a": "1", "b": "2"}, nil))
	for _, tc := range []struct {
		name string
		cm   *corev1.ConfigMap
		same bool
	}{
		{"the same data", cm(map[string]string{"b": "2", "a": "1"}, nil), true},
		{"other metadata", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "d", ResourceVersion: "9"}, Data: map[string]string{"a": "1", "b": "2"}}, true},
		{"a value changed", cm(map[string]string{"a": "1", "b": "3"}, nil), false},
		{"a key renamed", cm(map[string]string{"a": "1", "c": "2"}, nil), false},
		{"a key added", cm(map[string]string{"a": "1", "b": "2", "c": ""}, nil), false},
		{"a value moved across a key boundary", cm(map[string]string{"a": "1b", "": "2"}, nil), false},
		{"the same entry as binary data", cm(map[string]string{"a": "1"}, map[string][]byte{"b": []byte("2")}), false},
		{"empty", cm(nil, nil), false},
	} {
		if got := ConfigMapDigest(tc.cm) == base; got != tc.same {
			t.Errorf("%s: same digest %v, want %v", tc.name, got, tc.same)
		}
	}
	if ConfigMapDigest(cm(nil, nil)) == ConfigMapAbsent {
		t.Error("an empty ConfigMap must not read as a missing one")
	}
}

func TestConfigHash(t *testing.T) {
	one := ConfigHash(map[string]string{"a": "d1", "b": "d2"})
	if len(one) != 16 {
		t.Fatalf("want 16 hex digits, got %q", one)
	}
	for _, tc := range []struct {
		name    string
		digests map[string]string
		same    bool
	}{
		{"the same digests", map[string]string{"b": "d2", "a": "d1"}, true},
		{"one changed", map[string]string{"a": "d1", "b": "d3"}, false},
		{"one missing", map[string]string{"a": "d1", "b": ConfigMapAbsent}, false},
		{"digests swapped between ConfigMaps", map[string]string{"a": "d2", "b": "d1"}, false},
		{"one ConfigMap less", map[string]string{"a": "d1"}, false},
	} {
		if got := ConfigHash(tc.digests) == one; got != tc.same {
			t.Errorf("%s: same hash %v, want %v", tc.name, got, tc.same)
		}
	}
}

func TestWithConfigHashes(t *testing.T) {
	d, err := Deployment(newApp(nil), false)
	if err != nil {
		t.Fatal(err)
	}
	WithConfigHashes(d, ConfigHashes{})
	for _, a := range []string{AnnotationConfigHash, AnnotationSecretHash} {
		if _, ok := d.Spec.Template.Annotations[a]; ok {
			t.Fatalf("no hash must put no annotation %s: a MyApp that does not ask keeps its template", a)
		}
	}
	WithConfigHashes(d, ConfigHashes{Secrets: "fedcba9876543210"})
	if _, ok := d.Spec.Template.Annotations[AnnotationConfigHash]; ok {
		t.Fatal("a Secret hash alone puts no ConfigMap hash")
	}
	WithConfigHashes(d, ConfigHashes{ConfigMaps: "0123456789abcdef", Secrets: "fedcba9876543210"})
	if got := d.Spec.Template.Annotations[AnnotationConfigHash]; got != "0123456789abcdef" {
		t.Fatalf("got %q", got)
	}
	if got := d.Spec.Template.Annotations[AnnotationSecretHash]; got != "fedcba9876543210" {
		t.Fatalf("got %q", got)
	}
	if got := d.Annotations[AnnotationSecretHash]; got != "fedcba9876543210" {
		t.Fatalf("the Deployment itself carries %q: the spec's hash must survive a rollback of the template", got)
	}
	WithConfigHashes(nil, ConfigHashes{ConfigMaps: "x"}) // an intent that could not be built stays nil
}

// TestReferencedSecrets: every place a pod takes a Secret's values or files from, each name
// once and sorted, required unless every reference to it is optional; never imagePullSecrets.
func TestReferencedSecrets(t *testing.T) {
	app := newApp(nil)
	if err := json.Unmarshal([]byte(`{"image":"x","imagePullSecrets":[{"name":"pull"}],
		"env":[{"name":"A","valueFrom":{"secretKeyRef":{"name":"key","key":"k"}}}],
		"envFrom":[{"secretRef":{"name":"whole","optional":true}},{"secretRef":{"name":"twice","optional":true}}],
		"volumes":[{"name":"v","secret":{"secretName":"vol","optional":true}},{"name":"w","secret":{"secretName":"twice"}},
			{"name":"p","projected":{"sources":[{"secret":{"name":"proj"}},{"configMap":{"name":"cm"}}]}}]}`), &app.Spec); err != nil {
		t.Fatal(err)
	}
	if got, want := ReferencedSecrets(app), []string{"key", "proj", "twice", "vol", "whole"}; !slices.Equal(got, want) {
		t.Fatalf("ReferencedSecrets = %v, want %v", got, want)
	}
	want := map[string]bool{"key": true, "proj": true, "twice": true}
	if got := RequiredSecrets(app); !maps.Equal(got, want) {
		t.Fatalf("RequiredSecrets = %v, want %v", got, want)
	}
	a := SecretHash(map[string]string{"key": SecretVersion("u1", "5"), "vol": SecretAbsent})
	if a != SecretHash(map[string]string{"vol": SecretAbsent, "key": SecretVersion("u1", "5")}) {
		t.Fatal("the hash depends on the order of the Secrets")
	}
	for _, other := range []map[string]string{
		{"key": SecretVersion("u1", "6"), "vol": SecretAbsent},
		{"key": SecretVersion("u2", "5"), "vol": SecretAbsent},
		{"key": SecretVersion("u1", "5")},
		{"key": SecretVersion("u1", "5"), "vol": SecretVersion("u3", "1")},
	} {
		if SecretHash(other) == a {
			t.Fatalf("%v hashes as %v", other, a)
		}
	}
}
