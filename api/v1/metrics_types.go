package v1

// AppMetrics asks for the app's own metrics to be scraped: a PodMonitor named after the MyApp,
// where the cluster serves the Prometheus Operator's monitoring.coreos.com/v1 PodMonitors,
// that tells the Prometheus Operator to scrape every pod of the app at the port and path.
type AppMetrics struct {
	// PortName is the port the app serves its metrics on: http (the MyApp's port, the
	// default) or the name of a TCP port in spec.ports.
	// +kubebuilder:validation:MaxLength=15
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Port name",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:text"}
	PortName string `json:"portName,omitempty"`

	// Path is the HTTP path of the metrics, /metrics when unset: a path, without a query or
	// a fragment.
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:Pattern=`^/[^?#\s]*$`
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Path",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:text"}
	Path string `json:"path,omitempty"`

	// Interval is how often Prometheus scrapes the app, as a Prometheus duration such as 30s
	// or 1m; unset, the Prometheus' own scrape interval. Each unit takes a bounded number of
	// digits, so that the sum fits Prometheus' durations: one that overflows would stop the
	// Prometheus from loading its configuration, for every app it scrapes.
	// +kubebuilder:validation:MaxLength=16
	// +kubebuilder:validation:Pattern=`^([0-9]{1,4}h)?([0-9]{1,6}m)?([0-9]{1,6}s)?([0-9]{1,9}ms)?$`
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Interval",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:text"}
	Interval string `json:"interval,omitempty"`
}
