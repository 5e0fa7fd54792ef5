# idgen/gen_tables.cmake: generate the FLUID word and emoji tables.
#
# Run as a script at build time (idgen/CMakeLists.txt wires it in):
#   cmake -DWORDS=mnemonic_words.txt -DEMOJI=emoji576.txt -DOUT=fluid_tables.c -P gen_tables.cmake
#
# WORDS holds the 1633 mnemonicode words, line n = digit n-1 (the first 1626
# are base-1626 digits, the last 7 are 24-bit-tail words). EMOJI holds the 576
# RFC 19 emoji, line n = digit n-1, each one 4-byte UTF-8 code point F0 9F xx yy.
# The output defines the tables declared in idgen/fluid_tables.h, in file order,
# plus two reverse indexes so decoding never scans:
#   - an open-addressing hash of the words, keyed by the word's ASCII bytes read
#     as a little-endian integer, hashed by ads_fluid__word_hash() (the same
#     arithmetic is done here, within CMake's signed 64-bit math), linear probing;
#   - a table indexed by code point - U+1F000 giving digit + 1 (0: not an emoji
#     of the table).
# The script checks the inputs (counts, word shape, duplicates) and fails the
# build on anything unexpected rather than emitting a wrong table.

cmake_minimum_required(VERSION 3.18)

foreach(var WORDS EMOJI OUT)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "gen_tables.cmake: -D${var}=... is required")
  endif()
endforeach()

set(word_count 1633)
set(word_base 1626)
set(word_slots 4096)
set(emoji_count 576)
set(emoji_span 4096)
set(letters "abcdefghijklmnopqrstuvwxyz")

# ---------------------------------------------------------------- words
file(READ "${WORDS}" words_text)
string(REPLACE "\r" "" words_text "${words_text}")
if(words_text MATCHES ";")
  message(FATAL_ERROR "${WORDS}: unexpected ';'")
endif()
string(REGEX REPLACE "\n$" "" words_text "${words_text}")
string(REPLACE "\n" ";" words "${words_text}")
list(LENGTH words n)
if(NOT n EQUAL word_count)
  message(FATAL_ERROR "${WORDS}: ${n} lines, expected ${word_count}")
endif()

set(words_out "")
set(len_out "")
set(index 0)
foreach(word IN LISTS words)
  string(LENGTH "${word}" wlen)
  if(NOT word MATCHES "^[a-z]+$" OR wlen GREATER 7)
    math(EXPR line "${index} + 1")
    message(FATAL_ERROR "${WORDS}:${line}: '${word}' is not 1..7 lower-case letters")
  endif()
  # The key: the word's ASCII bytes as a little-endian integer (< 2^56).
  set(key 0)
  math(EXPR last "${wlen} - 1")
  foreach(i RANGE ${last})
    string(SUBSTRING "${word}" ${i} 1 ch)
    string(FIND "${letters}" "${ch}" v)
    math(EXPR key "${key} | ((${v} + 0x61) << (8 * ${i}))")
  endforeach()
  # ads_fluid__word_hash(): fold the high bits in, multiply mod 2^32, keep 12 bits.
  math(EXPR x "(${key} ^ (${key} >> 25)) & 0xffffffff")
  math(EXPR h "((${x} * 0x6c8e9cf5) & 0xffffffff) >> 20")
  while(DEFINED slot_${h})
    if(slot_key_${h} EQUAL key)
      message(FATAL_ERROR "${WORDS}: duplicate word '${word}'")
    endif()
    math(EXPR h "(${h} + 1) % ${word_slots}")
  endwhile()
  set(slot_${h} ${index})
  set(slot_key_${h} ${key})
  string(APPEND words_out "    \"${word}\",\n")
  string(APPEND len_out "    ${wlen}, /* ${word} */\n")
  math(EXPR index "${index} + 1")
endforeach()

set(slot_out "")
set(slot_key_out "")
math(EXPR last "${word_slots} - 1")
foreach(h RANGE ${last})
  if(DEFINED slot_${h})
    math(EXPR v "${slot_${h}} + 1")
    math(EXPR keyhex "${slot_key_${h}}" OUTPUT_FORMAT HEXADECIMAL)
    list(GET words ${slot_${h}} word)
    string(APPEND slot_out "    [${h}] = ${v}, /* ${word} */\n")
    string(APPEND slot_key_out "    [${h}] = UINT64_C(${keyhex}), /* ${word} */\n")
  endif()
endforeach()

# ---------------------------------------------------------------- emoji
file(READ "${EMOJI}" emoji_hex HEX)
string(LENGTH "${emoji_hex}" hexlen)
set(pos 0)
set(digit 0)
set(emoji_out "")
set(rev_offsets "")
while(pos LESS hexlen)
  math(EXPR line "${digit} + 1")
  math(EXPR need "${pos} + 8")
  if(need GREATER hexlen)
    message(FATAL_ERROR "${EMOJI}:${line}: truncated entry")
  endif()
  string(SUBSTRING "${emoji_hex}" ${pos} 8 cp_hex)
  if(NOT cp_hex MATCHES "^f09f([89ab][0-9a-f])([89ab][0-9a-f])$")
    message(FATAL_ERROR "${EMOJI}:${line}: '${cp_hex}' is not a 4-byte F0 9F code point")
  endif()
  set(b2 "${CMAKE_MATCH_1}")
  set(b3 "${CMAKE_MATCH_2}")
  math(EXPR off "((0x${b2} & 0x3f) << 6) | (0x${b3} & 0x3f)")
  if(DEFINED emoji_${off})
    message(FATAL_ERROR "${EMOJI}:${line}: duplicate emoji")
  endif()
  set(emoji_${off} ${digit})
  list(APPEND rev_offsets ${off})
  math(EXPR cp "0x1f000 + ${off}" OUTPUT_FORMAT HEXADECIMAL)
  string(TOUPPER "${cp}" cp)
  string(REPLACE "0X" "U+" cp "${cp}")
  string(APPEND emoji_out "    \"\\xf0\\x9f\\x${b2}\\x${b3}\", /* ${digit}: ${cp} */\n")
  math(EXPR pos "${pos} + 8")
  if(pos LESS hexlen)
    string(SUBSTRING "${emoji_hex}" ${pos} 2 sep)
    if(NOT sep STREQUAL "0a")
      message(FATAL_ERROR "${EMOJI}:${line}: expected one emoji and a newline")
    endif()
    math(EXPR pos "${pos} + 2")
  endif()
  math(EXPR digit "${digit} + 1")
endwhile()
if(NOT digit EQUAL emoji_count)
  message(FATAL_ERROR "${EMOJI}: ${digit} lines, expected ${emoji_count}")
endif()

set(rev_out "")
list(SORT rev_offsets COMPARE NATURAL)
foreach(off IN LISTS rev_offsets)
  math(EXPR v "${emoji_${off}} + 1")
  math(EXPR offhex "${off}" OUTPUT_FORMAT HEXADECIMAL)
  string(APPEND rev_out "    [${offhex}] = ${v},\n")
endforeach()

# ---------------------------------------------------------------- output
file(WRITE "${OUT}.tmp" "/*
 * fluid_tables.c: generated by idgen/gen_tables.cmake from
 * idgen/data/mnemonic_words.txt and idgen/data/emoji576.txt. Do not edit;
 * edit the data files or the script instead.
 *
 * The word list is mnemonicode v0.7 by Oren Tirosh, used under its notice:
 *
 *   Copyright (c) 2000  Oren Tirosh <oren@hishome.net>
 *
 *   Permission is hereby granted, free of charge, to any person obtaining a
 *   copy of this software and associated documentation files (the
 *   \"Software\"), to deal in the Software without restriction, including
 *   without limitation the rights to use, copy, modify, merge, publish,
 *   distribute, sublicense, and/or sell copies of the Software, and to permit
 *   persons to whom the Software is furnished to do so, subject to the
 *   following conditions:
 *
 *   The above copyright notice and this permission notice shall be included
 *   in all copies or substantial portions of the Software.
 *
 *   THE SOFTWARE IS PROVIDED \"AS IS\", WITHOUT WARRANTY OF ANY KIND, EXPRESS
 *   OR IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF
 *   MERCHANTABILITY, FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN
 *   NO EVENT SHALL THE AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM,
 *   DAMAGES OR OTHER LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR
 *   OTHERWISE, ARISING FROM, OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE
 *   USE OR OTHER DEALINGS IN THE SOFTWARE.
 *
 * The emoji table is the base-576 digit table of Flux RFC 19
 * (flux-framework/rfc, data/spec_19/basemoji.h), in its CLDR order.
 */
#include \"idgen/fluid_tables.h\"

/* Digit value = index. Words 1626..1632 are the 24-bit-tail words. */
const char ads_fluid__words[ADS_FLUID__WORD_COUNT][8] = {
${words_out}};

const unsigned char ads_fluid__word_len[ADS_FLUID__WORD_COUNT] = {
${len_out}};

/* Hash slot -> the key of the word there (0: empty) and its index + 1;
 * linear probing from ads_fluid__word_hash(key). */
const uint64_t ads_fluid__word_slot_key[ADS_FLUID__WORD_SLOTS] = {
${slot_key_out}};

const uint16_t ads_fluid__word_slot[ADS_FLUID__WORD_SLOTS] = {
${slot_out}};

/* Digit value = index: the 4 UTF-8 bytes of each emoji. */
const char ads_fluid__emoji[ADS_FLUID__EMOJI_COUNT][5] = {
${emoji_out}};

/* Code point - U+1F000 -> digit + 1 (0: not in the table). */
const uint16_t ads_fluid__emoji_digit[ADS_FLUID__EMOJI_SPAN] = {
${rev_out}};
")
file(RENAME "${OUT}.tmp" "${OUT}")
