# Sourced by the client scripts that run several binaries in turn (client-vs-wrk.sh, client-user-system.sh,
# ../client-rounds.sh): each round starts one later in the list, so no binary always runs first or after the same one.
#   rotated ROUND SPEC...   prints the specs one a line, the list rotated by ROUND
#   spec_parts SPEC         sets label, vars and bin from LABEL=[VAR=VALUE,...@]BINARY (vars space-separated, for env)
rotated() {
  local round=$1; shift
  local specs=("$@") k
  for k in $(seq 0 $((${#specs[@]} - 1))); do echo "${specs[$(((k + round) % ${#specs[@]}))]}"; done
}
spec_parts() {
  label=${1%%=*}
  local rest=${1#*=}
  if [[ $rest == *@* ]]; then vars=${rest%%@*}; bin=${rest#*@}; else vars=""; bin=$rest; fi
  vars=${vars//,/ }
}
