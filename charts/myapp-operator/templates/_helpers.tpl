{{/*
The chart's name: nameOverride, or the chart's.
*/}}
{{- define "myapp-operator.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
The prefix of every object's name, as helm create writes it: fullnameOverride, or the release's
name when it contains the chart's, or both. Release myapp-operator gives the names of
config/default (myapp-operator-controller-manager, ...). Object names add up to 35 characters
to it, and a Service's name may have 63: keep it to 28 (the templates refuse more).
*/}}
{{- define "myapp-operator.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/*
The chart's name and version, for the helm.sh/chart label.
*/}}
{{- define "myapp-operator.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
The labels of every object.
*/}}
{{- define "myapp-operator.labels" -}}
helm.sh/chart: {{ include "myapp-operator.chart" . }}
{{ include "myapp-operator.selectorLabels" . }}
{{- if .Chart.AppVersion }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- end }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/*
The labels selectors match (the manager's pods, its metrics Service): they never change over
a release's life, since a Deployment's selector cannot.
*/}}
{{- define "myapp-operator.selectorLabels" -}}
app.kubernetes.io/name: {{ include "myapp-operator.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}
