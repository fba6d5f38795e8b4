# gatesh: the bash hook of the gated PTY session (SPEC S10). Sourced after the user's own startup
# files by the rc file gatesh writes, which has already started the gate channel: the coprocess
# __gatesh_co, whose two pipes lead to the session's relay (gatesh/pty/channel.py).
#
# Two gates, both answered by the relay over the channel, no process started:
#
# 1. The line. Enter (C-m and C-j, in every keymap) first runs __gatesh_enter, which sends
#    everything typed since the prompt — pasted lines, C-v C-j newlines and continuation lines
#    included — and the relay decides it as a whole. bash expands PS0 after it has read a whole
#    entry and before any part of it runs; our PS0 makes a refused entry an arithmetic error while
#    assigning the integer __gatesh_v, which makes bash discard the whole entry (every command of
#    it, function definitions included), with $? = 126 from the substitution that prints why.
# 2. Every command. With extdebug and functrace, bash calls the DEBUG trap before every command it
#    runs, in functions and subshells too, with the command as bash prints it ($BASH_COMMAND,
#    after alias expansion, for an fc re-run, in a prompt string, a trap, a key binding). The trap
#    lets it run when the line's decision holds it (a table lookup) and otherwise asks the relay:
#    covered after all, decided on its own, or refused. A refused command is skipped and the
#    entry is interrupted (SIGINT to the shell), so nothing after it runs either.
#
# Anything unexpected — no channel, no answer, a tampered variable — refuses (fail closed).

if [[ -n ${__gatesh_hooked-} || -z ${GATESH_LAUNCHER-} ]]; then
  return 0 2>/dev/null
fi
readonly __gatesh_hooked=1
readonly __gatesh_launcher=$GATESH_LAUNCHER
readonly __gatesh_sock=${GATESH_GATE_SOCKET-}
readonly __gatesh_zero=0 __gatesh_empty=
readonly __gatesh_shell_pid=$$
__gatesh_user_ps0=${PS0-}
# What the hook sets HISTCONTROL and HISTIGNORE to while an entry is read: an unknown word to
# HISTCONTROL and a pattern only this one word matches for HISTIGNORE, so no entry is dropped
# (the gate reads the newest entry to see a re-run line), and any other value is the user's.
readonly __gatesh_mark=gatesh-reads-every-entry
__gatesh_hc=${HISTCONTROL-}
__gatesh_hi=${HISTIGNORE-}
__gatesh_nohist=
__gatesh_seq=0
__gatesh_acc=
__gatesh_last=
__gatesh_x=1
__gatesh_msg=
__gatesh_why=
__gatesh_running=0
__gatesh_refused=
declare -A __gatesh_cov=() __gatesh_idle=()
declare -a __gatesh_r=()
__gatesh_ps1=${PS1-} __gatesh_ps2=${PS2-} __gatesh_ps4=${PS4-}

# The user's PROMPT_COMMAND (string or array) keeps running, from inside ours.
if [[ $(declare -p PROMPT_COMMAND 2>/dev/null) == "declare -a"* ]]; then
  __gatesh_user_pc=("${PROMPT_COMMAND[@]}")
else
  __gatesh_user_pc=("${PROMPT_COMMAND-}")
fi
unset PROMPT_COMMAND
readonly -a __gatesh_user_pc

__gatesh_say() {
  # A line on the terminal itself (stderr may be redirected by the command being refused).
  { builtin printf '%s\n' "$1" >/dev/tty; } 2>/dev/null || builtin printf '%s\n' "$1" >&2
}

__gatesh_channel_ok() {
  [[ -n ${__gatesh_co[1]-} && -n ${__gatesh_co[0]-} ]] || return 1
  [[ /dev/fd/${__gatesh_co[1]} -ef /proc/$__gatesh_co_PID/fd/0 &&
     /dev/fd/${__gatesh_co[0]} -ef /proc/$__gatesh_co_PID/fd/1 ]]
}

__gatesh_ask() {
  # Send one request (KIND FIELD…) and read its reply into __gatesh_r: seq, status, flags,
  # message, printed commands. In a subshell (bash closed the channel there) the request goes
  # through `gatesh _gate` to the relay's socket. Returns non-zero when no answer came.
  local seq=$(( ++__gatesh_seq )) kind=$1 out
  shift
  __gatesh_r=()
  if (( BASHPID == __gatesh_shell_pid )); then
    __gatesh_channel_ok || return 2
    builtin printf '%s\0' "$kind" "$seq" "$#" "$@" >&"${__gatesh_co[1]}" || return 1
    while IFS=$'\x1f' builtin read -r -a __gatesh_r <&"${__gatesh_co[0]}"; do
      [[ ${__gatesh_r[0]-} == "$seq" ]] && return 0
    done
    return 1
  fi
  out=$(builtin printf '%s\0' "$kind" "$seq" "$#" "$@" | "$__gatesh_launcher" _gate "$__gatesh_sock") || true
  IFS=$'\x1f' builtin read -r -a __gatesh_r <<< "$out"
  [[ ${__gatesh_r[0]-} == "$seq" ]]
}

__gatesh_message() {
  # The reply's message, unescaped (\\ and \n).
  local m=${__gatesh_r[3]-} out= c
  while [[ -n $m ]]; do
    c=${m:0:1}
    if [[ $c == '\' ]]; then
      case ${m:1:1} in n) out+=$'\n' ;; *) out+=${m:1:1} ;; esac
      m=${m:2}
    else
      out+=$c
      m=${m:1}
    fi
  done
  builtin printf '%s' "$out"
}

__gatesh_enter() {
  # Enter was pressed (bind -x, before accept-line): decide everything typed since the prompt.
  # Not at the shell's own prompt (a running command's `read -e`): nothing to decide.
  [[ $__gatesh_running == 0 ]] || return 0
  __gatesh_acc+=$READLINE_LINE$'\n'
  __gatesh_x=1
  if ! __gatesh_ask line "$__gatesh_acc" "$PWD"; then
    __gatesh_msg="gatesh: the gate could not be asked (its channel in this shell is gone), so nothing ran."
    return 0
  fi
  local p
  case ${__gatesh_r[1]-} in
    ok)
      __gatesh_x= __gatesh_msg=
      __gatesh_cov=()
      for p in "${__gatesh_r[@]:4}"; do __gatesh_cov[$p]=1; done
      ;;
    *) __gatesh_msg=$(__gatesh_message) ;;
  esac
}

__gatesh_refuse_entry() {
  # Runs in PS0's substitution for a refused entry: say why; its status becomes $?.
  __gatesh_say "$__gatesh_msg"
  return 126
}

__gatesh_command() {
  # The DEBUG trap's slow path: $1 is the command, the rest the positional parameters where it
  # runs. Ask the relay; 0 lets it run.
  local c=$1 t n names=() re='\$\{?([A-Za-z_][A-Za-z0-9_]*)'
  shift
  t=$c
  while [[ $t =~ $re ]]; do
    n=${BASH_REMATCH[1]}
    t=${t#*"${BASH_REMATCH[0]}"}
    [[ $n != __gatesh* && -v $n && ${#names[@]} -lt 64 ]] && names+=("$n" "${!n}")
  done
  local hist
  hist=$(HISTTIMEFORMAT= builtin history 1 2>/dev/null) || hist=
  if ! __gatesh_ask cmd "$c" "$PWD" "$__gatesh_running" "$hist" "$#" "$@" "$(( ${#names[@]} / 2 ))" "${names[@]}"; then
    __gatesh_say "gatesh: the gate could not be asked about \`$c\`, so it was not run."
    return 1
  fi
  case ${__gatesh_r[1]-} in
    ok)
      if [[ ${__gatesh_r[2]-} == *k* ]]; then
        if (( __gatesh_running )); then __gatesh_cov[$c]=1; else __gatesh_idle[$c]=1; fi
      elif [[ ${__gatesh_r[2]-} == *w* ]]; then
        __gatesh_cov[$PWD$'\x1f'$c]=1  # decided on its own, in this folder
      fi
      return 0
      ;;
  esac
  __gatesh_say "$(__gatesh_message)"
  return 1
}

__gatesh_debug() {
  # The DEBUG trap (see the top of this file; the trap's own text lets the gate's functions run
  # unchecked before calling this).
  local c=$BASH_COMMAND
  case $c in
    # The shell calls these itself (PROMPT_COMMAND, Enter, PS0); as typed, a line naming them
    # was decided (and refused: they are the gate's own).
    __gatesh_prompt|__gatesh_enter|__gatesh_refuse_entry) return 0 ;;
  esac
  if (( __gatesh_running )); then
    [[ -n ${__gatesh_cov[$c]-} || -n ${__gatesh_cov[$PWD$'\x1f'$c]-} ]] && return 0
  else
    [[ -n ${__gatesh_idle[$c]-} ]] && return 0
  fi
  __gatesh_command "$c" "$@" && return 0
  # Refused: skip it, and interrupt the entry so nothing after it runs.
  __gatesh_refused=1
  builtin kill -INT "$BASHPID"
  return 1
}

__gatesh_status() { return "$1"; }

__gatesh_keep() {
  # The entry just run was read with every history setting off (the gate must see it); now the
  # list keeps it as the user's own HISTCONTROL and HISTIGNORE say: `history -s` applies them
  # (ignorespace, ignoredups, erasedups, patterns, `&`) exactly as reading the line would have.
  # One entry typed at the prompt: its text is what Enter sent the gate (no process to read it).
  local e n HISTTIMEFORMAT=
  if [[ -n $__gatesh_last && $HISTCMD == $(( __gatesh_h + 1 )) ]]; then
    n=$__gatesh_h e=${__gatesh_last%$'\n'}
  else
    e=$(builtin history 1) || return 0
    n=${e#"${e%%[![:space:]]*}"}
    n=${n%%[!0-9]*}
    [[ $n == "$__gatesh_h" ]] || return 0
    e=${e#*[0-9][ *] }
  fi
  builtin history -d "$n" || return 0
  [[ -z $__gatesh_nohist ]] || return 0
  { HISTCONTROL=$__gatesh_hc HISTIGNORE=$__gatesh_hi; } 2>/dev/null
  builtin history -s -- "$e"
}

__gatesh_prompts() {
  # Prompt strings that changed since the last prompt are read as code (a refused one is put back).
  local args=() i
  [[ ${PS1-} == "$__gatesh_ps1" ]] || args+=(PS1 "${PS1-}")
  [[ ${PS2-} == "$__gatesh_ps2" ]] || args+=(PS2 "${PS2-}")
  [[ ${PS4-} == "$__gatesh_ps4" ]] || args+=(PS4 "${PS4-}")
  (( ${#args[@]} )) || return 0
  if ! __gatesh_ask prompt "$PWD" "${args[@]}" || [[ ${__gatesh_r[1]-} != ok ]]; then
    [[ ${__gatesh_r[1]-} == no ]] && __gatesh_say "$(__gatesh_message)"
    __gatesh_say "gatesh: the prompt strings were put back as they were."
    PS1=$__gatesh_ps1 PS2=$__gatesh_ps2 PS4=$__gatesh_ps4
    return 0
  fi
  for i in "${__gatesh_r[@]:4}"; do __gatesh_idle[$i]=1; done
  __gatesh_ps1=${PS1-} __gatesh_ps2=${PS2-} __gatesh_ps4=${PS4-}
}

__gatesh_prompt() {
  # Runs before every primary prompt: re-asserts what the gate relies on (an entry may have
  # changed it; it only takes effect for later entries, and this runs before the next one).
  local s=$? c
  if [[ $HISTCMD != "${__gatesh_h-}" ]]; then
    if [[ -z ${__gatesh_v+x} && $s == 126 ]]; then
      # The entry was refused whole: erase bash's arithmetic error (the line after the message).
      builtin printf '\033[A\r\033[K' >&2
    fi
    __gatesh_last=$__gatesh_acc
    [[ -z $__gatesh_hc$__gatesh_hi$__gatesh_nohist || -z ${__gatesh_h-} ]] || __gatesh_keep
  fi
  if [[ -n $__gatesh_refused ]]; then
    # A command of the entry was refused (its message said why) and the entry interrupted.
    builtin printf '\033[A\r\033[K' >&2
    s=126
  fi
  # Enter must stay the gate's: bound again after a line that could have changed key bindings,
  # and after one that ran undecided (Enter did not reach the gate).
  if [[ -n $__gatesh_x || $__gatesh_acc == *bind* || $__gatesh_acc == *set* ||
        $__gatesh_acc == *inputrc* || $__gatesh_acc == *keymap* ]]; then
    __gatesh_bind
  fi
  __gatesh_refused= __gatesh_running=0 __gatesh_acc= __gatesh_x=1
  __gatesh_msg="gatesh: this entry was not decided by the gate, so nothing ran."
  __gatesh_cov=()
  [[ ${HISTCONTROL-} == "$__gatesh_mark" ]] || __gatesh_hc=${HISTCONTROL-}
  [[ ${HISTIGNORE-} == "$__gatesh_mark" ]] || __gatesh_hi=${HISTIGNORE-}
  { HISTCONTROL=$__gatesh_mark HISTIGNORE=$__gatesh_mark; } 2>/dev/null
  [[ ${HISTSIZE-} != *[1-9]* && ${HISTSIZE-} == *0* ]] && [[ ${HISTSIZE-} =~ ^[[:space:]]*[-+]?0+[[:space:]]*$ ]] && HISTSIZE=1
  builtin shopt -s cmdhist lithist promptvars extdebug
  builtin set +o histexpand -o functrace
  [[ :$SHELLOPTS: == *:history:* ]] || builtin set -o history
  [[ :$SHELLOPTS: == *:emacs:* || :$SHELLOPTS: == *:vi:* ]] || builtin set -o emacs
  __gatesh_h=$HISTCMD
  builtin unset __gatesh_v
  builtin declare -gi __gatesh_v
  if [[ -n ${__gatesh_v+x} || $PS0 != "$__gatesh_ps0" ]] || ! __gatesh_channel_ok; then
    # The hook's variable, PS0 or the channel was taken away: the gate can no longer read entries.
    __gatesh_say "gatesh: the gate's hook in this shell was tampered with or lost its channel; ending the session."
    builtin kill -KILL $$
  fi
  __gatesh_prompts
  for c in "${__gatesh_user_pc[@]}"; do
    [[ -n $c ]] || continue
    __gatesh_status "$s"
    builtin eval "$c"
  done
  return "$s"
}

__gatesh_bind() {
  local m
  for m in emacs vi-insert vi-command; do
    builtin bind -m "$m" -x '"\C-x\C-_\C-g": __gatesh_enter' 2>/dev/null
    builtin bind -m "$m" '"\C-x\C-_\C-a": accept-line' 2>/dev/null
    builtin bind -m "$m" '"\C-m": "\C-x\C-_\C-g\C-x\C-_\C-a"' 2>/dev/null
    builtin bind -m "$m" '"\C-j": "\C-x\C-_\C-g\C-x\C-_\C-a"' 2>/dev/null
  done
}

# The startup files' own code: their prompt strings and functions run between lines unasked.
if __gatesh_ask hello bash "$$" "${PS1-}" "${PS2-}" "${PS4-}" "$(builtin declare -f)"; then
  for __gatesh_i in "${__gatesh_r[@]:4}"; do __gatesh_idle[$__gatesh_i]=1; done
  unset __gatesh_i
else
  __gatesh_say "gatesh: the gate channel of this shell does not answer; every command will be refused."
fi

readonly __gatesh_ps0='${__gatesh_x:+$(__gatesh_refuse_entry)}${__gatesh_zero:(__gatesh_running=1):0}${__gatesh_zero#${__gatesh_v:=${__gatesh_x:+(}0}}'"$__gatesh_user_ps0"
PS0=$__gatesh_ps0
PROMPT_COMMAND=__gatesh_prompt
builtin declare -gi __gatesh_v
builtin readonly PS0 PROMPT_COMMAND
builtin readonly -f __gatesh_say __gatesh_channel_ok __gatesh_ask __gatesh_message __gatesh_enter \
  __gatesh_refuse_entry __gatesh_command __gatesh_debug __gatesh_status __gatesh_keep \
  __gatesh_prompts __gatesh_prompt __gatesh_bind
builtin shopt -s cmdhist lithist promptvars extdebug
builtin set +o histexpand -o functrace
__gatesh_bind
# The trap: the gate's own functions (exactly these names: no other can be defined, they are
# readonly) run unchecked, without a function call per command of theirs.
readonly __gatesh_trap='case ${FUNCNAME-} in __gatesh_prompt|__gatesh_enter|__gatesh_ask|__gatesh_message|__gatesh_command|__gatesh_keep|__gatesh_refuse_entry|__gatesh_say|__gatesh_channel_ok|__gatesh_status|__gatesh_prompts|__gatesh_bind|__gatesh_debug) ;; *) __gatesh_debug "$@" ;; esac'
# Last, and in one compound command (read whole before it runs): from here on every command is
# announced to the gate, and a line read after `set -o history` would be kept as an entry.
if [[ :$SHELLOPTS: != *:history:* ]]; then
  # The user's startup files turned history off. The gate still reads each entry from the list,
  # so it is on, starts empty and keeps nothing: each entry is deleted once it ran
  # (__gatesh_keep), and with HISTFILE unset no file is read or written, as with history off.
  __gatesh_nohist=1
  builtin unset HISTFILE
  builtin set -o history; builtin history -c
  builtin trap "$__gatesh_trap" DEBUG
else
  builtin trap "$__gatesh_trap" DEBUG
fi
