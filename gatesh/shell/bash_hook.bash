# gatesh: the bash hook of the gated PTY session (SPEC S10). Sourced after the user's own startup
# files by the rc file gatesh writes; needs GATESH_LAUNCHER (the gatesh executable to call).
#
# How an entry is gated. bash expands PS0 after it has read a whole entry (every line of a
# multi-line command, heredoc bodies, a pasted block's current line, a function definition) and
# before any part of it runs. Our PS0 is  ${zero#${__gatesh_v:=(OUT}}  where __gatesh_v has the
# integer attribute and OUT is what `gatesh _gate --bash` printed in a command substitution:
#   - allowed: `_gate` prints "0)", so __gatesh_v=(0) and PS0 shows nothing;
#   - anything else (refused, crashed, killed, not found): the arithmetic fails, and an arithmetic
#     error while assigning an integer variable makes bash discard the whole entry (a jump to the
#     top level) with $? left at the substitution's status: 126 when gatesh refused.
# Measured on bash 5.2: the DEBUG-trap recipe skips one simple command at a time, leaves $? = 0,
# lets function definitions through and spins on a refused `while true`; this discards the entry.

if [[ -n ${__gatesh_hooked-} || -z ${GATESH_LAUNCHER-} ]]; then
  return 0 2>/dev/null
fi
readonly __gatesh_hooked=1
readonly __gatesh_launcher=$GATESH_LAUNCHER
readonly __gatesh_zero=0
__gatesh_user_ps0=${PS0-}

# The user's PROMPT_COMMAND (string or array) keeps running, from inside ours.
if [[ $(declare -p PROMPT_COMMAND 2>/dev/null) == "declare -a"* ]]; then
  __gatesh_user_pc=("${PROMPT_COMMAND[@]}")
else
  __gatesh_user_pc=("${PROMPT_COMMAND-}")
fi
unset PROMPT_COMMAND

__gatesh_gate() {
  # Runs inside PS0's command substitution (a subshell): hand `_gate` the newest history entry and
  # the number the entry just read must have (HISTCMD at the prompt); `_gate` refuses a mismatch,
  # which is an entry history did not keep (bash then lists the previous one).
  local HISTTIMEFORMAT=
  builtin history 1 | GATESH_HISTCMD=$__gatesh_h "$__gatesh_launcher" _gate --bash
}

__gatesh_status() { return "$1"; }

__gatesh_prompt() {
  # Runs before every primary prompt: re-asserts what the gate relies on (an entry may have
  # changed it; it only takes effect for later entries, and this runs before the next one).
  local s=$? c
  if [[ $HISTCMD != "${__gatesh_h-}" && -z ${__gatesh_v+x} && $s == 126 ]]; then
    # The last entry was refused: erase what is left of bash's arithmetic error (a `")` line).
    builtin printf '\033[A\r\033[K' >&2
  fi
  __gatesh_h=$HISTCMD
  builtin shopt -s cmdhist lithist promptvars
  builtin set +o histexpand -o history
  HISTCONTROL= HISTIGNORE=
  [[ ${HISTSIZE-} =~ ^[0-9]+$ && $HISTSIZE -gt 0 ]] || HISTSIZE=500
  builtin unset __gatesh_v
  builtin declare -gi __gatesh_v
  if [[ -n ${__gatesh_v+x} || $PS0 != "$__gatesh_ps0" ]]; then
    # Someone made the hook's variable or PS0 unchangeable: the gate can no longer read entries.
    builtin printf '%s\n' "gatesh: the gate's hook in this shell was tampered with; ending the session." >&2
    builtin kill -KILL $$
  fi
  for c in "${__gatesh_user_pc[@]}"; do
    [[ -n $c ]] || continue
    __gatesh_status "$s"
    builtin eval "$c"
  done
  return "$s"
}

readonly __gatesh_ps0='${__gatesh_zero#${__gatesh_v:=($(__gatesh_gate)}}'"$__gatesh_user_ps0"
PS0=$__gatesh_ps0
PROMPT_COMMAND=__gatesh_prompt
builtin declare -gi __gatesh_v
builtin readonly PS0 PROMPT_COMMAND
builtin readonly -f __gatesh_gate __gatesh_status __gatesh_prompt
builtin shopt -s cmdhist lithist promptvars
builtin set +o histexpand -o history
