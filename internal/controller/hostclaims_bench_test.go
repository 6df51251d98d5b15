package controller

import (
	"fmt"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

// BenchmarkMyAppsMeeting is what a reconcile of an exposed MyApp spends finding the MyApps
// whose hosts meet its own, among n cached MyApps of two hosts each: the copy of the cached
// MyApps into a list that a List without deep copies makes (each MyApp's struct, not what it
// points to), and the walk over them.
func BenchmarkMyAppsMeeting(b *testing.B) {
	for _, shared := range []bool{false, true} {
		for _, n := range []int{100, 1000, 10000} {
			cached := make([]examplev1.MyApp, n)
			for i := range cached {
				second := examplev1.Hostname(fmt.Sprintf("api-%d.team-%d.example.org", i, i%50))
				if shared {
					second = "*.shared.example.org"
				}
				cached[i] = examplev1.MyApp{
					ObjectMeta: metav1.ObjectMeta{Namespace: fmt.Sprintf("team-%d", i%50), Name: fmt.Sprintf("app-%d", i)},
					Spec: examplev1.MyAppSpec{Image: "nginx", Expose: &examplev1.Expose{Hosts: []examplev1.Hostname{
						examplev1.Hostname(fmt.Sprintf("app-%d.team-%d.example.com", i, i%50)), second}}},
				}
			}
			self := types.NamespacedName{Namespace: "team-0", Name: "app-0"}
			hosts := cached[0].Spec.Expose.Hosts
			want := 0 // distinct hosts: none meets
			if shared {
				want = n - 1 // every one asks for the same wildcard
			}
			b.Run(fmt.Sprintf("shared=%v/myapps=%d", shared, n), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					items := slices.Clone(cached)
					if len(meetingIn(items, self, hosts)) != want {
						b.Fatal("the walk found other MyApps than those whose hosts meet")
					}
				}
			})
		}
	}
}
