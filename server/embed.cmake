# server/embed.cmake: writes OUT, a C file defining server_page (the bytes
# of IN, NUL-terminated) and server_page_len: the web page is built into the
# program, with no file to install and nothing fetched at run time.
# cmake -DIN=page.html -DOUT=page.c -P embed.cmake
file(READ ${IN} hex HEX)
string(LENGTH "${hex}" n)
math(EXPR len "${n} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REGEX REPLACE "((0x..,){16})" "\\1\n" bytes "${bytes}")
file(WRITE ${OUT} "/* generated from server/page.html by server/embed.cmake */\n#include <stddef.h>\nconst char server_page[] = {\n${bytes}0x00};\nconst size_t server_page_len = ${len};\n")
