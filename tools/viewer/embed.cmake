# Compile a file into a C source: `const unsigned char NAME[]` (the bytes,
# NUL-terminated) and `const size_t NAME_size` (without the NUL). `shoal view`
# carries the viewer page this way, so an installed binary needs no data files.
# Usage: cmake -DINPUT=file -DOUTPUT=file.c -DNAME=symbol -P embed.cmake
file(READ "${INPUT}" hex HEX)
string(LENGTH "${hex}" digits)
math(EXPR bytes "${digits} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," body "${hex}")
file(WRITE "${OUTPUT}.tmp"
  "/* Generated from ${INPUT} by tools/viewer/embed.cmake. Do not edit. */\n"
  "#include <stddef.h>\n"
  "extern const unsigned char ${NAME}[];\n"
  "extern const size_t ${NAME}_size;\n"
  "const unsigned char ${NAME}[] = {${body}0x00};\n"
  "const size_t ${NAME}_size = ${bytes};\n")
file(RENAME "${OUTPUT}.tmp" "${OUTPUT}")
