/*
 * idgen/fluid_tables.h: the data tables behind the FLUID "words" and "emoji"
 * encodings (internal to idgen).
 *
 * The tables are generated at build time by idgen/gen_tables.cmake from
 * idgen/data/mnemonic_words.txt and idgen/data/emoji576.txt, in file order:
 * index = digit value. Beside the forward tables the generator emits two
 * reverse indexes so that decoding is a hash probe or a table load, never a
 * scan: a linear-probing hash of the words keyed by their packed letters, and
 * a table from emoji code point to digit.
 */
#ifndef ADS_IDGEN_FLUID_TABLES_H
#define ADS_IDGEN_FLUID_TABLES_H

#include <stdint.h>

/* 1626 base-1626 digits, then the 7 words used only for a 24-bit tail. */
#define ADS_FLUID__WORD_COUNT 1633
#define ADS_FLUID__WORD_BASE 1626
#define ADS_FLUID__WORD_MAXLEN 7
/* Hash slots: a power of two, about 2.5 times the word count. */
#define ADS_FLUID__WORD_SLOTS 4096

#define ADS_FLUID__EMOJI_COUNT 576
/* Every emoji of the table is U+1F000 + offset, offset < 4096, i.e. the
 * UTF-8 bytes F0 9F xx yy with offset = (xx & 0x3f) << 6 | (yy & 0x3f). */
#define ADS_FLUID__EMOJI_SPAN 4096

/* The words, NUL-padded to 8 bytes; a whole entry may be copied at once. */
extern const char ads_fluid__words[ADS_FLUID__WORD_COUNT][8];
extern const unsigned char ads_fluid__word_len[ADS_FLUID__WORD_COUNT];

/*
 * The word hash. A word's key is its bytes read as a little-endian integer,
 * zero-padded ("ego" = 0x6f6765): unique, and never 0. A word sits in the
 * slot ads_fluid__word_hash(key) or in the first free slot after it;
 * ads_fluid__word_slot_key holds the key of the word in each slot (0: empty)
 * and ads_fluid__word_slot its index + 1.
 */
extern const uint64_t ads_fluid__word_slot_key[ADS_FLUID__WORD_SLOTS];
extern const uint16_t ads_fluid__word_slot[ADS_FLUID__WORD_SLOTS];

/* The 4 UTF-8 bytes of each emoji, NUL-terminated. */
extern const char ads_fluid__emoji[ADS_FLUID__EMOJI_COUNT][5];

/* Code point - U+1F000 -> digit + 1, or 0 if that emoji is not a digit. */
extern const uint16_t ads_fluid__emoji_digit[ADS_FLUID__EMOJI_SPAN];

/* The slot where the search for a packed key starts. gen_tables.cmake does
 * the same arithmetic; change both together. */
static inline uint32_t ads_fluid__word_hash(uint64_t key)
{
    uint64_t x = (key ^ (key >> 25)) & 0xffffffffu;
    return (uint32_t)(((x * 0x6c8e9cf5u) & 0xffffffffu) >> 20);
}

#endif
