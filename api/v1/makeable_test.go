package v1_test

import (
	"context"
	"encoding/json"
	"maps"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	examplev1 "github.com/example/myapp-operator/api/v1"
	"github.com/example/myapp-operator/internal/ssa"
	"github.com/example/myapp-operator/internal/testutil"
)

// TestAcceptedMyAppsMakeAcceptedChildren: every valid edge case of the API, as the API
// server stores it, builds into children that the API server accepts too, checked with a
// server-side dry run of each child (nothing is stored). A MyApp that admission accepts and
// whose children Kubernetes refuses would be accepted and fail later. A pod of the
// Deployment is dry-run too: the pods must be accepted, not only their template.
func TestAcceptedMyAppsMakeAcceptedChildren(t *testing.T) {
	ctx := context.Background()
	for _, tc := range testutil.ValidMyApps {
		t.Run(tc.Name, func(t *testing.T) {
			app := &examplev1.MyApp{}
			app.Namespace, app.Name, app.UID = "default", "child-"+tc.Name, types.UID("00000000-0000-0000-0000-000000000001")
			if err := json.Unmarshal([]byte(tc.Spec), &app.Spec); err != nil {
				t.Fatal(err)
			}
			if len(app.Name) > 63 {
				app.Name = app.Name[:63]
			}
			// As stored: admission accepts it, and the API server fills in the CRD's defaults.
			stored := app.DeepCopy()
			if err := k8s.Create(ctx, stored, client.DryRunAll); err != nil {
				t.Fatalf("the MyApp itself is refused: %v", err)
			}
			stored.UID = app.UID

			children, err := testutil.Children(stored, false)
			if err != nil {
				t.Fatalf("the builders refuse an accepted MyApp: %v", err)
			}
			for _, c := range children {
				if err := dryRunApply(ctx, c.Config, c.Object); err != nil {
					t.Errorf("the API server refuses the %T built from it: %v", c.Object, err)
				} else if d, ok := c.Object.(*appsv1.Deployment); ok {
					if err := dryRunPod(ctx, d); err != nil {
						t.Errorf("the API server refuses a pod of the Deployment built from it: %v", err)
					}
				}
			}
		})
	}
}

// dryRunApply server-side applies cfg as the operator would, with dryRun=All.
func dryRunApply(ctx context.Context, cfg runtime.ApplyConfiguration, obj client.Object) error {
	body, err := json.Marshal(cfg)
	if err != nil {
		return err
	}
	obj.SetNamespace(ssa.NamespaceOf(cfg))
	obj.SetName(ssa.NameOf(cfg))
	return k8s.Patch(ctx, obj, client.RawPatch(types.ApplyPatchType, body), client.FieldOwner("myapp-operator"),
		client.ForceOwnership, client.DryRunAll)
}

// dryRunPod creates, as a dry run, a pod of the Deployment's template as its ReplicaSet
// would: with a pod-template-hash label. The API server checks a pod more strictly than a
// template: it first adds to the pod's affinity and spread selectors an expression for each
// key of matchLabelKeys the pod carries.
func dryRunPod(ctx context.Context, d *appsv1.Deployment) error {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: d.Namespace, Name: "pod-5d4f8c7b9-x2x7q",
			Labels: map[string]string{"pod-template-hash": "5d4f8c7b9"}, Annotations: d.Spec.Template.Annotations},
		Spec: *d.Spec.Template.Spec.DeepCopy(),
	}
	maps.Copy(pod.Labels, d.Spec.Template.Labels)
	return k8s.Create(ctx, pod, client.DryRunAll)
}
