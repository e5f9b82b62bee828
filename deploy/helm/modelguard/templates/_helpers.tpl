{{/* The seven services, in the order of the pipeline. */}}
{{- define "modelguard.services" -}}
ledger detector context diagnoser repairer validator publisher
{{- end -}}

{{/* The services that run a pull request's code: through the workspace runner, or as Jobs in the model's image. */}}
{{- define "modelguard.runnerCallers" -}}
detector diagnoser validator
{{- end -}}

{{- define "modelguard.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag }}
{{- end -}}

{{- define "modelguard.labels" -}}
app.kubernetes.io/part-of: modelguard
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ .Chart.Name }}-{{ .Chart.Version }}
{{- end -}}

{{/* True (non-empty) when the services share their state in PostgreSQL, so they may run several replicas. */}}
{{- define "modelguard.sharedState" -}}
{{- if has .Values.state.mode (list "ledger" "secret") }}true{{ end -}}
{{- end -}}

{{/* The runner's address, as the diagnoser, validator and detector reach it. */}}
{{- define "modelguard.runnerUrl" -}}
http://modelguard-runner.{{ .Values.runner.namespace }}.svc:8090
{{- end -}}

{{- define "modelguard.podSecurityContext" -}}
runAsNonRoot: true
runAsUser: 10001
runAsGroup: 10001
fsGroup: 10001
seccompProfile: {type: RuntimeDefault}
{{- end -}}

{{- define "modelguard.containerSecurityContext" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
capabilities: {drop: [ALL]}
{{- end -}}

{{/* TLS is spoken with SSL and SASL_SSL; SASL with SASL_PLAINTEXT and SASL_SSL. Refuse what cannot work. */}}
{{- define "modelguard.checkKafka" -}}
{{- $name := index . 0 -}}
{{- $k := index . 1 -}}
{{- $protocols := list "PLAINTEXT" "SSL" "SASL_PLAINTEXT" "SASL_SSL" -}}
{{- if not (has $k.securityProtocol $protocols) -}}
{{- fail (printf "%s.securityProtocol must be one of PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL, got %q" $name $k.securityProtocol) -}}
{{- end -}}
{{- $sasl := hasPrefix "SASL_" $k.securityProtocol -}}
{{- $tls := has $k.securityProtocol (list "SSL" "SASL_SSL") -}}
{{- if $sasl -}}
{{- if not (has $k.sasl.mechanism (list "PLAIN" "SCRAM-SHA-256" "SCRAM-SHA-512")) -}}
{{- fail (printf "%s.sasl.mechanism must be PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512 with %s" $name $k.securityProtocol) -}}
{{- end -}}
{{- if not $k.sasl.username -}}{{- fail (printf "%s.sasl.username is required with %s" $name $k.securityProtocol) -}}{{- end -}}
{{- if not $k.secretName -}}{{- fail (printf "%s.secretName (the Secret with the SASL password) is required with %s" $name $k.securityProtocol) -}}{{- end -}}
{{- else if or $k.sasl.mechanism $k.sasl.username -}}
{{- fail (printf "%s.sasl is set but %s.securityProtocol is %s; SASL needs SASL_PLAINTEXT or SASL_SSL" $name $name $k.securityProtocol) -}}
{{- end -}}
{{- if and (or $k.tls.ca $k.tls.clientCertificate) (not $tls) -}}
{{- fail (printf "%s.tls is set but %s.securityProtocol is %s; TLS needs SSL or SASL_SSL" $name $name $k.securityProtocol) -}}
{{- end -}}
{{- if and (or $k.tls.ca $k.tls.clientCertificate) (not $k.secretName) -}}
{{- fail (printf "%s.secretName (the Secret with the CA or client certificate) is required with %s.tls" $name $name) -}}
{{- end -}}
{{- end -}}

{{/* The env entries and the mount of one Kafka connection's Secret: (list prefix connection mountPath). */}}
{{- define "modelguard.kafkaSecretEnv" -}}
{{- $prefix := index . 0 -}}
{{- $k := index . 1 -}}
{{- $path := index . 2 -}}
{{- if hasPrefix "SASL_" $k.securityProtocol }}
- {name: {{ $prefix }}SASL_PASSWORD_FILE, value: {{ $path }}/{{ $k.passwordKey }}}
{{- end }}
{{- if $k.tls.ca }}
- {name: {{ $prefix }}SSL_CA_FILE, value: {{ $path }}/{{ $k.tls.caKey }}}
{{- end }}
{{- if $k.tls.clientCertificate }}
- {name: {{ $prefix }}SSL_CERT_FILE, value: {{ $path }}/{{ $k.tls.certificateKey }}}
- {name: {{ $prefix }}SSL_KEY_FILE, value: {{ $path }}/{{ $k.tls.privateKeyKey }}}
{{- end }}
{{- end -}}

{{/* The S3 credentials as files, for the services that read artifacts. */}}
{{- define "modelguard.s3Env" -}}
{{- if and .Values.artifacts.url .Values.artifacts.credentialsSecret }}
- {name: AWS_ACCESS_KEY_ID_FILE, value: /etc/modelguard/s3/{{ .Values.artifacts.accessKeyIdKey }}}
- {name: AWS_SECRET_ACCESS_KEY_FILE, value: /etc/modelguard/s3/{{ .Values.artifacts.secretAccessKeyKey }}}
{{- end }}
{{- end -}}

{{/* The checksum of what the pods read at start, so a changed ConfigMap rolls them (helm upgrade). */}}
{{- define "modelguard.configChecksum" -}}
{{ include (print $.Template.BasePath "/config.yaml") . | sha256sum }}
{{- end -}}

{{/* The ConfigMap the services read the platform's central policy from (its key central.yaml): the chart's own
modelguard-central-policy when centralPolicy gives the text, the one centralPolicyConfigMap names when another tool
keeps it; empty when neither (the image's own policy/central.yaml). Both at once is refused. */}}
{{- define "modelguard.centralPolicyConfigMap" -}}
{{- if and .Values.centralPolicy .Values.centralPolicyConfigMap }}
{{- fail "give the central policy one way: centralPolicy (its text, rendered by the chart) or centralPolicyConfigMap (the name of a ConfigMap another tool keeps), not both" }}
{{- end }}
{{- if .Values.centralPolicy }}modelguard-central-policy{{ else }}{{ .Values.centralPolicyConfigMap }}{{ end }}
{{- end -}}
