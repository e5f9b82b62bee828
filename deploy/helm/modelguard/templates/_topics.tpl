{{/* Each topic's Kafka config, as a dict of topic name to {config name: string}: retention from topics.*, the
dead-letter topic bounded in time and size. The topic names come from files/contract-topics.yaml, which
`python -m contracts.schema_export` generates from contracts/registry.py. */}}
{{- define "modelguard.topicConfigs" -}}
{{- $t := .Values.topics -}}
{{- $contract := .Files.Get "files/contract-topics.yaml" | fromYaml -}}
{{- $out := dict -}}
{{- range $name, $_ := $t.overrides -}}
{{- if not (has $name $contract.topics) -}}
{{- fail (printf "topics.overrides names %s, which is not one of ModelGuard's topics (%s)" $name (join ", " $contract.topics)) -}}
{{- end -}}
{{- end -}}
{{- range $topic := $contract.topics -}}
{{- $override := index $t.overrides $topic | default dict -}}
{{- $deadLetter := eq $topic $contract.deadLetter -}}
{{- $hours := int (ternary $t.deadLetter.retentionHours $t.retentionHours $deadLetter) -}}
{{- $bytes := int (ternary $t.deadLetter.retentionBytes -1 $deadLetter) -}}
{{- if hasKey $override "retentionHours" }}{{ $hours = int $override.retentionHours }}{{ end -}}
{{- if hasKey $override "retentionBytes" }}{{ $bytes = int $override.retentionBytes }}{{ end -}}
{{- if and $deadLetter (or (le $hours 0) (le $bytes 0)) -}}
{{- fail (printf "the dead-letter topic %s must be bounded: retentionHours and retentionBytes above 0 (got %d and %d)" $topic $hours $bytes) -}}
{{- end -}}
{{- if or (eq $hours 0) (lt $hours -1) -}}
{{- fail (printf "%s: retentionHours must be a number of hours, or -1 for forever (got %d)" $topic $hours) -}}
{{- end -}}
{{- $config := dict "retention.ms" (ternary "-1" (toString (mul $hours 3600000)) (eq $hours -1)) "min.insync.replicas" (toString $t.minInsyncReplicas) -}}
{{- if gt $bytes 0 }}{{ $_ := set $config "retention.bytes" (toString $bytes) }}{{ end -}}
{{- $_ := set $out $topic $config -}}
{{- end -}}
{{- toJson $out -}}
{{- end -}}
