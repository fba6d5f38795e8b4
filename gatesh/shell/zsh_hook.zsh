# gatesh: the zsh hook of the gated PTY session (SPEC S10). Sourced after the user's own .zshrc by
# the .zshrc gatesh writes; needs GATESH_LAUNCHER (the gatesh executable to call).
#
# How an entry is gated. zshaddhistory hands us each entry exactly as read (all lines of a
# multi-line command or heredoc) before it runs. The DEBUG trap runs before every command; the
# first time it runs for a new entry it asks `gatesh _gate`, and for a refused entry it sets
# ERR_EXIT and returns 126, which makes zsh skip the command with $? = 126 (zsh 5.9). The verdict
# sticks until the next entry, so every later command of a refused entry is skipped as well.
# Commands run by prompt hooks and line-editor widgets (between precmd and the next entry) are
# not entries and are not gated. zshaddhistory reports an unfinished multi-line entry after each
# line, so the gate is asked only when a command of the entry is about to run at the top level.

if [[ -n ${__gatesh_hooked-} || -z ${GATESH_LAUNCHER-} ]]; then
  return 0
fi
typeset -gr __gatesh_hooked=1
typeset -gr __gatesh_launcher=$GATESH_LAUNCHER
typeset -g __gatesh_state=idle __gatesh_entry=

__gatesh_addhistory() {
  __gatesh_entry=$1
  __gatesh_state=new
  return 0
}

__gatesh_precmd() {
  # Re-asserts what the gate relies on before each prompt (an entry may have changed it).
  __gatesh_state=idle
  __gatesh_entry=
  setopt no_bang_hist
  if [[ ${functions[TRAPDEBUG]-} != "$__gatesh_trap_body" ]]; then
    print -ru2 -- "gatesh: the gate's DEBUG trap was removed or replaced; it is installed again."
    functions[TRAPDEBUG]=$__gatesh_trap_body
  fi
  if (( ! ${zshaddhistory_functions[(Ie)__gatesh_addhistory]} )); then
    zshaddhistory_functions=(__gatesh_addhistory $zshaddhistory_functions)
  fi
  if (( ! ${precmd_functions[(Ie)__gatesh_precmd]} )); then
    precmd_functions=(__gatesh_precmd $precmd_functions)
  fi
}

TRAPDEBUG() {
  # Hook functions and line-editor widgets run between entries (and between the lines of one):
  # never gated, never skipped.
  if [[ ${funcstack[-1]} == (precmd|zle-*|__gatesh_*) ]] || (( ${precmd_functions[(Ie)${funcstack[-1]}]} )); then
    return 0
  fi
  if [[ $__gatesh_state == idle && ${#funcstack} == 1 && -n ${history[$HISTCMD]-} ]]; then
    # An entry is running that zshaddhistory never reported: gate it from the history list.
    __gatesh_entry=${history[$HISTCMD]}
    __gatesh_state=new
  fi
  case $__gatesh_state in
    idle|allowed) return 0 ;;
    new)
      # zshaddhistory also reports an unfinished entry line by line; an entry's own commands
      # start at the top level, so anything deeper is a widget running between its lines.
      (( ${#funcstack} > 1 )) && return 0
      if print -rn -- "$__gatesh_entry" | "$__gatesh_launcher" _gate --zsh; then
        __gatesh_state=allowed
        return 0
      fi
      __gatesh_state=refused
      ;;
  esac
  setopt ERR_EXIT
  return 126
}
typeset -gr __gatesh_trap_body=${functions[TRAPDEBUG]}

zshaddhistory_functions=(__gatesh_addhistory $zshaddhistory_functions)
precmd_functions=(__gatesh_precmd $precmd_functions)
setopt no_bang_hist
