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
# What the hook sets HISTCONTROL and HISTIGNORE to while an entry is read: an unknown word to
# HISTCONTROL and a pattern only this one word matches for HISTIGNORE, so no entry is dropped,
# and any other value is recognisably the user's. Their values, kept for __gatesh_keep:
readonly __gatesh_mark=gatesh-reads-every-entry
__gatesh_hc=${HISTCONTROL-}
__gatesh_hi=${HISTIGNORE-}
__gatesh_nohist=

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

__gatesh_keep() {
  # The entry just run was read with every history setting off (the gate must see it); now the
  # list keeps it as the user's own HISTCONTROL and HISTIGNORE say: `history -s` applies them
  # (ignorespace, ignoredups, erasedups, patterns, `&`) exactly as reading the line would have.
  local e n HISTTIMEFORMAT=
  e=$(builtin history 1) || return 0
  n=${e#"${e%%[![:space:]]*}"}
  n=${n%%[!0-9]*}
  [[ $n == "$__gatesh_h" ]] || return 0
  e=${e#*[0-9][ *] }
  builtin history -d "$n" || return 0
  [[ -z $__gatesh_nohist ]] || return 0
  { HISTCONTROL=$__gatesh_hc HISTIGNORE=$__gatesh_hi; } 2>/dev/null
  builtin history -s -- "$e"
}

__gatesh_prompt() {
  # Runs before every primary prompt: re-asserts what the gate relies on (an entry may have
  # changed it; it only takes effect for later entries, and this runs before the next one).
  local s=$? c
  if [[ $HISTCMD != "${__gatesh_h-}" ]]; then
    if [[ -z ${__gatesh_v+x} && ( $s == 126 || $s == 130 ) ]]; then
      # The last entry was refused (126): erase what is left of bash's arithmetic error (a `")`
      # line). Interrupted while it was being decided (130, Ctrl-C): bash adds a line break.
      builtin printf '\033[A\r\033[K' >&2
      [[ $s == 130 ]] && builtin printf '\033[A\r\033[K' >&2
    fi
    [[ -z $__gatesh_hc$__gatesh_hi$__gatesh_nohist || -z ${__gatesh_h-} ]] || __gatesh_keep
  fi
  # The user's own history settings: a value other than the gate's mark was set by them (their
  # startup files, or a command since), and is what the list keeps (see __gatesh_keep).
  [[ ${HISTCONTROL-} == "$__gatesh_mark" ]] || __gatesh_hc=${HISTCONTROL-}
  [[ ${HISTIGNORE-} == "$__gatesh_mark" ]] || __gatesh_hi=${HISTIGNORE-}
  { HISTCONTROL=$__gatesh_mark HISTIGNORE=$__gatesh_mark; } 2>/dev/null
  # HISTSIZE 0 keeps no list at all; the gate needs the newest entry. Unset, negative or not a
  # number is bash's "unlimited" or "unchanged": left as the user set it.
  [[ ${HISTSIZE-} =~ ^[[:space:]]*[-+]?0+[[:space:]]*$ ]] && HISTSIZE=1
  builtin shopt -s cmdhist lithist promptvars
  builtin set +o histexpand
  # Turning history on when it was off also loads the history file (bash does that once per
  # session): so only when off, and the entry number is read after it.
  [[ :$SHELLOPTS: == *:history:* ]] || builtin set -o history
  __gatesh_h=$HISTCMD
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
builtin readonly -f __gatesh_gate __gatesh_status __gatesh_keep __gatesh_prompt
builtin shopt -s cmdhist lithist promptvars
builtin set +o histexpand
if [[ :$SHELLOPTS: != *:history:* ]]; then
  # The user's startup files turned history off. The gate still reads each entry from the list,
  # so it is on, starts empty and keeps nothing: each entry is deleted once it ran
  # (__gatesh_keep), and with HISTFILE unset no file is read or written, as with history off.
  # Last in the file: lines read after `set -o history` during startup would be kept as entries.
  __gatesh_nohist=1
  builtin unset HISTFILE
  builtin set -o history; builtin history -c
fi
