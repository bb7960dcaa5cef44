# Compile a file into a C source: `const unsigned char NAME[]` (the bytes,
# NUL-terminated) and `const size_t NAME_size` (without the NUL). `shoal view`
# carries the viewer page this way, so an installed binary needs no data files.
#
# The viewer page's libraries go in on the way: with THREE_JS (three.min.js)
# and FZSTD_JS (fzstd's umd/index.js) the page's empty tags
# <script id="three-js"></script> and <script id="fzstd-js"></script> get
# those files' text, and NAME_three and NAME_fzstd say which did (1) or not
# (0). PAGE gets the page as compiled in (the one installed).
# Usage: cmake -DINPUT=file -DOUTPUT=file.c -DNAME=symbol -DPAGE=file.html
#   [-DTHREE_JS=file] [-DFZSTD_JS=file] -P embed.cmake
file(READ "${INPUT}" page)
set(have_three 0)
set(have_fzstd 0)
file(WRITE "${PAGE}.tmp" "")
# The text goes through quoted arguments only, so no character of the
# libraries is read as CMake syntax.
foreach(lib three fzstd)
  if(lib STREQUAL "three")
    set(script "${THREE_JS}")
  else()
    set(script "${FZSTD_JS}")
  endif()
  if(NOT script)
    continue()
  endif()
  set(tag "<script id=\"${lib}-js\">")
  string(FIND "${page}" "${tag}</script>" at)
  if(at LESS 0)
    message(FATAL_ERROR "${INPUT} has no ${tag}</script> for ${script}")
  endif()
  file(READ "${script}" text)
  string(FIND "${text}" "</script" inner)
  if(inner GREATER_EQUAL 0)
    message(FATAL_ERROR "${script} contains </script: it cannot go inside the page")
  endif()
  string(LENGTH "${tag}" n)
  math(EXPR cut "${at} + ${n}")
  string(SUBSTRING "${page}" 0 ${cut} head)
  string(SUBSTRING "${page}" ${cut} -1 page)
  file(APPEND "${PAGE}.tmp" "${head}")
  file(APPEND "${PAGE}.tmp" "${text}")
  set(have_${lib} 1)
endforeach()
file(APPEND "${PAGE}.tmp" "${page}")
file(RENAME "${PAGE}.tmp" "${PAGE}")
file(READ "${PAGE}" hex HEX)
string(LENGTH "${hex}" digits)
math(EXPR bytes "${digits} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," body "${hex}")
file(WRITE "${OUTPUT}.tmp"
  "/* Generated from ${INPUT} by cli/viewer/embed.cmake. Do not edit. */\n"
  "#include <stddef.h>\n"
  "extern const unsigned char ${NAME}[];\n"
  "extern const size_t ${NAME}_size;\n"
  "extern const int ${NAME}_three;\n"
  "extern const int ${NAME}_fzstd;\n"
  "const unsigned char ${NAME}[] = {${body}0x00};\n"
  "const size_t ${NAME}_size = ${bytes};\n"
  "const int ${NAME}_three = ${have_three};\n"
  "const int ${NAME}_fzstd = ${have_fzstd};\n")
file(RENAME "${OUTPUT}.tmp" "${OUTPUT}")
