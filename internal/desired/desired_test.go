package desired

import (
	"k8s.io/apimachinery/pkg/types"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

// newApp is a MyApp as the API server stores it after defaulting, changed by mutate.
func newApp(mutate func(*examplev1.MyApp)) *examplev1.MyApp {
	app := &examplev1.MyApp{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop", UID: types.UID("uid-1"), Generation: 1},
		Spec: examplev1.MyAppSpec{
			Replicas:    ptr(int32(2)),
			Image:       "nginx:1.27",
			Port:        ptr(int32(8080)),
			ServiceType: examplev1.ServiceTypeClusterIP,
		},
	}
	if mutate != nil {
		mutate(app)
	}
	return app
}

func ptr[T any](v T) *T { return &v }
