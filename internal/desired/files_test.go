package desired

import (
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/util/validation"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

func withFiles(files ...examplev1.File) func(*examplev1.MyApp) {
	return func(a *examplev1.MyApp) { a.Spec.Files = files }
}

func TestFilesConfigMap(t *testing.T) {
	g := NewWithT(t)
	g.Expect(FilesOf(newApp(nil))).To(BeNil(), "no files, no ConfigMap")

	app := newApp(withFiles(
		examplev1.File{Path: "/etc/app/config.yaml", Content: "level: info\n", Mode: ptr(int32(0o440))},
		examplev1.File{Path: "/srv/index.html", Content: "<p>hi</p>"},
	))
	files, err := FilesOf(app)
	g.Expect(err).NotTo(HaveOccurred())
	cm := files.ConfigMap
	g.Expect(files.Hash).To(MatchRegexp(`^[0-9a-f]{16}$`))
	g.Expect(*cm.Name).To(Equal("web-files-" + files.Hash))
	g.Expect(*cm.Namespace).To(Equal("shop"))
	g.Expect(*cm.Immutable).To(BeTrue(), "named by its content, it never changes")
	g.Expect(cm.Labels).To(HaveKeyWithValue(LabelFiles, files.Hash))
	g.Expect(cm.Labels).To(HaveKeyWithValue(LabelManagedBy, ManagedBy), "the manager's cache keeps only labelled children")
	g.Expect(cm.OwnerReferences).To(HaveLen(1))
	g.Expect(*cm.OwnerReferences[0].Controller).To(BeTrue())
	g.Expect(cm.Data).To(Equal(map[string]string{"etc_app_config.yaml": "level: info\n", "srv_index.html": "<p>hi</p>"}))

	pod, err := PodTemplate(app)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(pod.Labels).To(HaveKeyWithValue(LabelFiles, files.Hash), "the ReplicaSets carry the hash of the files they mount")
	g.Expect(pod.Spec.Volumes).To(HaveLen(1))
	vol := pod.Spec.Volumes[0]
	g.Expect(*vol.Name).To(Equal(examplev1.FilesVolumeName))
	g.Expect(*vol.ConfigMap.Name).To(Equal(*cm.Name))
	g.Expect(vol.ConfigMap.Items).To(HaveLen(2))
	g.Expect(*vol.ConfigMap.Items[0].Key).To(Equal("etc_app_config.yaml"))
	g.Expect(*vol.ConfigMap.Items[0].Mode).To(Equal(int32(0o440)))
	g.Expect(vol.ConfigMap.Items[1].Mode).To(BeNil(), "left out, Kubernetes' default")
	mounts := pod.Spec.Containers[0].VolumeMounts
	g.Expect(mounts).To(HaveLen(2))
	g.Expect(*mounts[0].MountPath).To(Equal("/etc/app/config.yaml"))
	g.Expect(*mounts[0].SubPath).To(Equal("etc_app_config.yaml"))
	g.Expect(*mounts[0].ReadOnly).To(BeTrue())
}

func TestFilesHash(t *testing.T) {
	one := examplev1.File{Path: "/etc/a", Content: "a"}
	two := examplev1.File{Path: "/etc/b", Content: "b"}
	hash := func(files ...examplev1.File) string {
		f, err := FilesOf(newApp(withFiles(files...)))
		if err != nil {
			t.Fatal(err)
		}
		return f.Hash
	}
	cases := map[string]struct {
		a, b []examplev1.File
		same bool
	}{
		"the order of the files changes nothing":            {[]examplev1.File{one, two}, []examplev1.File{two, one}, true},
		"a mode is the pod template's, not the ConfigMap's": {[]examplev1.File{one}, []examplev1.File{{Path: "/etc/a", Content: "a", Mode: ptr(int32(0o400))}}, true},
		"new content, new ConfigMap":                        {[]examplev1.File{one}, []examplev1.File{{Path: "/etc/a", Content: "A"}}, false},
		"a moved file, new ConfigMap":                       {[]examplev1.File{one}, []examplev1.File{{Path: "/etc/c", Content: "a"}}, false},
		"content does not bleed into the next key":          {[]examplev1.File{{Path: "/a", Content: "xb"}, {Path: "/c", Content: ""}}, []examplev1.File{{Path: "/a", Content: "x"}, {Path: "/c", Content: "b"}}, false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := hash(tc.a...) == hash(tc.b...); got != tc.same {
				t.Fatalf("same hash: %v, want %v", got, tc.same)
			}
		})
	}

	g := NewWithT(t)
	a, err := PodTemplate(newApp(withFiles(one, two)))
	g.Expect(err).NotTo(HaveOccurred())
	b, err := PodTemplate(newApp(withFiles(two, one)))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(b).To(Equal(a), "reordering spec.files rolls nothing out")
}

func TestFileKeys(t *testing.T) {
	cases := map[string]struct {
		paths []string
		want  []string
	}{
		"the path, '/' as '_'":                     {[]string{"/etc/app/config.yaml"}, []string{"etc_app_config.yaml"}},
		"other characters as '_'":                  {[]string{"/srv/a b+c"}, []string{"srv_a_b_c"}},
		"two paths of one key, told apart":         {[]string{"/x/y", "/x_y"}, []string{"x_y", "x_y-1"}},
		"a suffix that another file took":          {[]string{"/x/y", "/x_y-1", "/x_y"}, []string{"x_y", "x_y-1", "x_y-2"}},
		"a leading '..', which keys must not have": {[]string{"/..hidden", "/...", "/.env"}, []string{"_.hidden", "_..", ".env"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			files := make([]examplev1.File, len(tc.paths))
			for i, p := range tc.paths {
				files[i] = examplev1.File{Path: p}
			}
			if got := fileKeys(files); strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Fatalf("keys %q, want %q", got, tc.want)
			}
		})
	}
}

// FuzzFileKeys: whatever the paths, each file gets a key Kubernetes accepts in a ConfigMap,
// and no two files the same.
func FuzzFileKeys(f *testing.F) {
	f.Add("/etc/app/config.yaml", "/etc/app_config.yaml", "/..")
	f.Add("/x/y", "/x_y-1", "/x_y")
	f.Add("/"+strings.Repeat("é", 200), "/"+strings.Repeat("a", 300), "/.")
	f.Fuzz(func(t *testing.T, a, b, c string) {
		files := []examplev1.File{{Path: a}, {Path: b}, {Path: c}}
		keys := fileKeys(files)
		seen := map[string]bool{}
		for i, k := range keys {
			if errs := validation.IsConfigMapKey(k); len(errs) > 0 {
				t.Fatalf("path %q: key %q is refused: %v", files[i].Path, k, errs)
			}
			if seen[k] {
				t.Fatalf("two files share the key %q: %q", k, keys)
			}
			seen[k] = true
		}
	})
}
