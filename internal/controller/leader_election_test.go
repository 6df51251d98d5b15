package controller

import "testing"

func TestLeaseNamespace(t *testing.T) {
	cases := map[string]struct {
		flag, pod, want string
	}{
		"the flag wins":                  {flag: "elections", pod: "operators", want: "elections"},
		"the pod's namespace by default": {pod: "operators", want: "operators"},
		"neither: controller-runtime's":  {want: ""},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Setenv(PodNamespaceEnv, tc.pod)
			if got := LeaseNamespace(tc.flag); got != tc.want {
				t.Errorf("LeaseNamespace(%q) with %s=%q = %q, want %q", tc.flag, PodNamespaceEnv, tc.pod, got, tc.want)
			}
		})
	}
}
