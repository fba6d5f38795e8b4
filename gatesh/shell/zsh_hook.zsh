# gatesh: the zsh hook of the gated PTY session (SPEC S10). Sourced after the user's own .zshrc by
# the .zshrc gatesh writes; its .zshenv has already opened the gate channel (__gatesh_wfd,
# __gatesh_rfd: pipes to the session's relay, close-on-exec; gatesh/pty/channel.py).
#
# zshaddhistory hands us each entry exactly as read (every line of it: a multi-line command, a
# pasted block, C-v C-j newlines) before it runs. zsh calls TRAPDEBUG before every command it
# runs — in functions, subshells, hooks and widgets too — with the command as zsh prints it
# ($ZSH_DEBUG_CMD, after alias expansion). The first call of an entry sends the whole entry to the
# relay, which decides it before any of it runs; every later call lets a command run when the
# entry's decision holds it (a table lookup) and otherwise asks the relay: covered after all,
# decided on its own, or refused. A refused command is skipped by ERR_EXIT with $? = 126, and
# every later command of its entry is skipped as well.
#
# Anything unexpected — no channel, no answer, a tampered hook — refuses (fail closed).

if [[ -n ${__gatesh_hooked-} || -z ${GATESH_LAUNCHER-} ]]; then
  return 0
fi
typeset -gr __gatesh_hooked=1
typeset -gr __gatesh_launcher=$GATESH_LAUNCHER
# A confined shell cannot write its session's folder: the relay names a lock file it can.
typeset -gr __gatesh_lock=${GATESH_GATE_LOCK:-${GATESH_GATE_SOCKET%/*}/gate.lock}
# startup: the user's startup files are still running (their code is theirs); idle after.
typeset -g __gatesh_state=startup __gatesh_entry= __gatesh_seq=0
typeset -gA __gatesh_cov __gatesh_idle
typeset -ga __gatesh_reply
typeset -g __gatesh_ps1=${PS1-} __gatesh_rps1=${RPS1-} __gatesh_ps2=${PS2-} __gatesh_ps4=${PS4-}
zmodload zsh/system 2>/dev/null
: >> $__gatesh_lock 2>/dev/null

__gatesh_say() {
  { print -r -- "$1" > /dev/tty } 2>/dev/null || print -ru2 -- "$1"
}

__gatesh_ask() {
  # Send one request (KIND FIELD…) and read its reply into __gatesh_reply: seq, status, flags,
  # message, printed commands. Subshells share the channel: a lock keeps one request at a time.
  local kind=$1 seq="${sysparams[pid]}.$(( ++__gatesh_seq ))" lockfd line= chunk
  shift
  __gatesh_reply=()
  [[ -n ${__gatesh_wfd-} && -n ${__gatesh_rfd-} ]] || return 2
  zsystem flock -t 600 -f lockfd $__gatesh_lock 2>/dev/null || return 3
  {
    print -rn -- "$kind"$'\0'"$seq"$'\0'"$#"$'\0' >&$__gatesh_wfd || return 1
    (( $# )) && { print -rn -- "${(pj:\0:)@}"$'\0' >&$__gatesh_wfd || return 1 }
    while true; do
      while [[ $line != *$'\n'* ]]; do
        sysread -i $__gatesh_rfd chunk || return 1
        line+=$chunk
      done
      if [[ ${line%%$'\x1f'*} == $seq ]]; then
        __gatesh_reply=("${(@ps:\x1f:)${line%%$'\n'*}}")
        return 0
      fi
      line=${line#*$'\n'}
    done
  } always {
    zsystem flock -u $lockfd 2>/dev/null
  }
}

__gatesh_message() {
  local m=${__gatesh_reply[4]-}
  m=${m//\\n/$'\n'}
  print -rn -- "${m//\\\\/\\}"
}

__gatesh_addhistory() {
  __gatesh_entry=$1
  __gatesh_state=new
  return 0
}

__gatesh_prompts() {
  # Prompt strings that changed since the last prompt are read as code (a refused one is put back).
  local -a args
  [[ ${PS1-} == "$__gatesh_ps1" ]] || args+=(PS1 "${PS1-}")
  [[ ${RPS1-} == "$__gatesh_rps1" ]] || args+=(RPS1 "${RPS1-}")
  [[ ${PS2-} == "$__gatesh_ps2" ]] || args+=(PS2 "${PS2-}")
  [[ ${PS4-} == "$__gatesh_ps4" ]] || args+=(PS4 "${PS4-}")
  (( ${#args} )) || return 0
  if ! __gatesh_ask prompt "$PWD" "${args[@]}" || [[ ${__gatesh_reply[2]-} != ok ]]; then
    [[ ${__gatesh_reply[2]-} == no ]] && __gatesh_say "$(__gatesh_message)"
    __gatesh_say "gatesh: the prompt strings were put back as they were."
    PS1=$__gatesh_ps1 RPS1=$__gatesh_rps1 PS2=$__gatesh_ps2 PS4=$__gatesh_ps4
    return 0
  fi
  local p
  for p in "${(@)__gatesh_reply[5,-1]}"; do __gatesh_idle[$p]=1; done
  __gatesh_ps1=${PS1-} __gatesh_rps1=${RPS1-} __gatesh_ps2=${PS2-} __gatesh_ps4=${PS4-}
}

__gatesh_precmd() {
  # Re-asserts what the gate relies on before each prompt (an entry may have changed it).
  __gatesh_state=idle
  __gatesh_entry=
  __gatesh_cov=()
  setopt no_bang_hist
  if [[ ${functions[TRAPDEBUG]-} != "$__gatesh_trap_body" ]]; then
    __gatesh_say "gatesh: the gate's DEBUG trap was removed or replaced; it is installed again."
    functions[TRAPDEBUG]=$__gatesh_trap_body
  fi
  if (( ! ${zshaddhistory_functions[(Ie)__gatesh_addhistory]} )); then
    zshaddhistory_functions=(__gatesh_addhistory $zshaddhistory_functions)
  fi
  if (( ! ${precmd_functions[(Ie)__gatesh_precmd]} )); then
    precmd_functions=(__gatesh_precmd $precmd_functions)
  fi
  __gatesh_prompts
}

__gatesh_refuse() {
  __gatesh_state=refused
  setopt ERR_EXIT
  return 126
}

__gatesh_command() {
  # The slow path: ask the relay about one command (covered, decided on its own, or refused).
  local c=$1 n rest=$1 running=0
  local -a names
  [[ $__gatesh_state == allowed ]] && running=1
  while [[ $rest =~ '\$\{?([A-Za-z_][A-Za-z0-9_]*)' ]]; do
    n=$match[1]
    rest=${rest#*$MATCH}
    [[ $n != __gatesh* && -n ${(P)+n} && ${#names} -lt 128 && ${(Pt)n} != *assoc* && ${(Pt)n} != *array* ]] && names+=("$n" "${(P)n}")
  done
  if ! __gatesh_ask cmd "$c" "$PWD" "$running" "${history[$HISTCMD]-}" 0 "$(( ${#names} / 2 ))" "${names[@]}"; then
    __gatesh_say "gatesh: the gate could not be asked about a command, so it was not run."
    return 1
  fi
  if [[ ${__gatesh_reply[2]-} == ok ]]; then
    if [[ ${__gatesh_reply[3]-} == *k* ]]; then
      if (( running )); then __gatesh_cov[$c]=1; else __gatesh_idle[$c]=1; fi
    elif [[ ${__gatesh_reply[3]-} == *w* ]]; then
      __gatesh_cov[$PWD$'\x1f'$c]=1  # decided on its own, in this folder
    fi
    return 0
  fi
  __gatesh_say "$(__gatesh_message)"
  return 1
}

# The startup files' own code: their prompt strings and functions run between entries unasked.
if __gatesh_ask hello zsh "$$" "${PS1-}" "${RPS1-}" "${PS2-}" "${PS4-}" "$(functions)"; then
  for __gatesh_i in "${(@)__gatesh_reply[5,-1]}"; do __gatesh_idle[$__gatesh_i]=1; done
  unset __gatesh_i
else
  __gatesh_say "gatesh: the gate channel of this shell does not answer; every command will be refused."
fi

zshaddhistory_functions=(__gatesh_addhistory $zshaddhistory_functions)
precmd_functions=(__gatesh_precmd $precmd_functions)
setopt no_bang_hist

# Last: from the first prompt on, every command is announced to the gate.
TRAPDEBUG() {
  # The gate's own functions run unchecked, as long as they are the gate's (zsh cannot make a
  # function read-only: a body that changed is checked like any other code).
  if [[ ${funcstack[2]-} == __gatesh_* &&
        ${functions[${funcstack[2]}]-} == "${__gatesh_bodies[${funcstack[2]}]-x}" ]]; then
    return 0
  fi
  local c=$ZSH_DEBUG_CMD
  case $__gatesh_state in
    (startup) return 0 ;;
    (refused) setopt ERR_EXIT; return 126 ;;
    (allowed) [[ -n ${__gatesh_cov[$c]-} || -n ${__gatesh_cov[$PWD$'\x1f'$c]-} ]] && return 0 ;;
    (idle)
      if (( ${#funcstack} == 1 )) && [[ -n ${history[$HISTCMD]-} && -z $__gatesh_entry ]]; then
        # An entry is running that zshaddhistory never reported: decide it from the history.
        __gatesh_entry=${history[$HISTCMD]}
        __gatesh_state=new
      else
        [[ -n ${__gatesh_idle[$c]-} ]] && return 0
      fi
      ;;
  esac
  if [[ $__gatesh_state == new ]]; then
    if ! __gatesh_ask line "$__gatesh_entry" "$PWD"; then
      __gatesh_say "gatesh: the gate could not be asked (its channel in this shell is gone), so nothing ran."
      __gatesh_refuse
      return 126
    fi
    if [[ ${__gatesh_reply[2]-} != ok ]]; then
      __gatesh_say "$(__gatesh_message)"
      __gatesh_refuse
      return 126
    fi
    __gatesh_state=allowed
    [[ -n ${__gatesh_cov[$c]-} ]] && return 0
  fi
  __gatesh_command "$c" && return 0
  __gatesh_refuse
  return 126
}
typeset -gr __gatesh_trap_body=${functions[TRAPDEBUG]}
typeset -gA __gatesh_bodies
for __gatesh_i in __gatesh_ask __gatesh_message __gatesh_addhistory __gatesh_prompts \
    __gatesh_precmd __gatesh_refuse __gatesh_say __gatesh_command; do
  __gatesh_bodies[$__gatesh_i]=${functions[$__gatesh_i]}
done
unset __gatesh_i
typeset -gr __gatesh_bodies

