{{/* The values with the profile layer under them: the chart's and the user's values win wherever they are set (non-empty); profiles/<profile>.yaml fills what is left empty (sprig merge: destination first). */}}
{{- define "mf.values" -}}
{{- $file := printf "profiles/%s.yaml" .Values.profile -}}
{{- $profile := .Files.Get $file | fromYaml -}}
{{- if not $profile -}}
{{- fail (printf "profile %q has no %s: use kind, microk8s, eks or gke" .Values.profile $file) -}}
{{- end -}}
{{- merge (deepCopy .Values) (deepCopy $profile) | toYaml -}}
{{- end -}}

{{- define "mf.fullname" -}}
{{- if contains "model-fleet" .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-model-fleet" .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "mf.labels" -}}
app.kubernetes.io/name: model-fleet-operator
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/part-of: model-fleet
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "mf.selector" -}}
app.kubernetes.io/name: model-fleet-operator
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: operator
{{- end -}}

{{- define "mf.serviceAccount" -}}
{{- default (include "mf.fullname" .) .Values.serviceAccount.name -}}
{{- end -}}

{{- define "mf.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{- define "mf.gatewayNamespace" -}}
{{- default .Release.Namespace .Values.gateway.namespace -}}
{{- end -}}

{{/* The restricted pod security context every pod of the chart runs with. */}}
{{- define "mf.podSecurityContext" -}}
runAsNonRoot: true
runAsUser: 65532
runAsGroup: 65532
fsGroup: 65532
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{- define "mf.containerSecurityContext" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
runAsNonRoot: true
capabilities:
  drop: ["ALL"]
seccompProfile:
  type: RuntimeDefault
{{- end -}}
