{{/*
Names, labels and the pieces every service's objects share.
*/}}

{{/* The prefix of every object's name: the release name unless fullnameOverride is set. */}}
{{- define "okey.fullname" -}}
{{- default .Release.Name .Values.fullnameOverride | trunc 40 | trimSuffix "-" -}}
{{- end -}}

{{/* One service's object name: <fullname>-<service>. Call with (dict "root" $ "name" $name). */}}
{{- define "okey.serviceName" -}}
{{- printf "%s-%s" (include "okey.fullname" .root) .name -}}
{{- end -}}

{{/* The labels that select one component's pods. */}}
{{- define "okey.selectorLabels" -}}
app.kubernetes.io/name: okey
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .name }}
{{- end -}}

{{/* Every object's labels. */}}
{{- define "okey.labels" -}}
{{ include "okey.selectorLabels" . }}
app.kubernetes.io/part-of: okey
app.kubernetes.io/version: {{ .root.Values.image.tag | default .root.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .root.Chart.Name .root.Chart.Version | replace "+" "_" }}
{{- end -}}

{{/* A service's image: <registry>/<repository>/<service>:<tag>, or @<digest> when one is set. */}}
{{- define "okey.image" -}}
{{- $image := .root.Values.image -}}
{{- $repo := printf "%s/%s" $image.repository .name -}}
{{- if $image.registry }}{{ $repo = printf "%s/%s" $image.registry $repo }}{{ end -}}
{{- $digest := get ($image.digests | default dict) .name -}}
{{- if $digest -}}
{{- printf "%s@%s" $repo $digest -}}
{{- else -}}
{{- printf "%s:%s" $repo ($image.tag | default .root.Chart.AppVersion) -}}
{{- end -}}
{{- end -}}

{{/* The OTLP endpoint the services send to: the value set, else the chart's collector if on. */}}
{{- define "okey.otlpEndpoint" -}}
{{- $set := .Values.config.telemetry.otlp_endpoint | default "" -}}
{{- if $set -}}
{{- $set -}}
{{- else if .Values.metrics.collector.enabled -}}
{{- printf "http://%s:4317" (include "okey.serviceName" (dict "root" . "name" "otel-collector")) -}}
{{- end -}}
{{- end -}}

{{/*
One service's settings, merged: config, then services.<name>.config over it, plus what the chart
sets itself (server.port from services.<name>.port, telemetry.otlp_endpoint when the collector is
on). A dict of section -> key -> value; a null value is left out, so the service's built-in
default applies.
*/}}
{{- define "okey.settings" -}}
{{- $svc := get .root.Values.services .name -}}
{{- /* Key by key, not mergeOverwrite: that would not let a false or a 0 override. */ -}}
{{- $settings := deepCopy .root.Values.config -}}
{{- range $section, $keys := ($svc.config | default dict) }}
{{- $target := get $settings $section | default dict }}
{{- range $key, $value := $keys }}{{ $_ := set $target $key $value }}{{ end }}
{{- $_ := set $settings $section $target }}
{{- end }}
{{- $server := get $settings "server" | default dict -}}
{{- $_ := set $server "port" $svc.port -}}
{{- $_ := set $settings "server" $server -}}
{{- $telemetry := get $settings "telemetry" | default dict -}}
{{- $_ := set $telemetry "otlp_endpoint" (include "okey.otlpEndpoint" .root) -}}
{{- $_ := set $settings "telemetry" $telemetry -}}
{{- toYaml $settings -}}
{{- end -}}

{{/*
One service's settings as OKEY_<SECTION>__<KEY> variables (the ConfigMap's data). Values are
rendered with tpl, so they may name the release ({{ include "okey.fullname" . }}). Numbers are
written as integers (Helm reads YAML numbers as floats, which would print 2592000 as 2.592e+06).
*/}}
{{- define "okey.settingsEnv" -}}
{{- $settings := include "okey.settings" . | fromYaml -}}
{{- range $section, $keys := $settings }}
{{- range $key, $value := $keys }}
{{- if not (kindIs "invalid" $value) }}
{{- $text := "" }}
{{- if or (kindIs "float64" $value) (kindIs "int64" $value) (kindIs "int" $value) }}
{{- $text = $value | int64 | toString }}
{{- else }}
{{- $text = tpl (toString $value) $.root }}
{{- end }}
{{ printf "OKEY_%s__%s" (upper $section) (upper $key) }}: {{ $text | quote }}
{{- end }}
{{- end }}
{{- end }}
{{- end -}}

{{/*
One service's secret settings: the global secrets, then services.<name>.secrets over them, each
section -> key -> {name, key} of a Secret the operator created. NATS and Redis (their URLs,
credentials) are left out for a service that does not use them (services.<name>.nats / .redis).
*/}}
{{- define "okey.secretRefs" -}}
{{- $svc := get .root.Values.services .name -}}
{{- $refs := mergeOverwrite (deepCopy .root.Values.secrets) (deepCopy ($svc.secrets | default dict)) -}}
{{- range $dependency := list "nats" "redis" }}
{{- if not (get $svc $dependency) }}{{ $_ := unset $refs $dependency }}{{ end }}
{{- end -}}
{{- toYaml $refs -}}
{{- end -}}

{{/*
One service's extras, YAML {env, volumes, volumeMounts}: extraEnv, extraVolumes and
extraVolumeMounts, then services.<name>'s own after them; an entry of the service's replaces the
global one with the same name (a mount: the same mountPath). Refuses, naming the value to mend:
two entries with the same name (mountPath) in one list (the API server takes a variable twice,
the last silently winning, and fails the upgrade on a volume or mount twice), a mount of a volume
the pod does not have, and an extraEnv variable the chart gives from a Secret (`secrets` is where
that setting goes).
*/}}
{{- define "okey.extras" -}}
{{- $svc := get .root.Values.services .name -}}
{{- $out := dict -}}
{{- $fields := list
  (list "env" "extraEnv" "name" .root.Values.extraEnv $svc.extraEnv)
  (list "volumes" "extraVolumes" "name" .root.Values.extraVolumes $svc.extraVolumes)
  (list "volumeMounts" "extraVolumeMounts" "mountPath" .root.Values.extraVolumeMounts $svc.extraVolumeMounts) -}}
{{- range $fields }}
{{- $field := index . 1 }}
{{- $key := index . 2 }}
{{- $global := index . 3 | default list }}
{{- $own := index . 4 | default list }}
{{- $ownKeys := list }}
{{- range $own }}
{{- if has (get . $key) $ownKeys }}
{{- fail (printf "services.%s.%s: two entries with %s %s" $.name $field $key (get . $key)) }}
{{- end }}
{{- $ownKeys = append $ownKeys (get . $key) }}
{{- end }}
{{- $globalKeys := list }}
{{- $merged := list }}
{{- range $global }}
{{- if has (get . $key) $globalKeys }}
{{- fail (printf "%s: two entries with %s %s" $field $key (get . $key)) }}
{{- end }}
{{- $globalKeys = append $globalKeys (get . $key) }}
{{- if not (has (get . $key) $ownKeys) }}{{ $merged = append $merged . }}{{ end }}
{{- end }}
{{- $_ := set $out (index . 0) (concat $merged $own) }}
{{- end }}
{{- $volumes := list }}
{{- range $out.volumes }}{{ $volumes = append $volumes .name }}{{ end }}
{{- range $out.volumeMounts }}
{{- if not (has .name $volumes) }}
{{- fail (printf "services.%s: a volume mount at %s names volume %s, which neither extraVolumes nor services.%s.extraVolumes has" $.name .mountPath .name $.name) }}
{{- end }}
{{- end }}
{{- range $section, $keys := include "okey.secretRefs" . | fromYaml }}
{{- range $key, $ref := $keys }}
{{- $var := printf "OKEY_%s__%s" (upper $section) (upper $key) }}
{{- range $out.env }}
{{- if eq .name $var }}
{{- fail (printf "services.%s: extraEnv sets %s, which the chart gives from Secret %s (secrets.%s.%s or services.%s.secrets.%s.%s is where it goes)" $.name $var $ref.name $section $key $.name $section $key) }}
{{- end }}
{{- end }}
{{- end }}
{{- end -}}
{{- toYaml $out -}}
{{- end -}}

{{/* The services that call this one (the inverse of services.<name>.calls). */}}
{{- define "okey.callers" -}}
{{- $callers := list -}}
{{- range $caller, $svc := .root.Values.services }}
{{- if has $.name ($svc.calls | default list) }}{{ $callers = append $callers $caller }}{{ end }}
{{- end -}}
{{- toJson $callers -}}
{{- end -}}

{{/*
Where a pod of the release may run and how its images are pulled (imagePullSecrets,
priorityClassName, nodeSelector, tolerations, affinity): the services', the collector's and the
`helm test` pod's alike. Pod spec fields, to be indented where they are included.
*/}}
{{- define "okey.podPlacement" -}}
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.priorityClassName }}
priorityClassName: {{ . }}
{{- end }}
{{- with .Values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}
