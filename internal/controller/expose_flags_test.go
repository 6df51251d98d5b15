package controller

import (
	"testing"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

// TestParseGateway: the --expose-gateway flag takes namespace/name or namespace/name/listener,
// and refuses at start what no Gateway could be named, rather than failing every MyApp later.
func TestParseGateway(t *testing.T) {
	good := map[string]*examplev1.GatewayReference{
		"":                   nil,
		"infra/public":       {Namespace: "infra", Name: "public"},
		"infra/public/https": {Namespace: "infra", Name: "public", SectionName: "https"},
		"a/b.c/d.e":          {Namespace: "a", Name: "b.c", SectionName: "d.e"},
	}
	for value, want := range good {
		got, err := ParseGateway(value)
		if err != nil || (got == nil) != (want == nil) || (got != nil && *got != *want) {
			t.Errorf("ParseGateway(%q) = %+v, %v; want %+v", value, got, err, want)
		}
	}
	for _, value := range []string{"public", "infra/", "/public", "a.b/public", "infra/Public", "infra/public/", "infra/public/https/x", "infra/public/Https"} {
		if got, err := ParseGateway(value); err == nil {
			t.Errorf("ParseGateway(%q) = %+v, want an error", value, got)
		}
	}
	if _, err := ParseIngressClass("Nginx"); err == nil {
		t.Error("ParseIngressClass accepts an invalid class name")
	}
	if got, err := ParseIngressClass("nginx.example.com"); err != nil || got != "nginx.example.com" {
		t.Errorf("ParseIngressClass refuses a valid class name: %q, %v", got, err)
	}
}
