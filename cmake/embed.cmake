# SPDX-License-Identifier: BSD-3-Clause
# cmake -DIN=FILE -DOUT=FILE.c -DNAME=SYMBOL -P embed.cmake: FILE as a C array of chars named
# SYMBOL, NUL-terminated (trace-report's HTML page is built into the program this way).
file(READ "${IN}" hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REGEX REPLACE "(0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,)" "\\1\n" bytes "${bytes}")
get_filename_component(name "${IN}" NAME)
file(WRITE "${OUT}" "/* Generated from ${name} by cmake/embed.cmake: do not edit. */\nconst char ${NAME}[] = {\n${bytes}0x00};\n")
