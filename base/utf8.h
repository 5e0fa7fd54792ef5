/*
 * base/utf8.h: well-formed UTF-8, as RFC 3629 defines it, for every part
 * that reads or writes text that must be UTF-8 (the JSON reader, the
 * server's JSON answers, the XML writer and reader).
 */
#ifndef ADS_BASE_UTF8_H
#define ADS_BASE_UTF8_H

#include <stddef.h>

/* The length of the well-formed UTF-8 sequence at p (n >= 1 bytes
 * available): 1 to 4, or 0 if the bytes there are not UTF-8 (overlong
 * forms, surrogates and code points over U+10FFFF are not). */
size_t ads_utf8_len(const unsigned char *p, size_t n);

#endif
