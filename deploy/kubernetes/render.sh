#!/bin/sh
# Renders the manifests of one sharded chokepoint run into a folder, ready for kubectl apply.
#
#   deploy/kubernetes/render.sh -n SHARDS -i IMAGE -s START_AT [-r RUN] [-c CPU] [-m MEMORY]
#       [-d DEADLINE_S] -o DIR -- (load|sweep) URL [FLAGS...]
#
# FLAGS are the whole run's (-c 400 is 400 clients in all, split over the shards). Writes
# DIR/volume.yaml, DIR/shards.yaml and DIR/merge.yaml. Needs only sh, awk and sed.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
usage() {
  echo "usage: $0 -n SHARDS -i IMAGE -s START_AT [-r RUN] [-c CPU] [-m MEMORY] [-d DEADLINE_S] -o DIR -- (load|sweep) URL [FLAGS...]" >&2
  exit 2
}
shards= image= start_at= run=chokepoint cpu=2 memory=1Gi deadline=3600 out=
while getopts n:i:s:r:c:m:d:o: opt; do
  case $opt in
    n) shards=$OPTARG ;; i) image=$OPTARG ;; s) start_at=$OPTARG ;; r) run=$OPTARG ;;
    c) cpu=$OPTARG ;; m) memory=$OPTARG ;; d) deadline=$OPTARG ;; o) out=$OPTARG ;;
    *) usage ;;
  esac
done
shift $((OPTIND - 1))
[ -n "$shards" ] && [ -n "$image" ] && [ -n "$start_at" ] && [ -n "$out" ] && [ $# -ge 2 ] || usage
case $shards in ''|*[!0-9]*|0) echo "$0: -n $shards: give a number of shards, 1 or more" >&2; exit 2 ;; esac
case $run in *[!a-z0-9-]*|-*|*-) echo "$0: -r $run: use lower-case letters, digits and inner dashes (a Kubernetes name)" >&2; exit 2 ;; esac
command=$1
case $command in
  load)
    output="            - --json
            - /results/shard-\$(JOB_COMPLETION_INDEX).json"
    suffix=.json
    merge_out= ;;
  sweep)
    output="            - --out
            - /results/shard-\$(JOB_COMPLETION_INDEX)"
    suffix=
    merge_out="            - --out
            - /results/merged" ;;
  *) echo "$0: '$command': the shards run 'load' or 'sweep'" >&2; exit 2 ;;
esac

# Each word as a single-quoted YAML list item (a quote inside is doubled).
items() {
  for word in "$@"; do
    printf "            - '%s'\n" "$(printf '%s' "$word" | sed "s/'/''/g")"
  done
}
args=$(items "$@")
inputs=$(i=0; while [ "$i" -lt "$shards" ]; do printf "            - /results/shard-%s%s\n" "$i" "$suffix"; i=$((i + 1)); done)

mkdir -p "$out"
for template in volume shards merge; do
  # Values pass through the environment: awk -v would interpret backslashes in them.
  SHARDS=$shards IMAGE=$image START_AT=$start_at RUN=$run CPU=$cpu MEMORY=$memory \
  DEADLINE=$deadline ARGS=$args OUTPUT=$output INPUTS=$inputs MERGE_OUT=$merge_out awk '
    BEGIN {
      shards = ENVIRON["SHARDS"]; image = ENVIRON["IMAGE"]; start_at = ENVIRON["START_AT"]
      run = ENVIRON["RUN"]; cpu = ENVIRON["CPU"]; memory = ENVIRON["MEMORY"]
      deadline = ENVIRON["DEADLINE"]
    }
    $0 == "@ARGS@" { print ENVIRON["ARGS"]; next }
    $0 == "@OUTPUT@" { print ENVIRON["OUTPUT"]; next }
    $0 == "@MERGE_INPUTS@" { print ENVIRON["INPUTS"]; next }
    $0 == "@MERGE_OUT@" { if (ENVIRON["MERGE_OUT"] != "") print ENVIRON["MERGE_OUT"]; next }
    {
      gsub(/@SHARDS@/, shards); gsub(/@IMAGE@/, image); gsub(/@START_AT@/, start_at)
      gsub(/@RUN@/, run); gsub(/@CPU@/, cpu); gsub(/@MEMORY@/, memory)
      gsub(/@DEADLINE_S@/, deadline)
      print
    }' "$here/$template.yaml" > "$out/$template.yaml"
done
echo "wrote $out/volume.yaml $out/shards.yaml $out/merge.yaml"
