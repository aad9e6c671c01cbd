# check_width.cmake -- the 100-column rule of idlc's output (included by run_golden.cmake and
# run_sysx.cmake; also runnable with `cmake -DFILES="a|b" -DINPUT=NAME.x -P`).
#
# idlc_check_width(INPUT FILES...) fails if a line of one of FILES is wider than 100 columns
# (a tab counted as 8, which overestimates a tab that does not start a line), unless the line
# is one of INPUT's %-lines, copied as the user wrote it.

# idlc__standins(VAR) -- VAR with ';', '[', ']' and '\' (which CMake lists split on or treat
# specially) replaced by '_', which has the same width.
macro(idlc__standins var)
  foreach(c ";" "[" "]" "\\")
    string(REPLACE "${c}" "_" ${var} "${${var}}")
  endforeach()
endmacro()

function(idlc_check_width input)
  set(pct "")
  if(input)
    file(READ ${input} x)
    idlc__standins(x)
    string(REPLACE "\n" ";" x "${x}")
    foreach(l IN LISTS x)
      if(l MATCHES "^%")
        string(SUBSTRING "${l}" 1 -1 l)
        list(APPEND pct "${l}")
      endif()
    endforeach()
  endif()
  set(bad "")
  foreach(f ${ARGN})
    file(READ ${f} text)
    idlc__standins(text)
    string(REPLACE "\n" ";" lines "${text}")
    set(n 0)
    foreach(l IN LISTS lines)
      math(EXPR n "${n} + 1")
      string(REPLACE "\t" "        " w "${l}")
      string(LENGTH "${w}" len)
      if(len GREATER 100)
        list(FIND pct "${l}" verbatim)
        if(verbatim LESS 0)
          string(APPEND bad "${f}:${n}: ${len} columns: ${l}\n")
        endif()
      endif()
    endforeach()
  endforeach()
  if(bad)
    message(FATAL_ERROR "lines wider than 100 columns:\n${bad}")
  endif()
endfunction()

if(CMAKE_SCRIPT_MODE_FILE STREQUAL CMAKE_CURRENT_LIST_FILE AND DEFINED FILES)
  string(REPLACE "|" ";" FILES "${FILES}")
  idlc_check_width("${INPUT}" ${FILES})
endif()
