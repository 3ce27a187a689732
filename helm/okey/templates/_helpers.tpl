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

{{/*
The services' image tag as a string: image.tag, else the chart's appVersion. An all-digit commit
is a number: an integer from --set, a float from a values file (which toString alone would print
as 1.234567e+06); a number is written as an integer.
*/}}
{{- define "okey.imageTag" -}}
{{- $tag := .Values.image.tag -}}
{{- if or (kindIs "float64" $tag) (kindIs "int64" $tag) (kindIs "int" $tag) -}}
{{- $tag | int64 | toString -}}
{{- else -}}
{{- $tag | default .Chart.AppVersion | toString -}}
{{- end -}}
{{- end -}}

{{/*
A pod template's labels: they change only with what the pod runs. A label that changed with the
chart's own version (helm.sh/chart) would roll every pod on every chart release. version is the
image tag, or .version where the pod runs another image (the collector), cut to what a label
value may be: at most 63 characters, a letter or digit at both ends.
*/}}
{{- define "okey.podLabels" -}}
{{- $version := .version | default (include "okey.imageTag" .root) | toString | trunc 63 -}}
{{ include "okey.selectorLabels" . }}
app.kubernetes.io/part-of: okey
app.kubernetes.io/version: {{ regexReplaceAll "^[^A-Za-z0-9]+|[^A-Za-z0-9]+$" $version "" | quote }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
{{- end -}}

{{/* Every object's labels: a pod template's, and the chart's version. */}}
{{- define "okey.labels" -}}
{{ include "okey.podLabels" . }}
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
{{- printf "%s:%s" $repo (include "okey.imageTag" .root) -}}
{{- end -}}
{{- end -}}

{{/* The chart's collector as an OTLP endpoint, when it is on; else empty. */}}
{{- define "okey.collectorEndpoint" -}}
{{- if .Values.metrics.collector.enabled -}}
{{- printf "http://%s:4317" (include "okey.serviceName" (dict "root" . "name" "otel-collector")) -}}
{{- end -}}
{{- end -}}

{{/*
Every setting the services read, section -> keys (crates/okey-platform/src/settings.rs and
services/<name>/src/settings.rs; make chart keeps this list equal to them). A service refuses to
start on an OKEY_<SECTION>__<KEY> variable that names none of them.
*/}}
{{- define "okey.settingNames" -}}
server: [host, port, grace_period_ms, request_timeout_ms, max_concurrent_streams,
  startup_timeout_ms, probe_interval_ms, keepalive_interval_ms, keepalive_timeout_ms]
database: [url, max_connections, create_if_missing, commit_groups]
nats: [url, subject_prefix, events_max_age_secs]
redis: [url, key_prefix]
telemetry: [log_filter, log_format, otlp_endpoint]
auth: [issuer, audience, leeway_secs]
tokens: [public_keys, keys_url, keys_ca_pem, keys_refresh_secs, signing_keys_pem, access_ttl_secs,
  refresh_ttl_secs, service_clients, service_ttl_secs]
sign_in: [trusted_proxies, guests_per_address, guest_window_secs]
live: [sweep_interval_ms, reconcile_interval_ms, bot_pace_ms, connected_ms, gone_ms, chat_max_chars,
  chat_burst, chat_window_ms, chat_retention_secs, chat_sweep_interval_ms, max_cached_tables,
  max_streams_per_caller, stream_recheck_ms, idle_table_secs]
matchmaking: [table_url, scoring_url, rating_windows, bot_fill_after_secs, ticket_ttl_secs, tick_ms,
  claim_lease_secs, room_ttl_secs, join_attempts, room_password_attempts, join_window_secs]
rating: [provisional_uncertainty, leaderboard_min_matches]
service_client: [id, secret, accounts_url]
{{- end -}}

{{/*
Settings the chart computes or checks itself, setting -> the value that sets it. extraEnv or
`secrets` giving one would slip past the chart: the Service, probes and NetworkPolicy follow
server.port, terminationGracePeriodSeconds is checked against server.grace_period_ms, the startup
probe against server.startup_timeout_ms, and the OTLP egress follows telemetry.otlp_endpoint.
*/}}
{{- define "okey.chartManaged" -}}
server.port: services.<name>.port
server.grace_period_ms: config.server.grace_period_ms or services.<name>.config.server.grace_period_ms
server.startup_timeout_ms: config.server.startup_timeout_ms or services.<name>.config.server.startup_timeout_ms
telemetry.otlp_endpoint: config.telemetry.otlp_endpoint or services.<name>.config.telemetry.otlp_endpoint
{{- end -}}

{{/*
Settings whose value is or may hold a credential (a password in a URL, a private key, a client
secret): given only from a Secret, never as an extraEnv value. nats.url is a plain setting but
takes a NATS server's credentials.
*/}}
{{- define "okey.secretSettings" -}}
[database.url, redis.url, nats.url, tokens.signing_keys_pem, service_client.secret]
{{- end -}}

{{/*
One service's config, merged: config, then services.<name>.config over it, key by key (not
mergeOverwrite: that would not let a false or a 0 override). A dict of section -> key -> value.
*/}}
{{- define "okey.config" -}}
{{- $svc := get .root.Values.services .name -}}
{{- $settings := deepCopy .root.Values.config -}}
{{- range $section, $keys := ($svc.config | default dict) }}
{{- $target := get $settings $section | default dict }}
{{- range $key, $value := $keys }}{{ $_ := set $target $key $value }}{{ end }}
{{- $_ := set $settings $section $target }}
{{- end }}
{{- toYaml $settings -}}
{{- end -}}

{{/*
One service's settings: its merged config (okey.config) plus what the chart sets itself:
server.port from services.<name>.port, and telemetry.otlp_endpoint, when the merged value is
empty, the chart's collector if it is on. A dict of section -> key -> value; a null value is left
out, so the service's built-in default applies.
*/}}
{{- define "okey.settings" -}}
{{- $svc := get .root.Values.services .name -}}
{{- $settings := include "okey.config" . | fromYaml -}}
{{- $server := get $settings "server" | default dict -}}
{{- $_ := set $server "port" $svc.port -}}
{{- $_ := set $settings "server" $server -}}
{{- $telemetry := get $settings "telemetry" | default dict -}}
{{- $otlp := get $telemetry "otlp_endpoint" | default (include "okey.collectorEndpoint" .root) -}}
{{- $_ := set $telemetry "otlp_endpoint" $otlp -}}
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
Refuses a setting the chart sets or checks itself (okey.chartManaged), naming the value to set.
*/}}
{{- define "okey.secretRefs" -}}
{{- $svc := get .root.Values.services .name -}}
{{- $refs := mergeOverwrite (deepCopy .root.Values.secrets) (deepCopy ($svc.secrets | default dict)) -}}
{{- range $dependency := list "nats" "redis" }}
{{- if not (get $svc $dependency) }}{{ $_ := unset $refs $dependency }}{{ end }}
{{- end -}}
{{- $managed := include "okey.chartManaged" . | fromYaml -}}
{{- range $section, $keys := $refs }}
{{- range $key, $ref := $keys }}
{{- $where := get $managed (printf "%s.%s" $section $key) }}
{{- if $where }}
{{- fail (printf "services.%s: secrets.%s.%s (or services.%s.secrets.%s.%s) would give OKEY_%s__%s, which the chart sets or checks itself: set %s" $.name $section $key $.name $section $key (upper $section) (upper $key) (replace "<name>" $.name $where)) }}
{{- end }}
{{- end }}
{{- end -}}
{{- toYaml $refs -}}
{{- end -}}

{{/*
One service's extras, YAML {env, volumes, volumeMounts}: extraEnv, extraVolumes and
extraVolumeMounts, then services.<name>'s own after them; an entry of the service's replaces the
global one with the same name (a mount: the same mountPath). Refuses, naming the value to mend:
two entries with the same name (mountPath) in one list (the API server takes a variable twice,
the last silently winning, and fails the upgrade on a volume or mount twice), a mount of a volume
the pod does not have, and these extraEnv variables: one the chart gives from a Secret (`secrets`
is where that setting goes), one with a literal value for a setting that holds a credential
(okey.secretSettings: it would be in the Deployment in clear; valueFrom is taken), one the chart
sets or checks itself (okey.chartManaged), and an OKEY_<SECTION>__<KEY> that names no setting (the
service would refuse to start, again and again).
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
{{- end }}
{{- $names := include "okey.settingNames" . | fromYaml }}
{{- $managed := include "okey.chartManaged" . | fromYaml }}
{{- $secret := include "okey.secretSettings" . | fromYamlArray }}
{{- range $out.env }}
{{- /* As the services read a name: OKEY_, then section and key split at the first __. */}}
{{- $rest := trimPrefix "OKEY_" .name }}
{{- if and (hasPrefix "OKEY_" .name) (contains "__" $rest) }}
{{- $parts := splitn "__" 2 $rest }}
{{- $section := lower $parts._0 }}
{{- $key := lower $parts._1 }}
{{- $setting := printf "%s.%s" $section $key }}
{{- if not (has $key (get $names $section | default list)) }}
{{- fail (printf "services.%s: extraEnv sets %s, which names no setting (%s): a service refuses to start on an unknown setting" $.name .name $setting) }}
{{- end }}
{{- $where := get $managed $setting }}
{{- if $where }}
{{- fail (printf "services.%s: extraEnv sets %s, which the chart sets or checks itself: set %s" $.name .name (replace "<name>" $.name $where)) }}
{{- end }}
{{- if and (has $setting $secret) (hasKey . "value") }}
{{- fail (printf "services.%s: extraEnv gives %s a literal value, which would stand in the Deployment in clear: give it from a Secret (secrets.%s.%s, or valueFrom.secretKeyRef)" $.name .name $section $key) }}
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
