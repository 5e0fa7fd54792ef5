/*
 * idgen/idgen.h: identifiers for adstore, with no dependency on storage.
 *
 * Four families (see docs/identifiers.md for the user's view):
 *   1. ads_id: the 128-bit datastore identifier in three kinds, OUID (ordered),
 *      UUID (random) and LUID (increment), with its text forms;
 *   2. the clock-sequence state machine that makes OUIDs unique across clock
 *      steps back and backfills of old data (current and backfill tracks);
 *   3. FLUIDs (Flux RFC 19): 64-bit generator and six text encodings;
 *   4. k-ordered 64/96-bit ids (the uid scheme) and their text form.
 *
 * Generators are pure functions over a state value and an injectable clock:
 * the caller owns the state, so the engine can read and write it inside the
 * same transaction as the rows that use the ids, and tests can drive any
 * clock. Nothing in this module keeps a mutable global.
 *
 * Errors: functions that can fail return 0 or a negative ADS_E* code and fill
 * the ads_error (base/error.h) when one is given. Text-parsing errors set the
 * column (1-based byte offset in the input) of the offending character.
 */
#ifndef ADS_IDGEN_H
#define ADS_IDGEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../base/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Clock                                                                    */
/* ------------------------------------------------------------------------ */

/*
 * A wall clock. now_ns returns nanoseconds since 1970-01-01T00:00:00Z;
 * sleep_ns waits about ns nanoseconds (a test clock advances itself instead).
 * Generators call sleep_ns only when they must wait for time to pass (a
 * counter used up within its tick).
 */
typedef struct ads_clock {
    int64_t (*now_ns)(void *ctx);
    void (*sleep_ns)(void *ctx, int64_t ns);
    void *ctx;
} ads_clock;

/* The system clock: CLOCK_REALTIME and nanosleep. Never NULL. */
const ads_clock *ads_clock_system(void);

/* ------------------------------------------------------------------------ */
/* 128-bit identifiers                                                      */
/* ------------------------------------------------------------------------ */

/* One type for OUIDs, UUIDs and LUIDs; compared as one unsigned 128-bit number. */
typedef struct ads_id {
    uint64_t hi;
    uint64_t lo;
} ads_id;

typedef enum ads_id_kind {
    ADS_ID_ORDERED = 0,   /* OUID */
    ADS_ID_RANDOM = 1,    /* UUID */
    ADS_ID_INCREMENT = 2  /* LUID */
} ads_id_kind;

/* Longest text form written by ads_id_format, with '#', without the NUL. */
#define ADS_ID_TEXT_MAX 40

/* Kind from the bits: hi == 0 is a LUID, else bit 63 of lo set is a UUID,
 * else an OUID. */
static inline ads_id_kind ads_id_kind_of(ads_id id)
{
    if (id.hi == 0)
        return ADS_ID_INCREMENT;
    return (id.lo >> 63) ? ADS_ID_RANDOM : ADS_ID_ORDERED;
}

/* -1, 0 or 1 as a is below, equal to or above b (128-bit unsigned order). */
static inline int ads_id_cmp(ads_id a, ads_id b)
{
    if (a.hi != b.hi)
        return a.hi < b.hi ? -1 : 1;
    if (a.lo != b.lo)
        return a.lo < b.lo ? -1 : 1;
    return 0;
}

static inline bool ads_id_eq(ads_id a, ads_id b)
{
    return a.hi == b.hi && a.lo == b.lo;
}

/* "ordered", "random" or "increment". */
const char *ads_id_kind_name(ads_id_kind kind);

/*
 * Write the canonical text form of id into out (at least ADS_ID_TEXT_MAX + 1
 * bytes), NUL-terminated, with the leading '#'; returns its length. The form
 * follows the kind from the bits:
 *   OUID  #TTTTTTTT-CCCV-NNNNNNNNNNNN-S   (lower-case hex; T at least 8 digits,
 *         counter+version at least 4, node exactly 12, clock sequence at least 1)
 *   UUID  #xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx
 *   LUID  #1495 (decimal, no leading zeros)
 * Never fails. Bits that no generator makes (an OUID whose version is not 1)
 * are still written in full, but ads_id_parse rejects such text.
 */
size_t ads_id_format(char *out, ads_id id);

/* Flags for ads_id_parse. */
enum {
    ADS_ID_PARSE_HASH_OPTIONAL = 0, /* "#..." or "..." (id(), command line) */
    ADS_ID_PARSE_HASH_REQUIRED = 1  /* ClassAd source: must start with '#' */
};

/*
 * Parse the text form of an identifier (s, len bytes, need not be
 * NUL-terminated). Accepted forms, upper or lower case hex:
 *   4 groups T-CV-N-S: an OUID, each group 1..max digits (T <= 9, CV <= 7,
 *     N <= 12, S <= 4), version (V & 7) must be 1, node top bit must be 0;
 *   5 groups of lengths 8-4-4-4-12: a UUID; its variant digit (first of the
 *     fourth group) must be 8..f, which is what tells it from an OUID;
 *   5 groups of other lengths: an OUID whose node is split in two groups
 *     (together <= 12 digits), the legacy spelling;
 *   1 group of decimal digits (<= 20, value < 2^64): a LUID.
 * Errors: ADS_ESYNTAX for anything else, with err->column at the offending
 * byte (1-based, counting the '#') and a message saying what was expected;
 * ADS_ERANGE for a field too wide or a LUID over 2^64-1.
 */
int ads_id_parse(ads_id *out, const char *s, size_t len, int flags, ads_error *err);

/* The fields of an OUID. */
typedef struct ads_ouid_fields {
    uint64_t time;     /* 36 bits: seconds since the Unix epoch */
    uint32_t counter;  /* 24 bits: ids made in that second under (node, clockseq) */
    uint8_t version;   /* 3 bits: always 1 for ids adstore makes */
    bool backfill;     /* the V & 8 bit */
    uint64_t node;     /* 48-bit field; adstore nodes use 47 bits (top bit 0) */
    uint16_t clockseq; /* (k << 1) | current */
} ads_ouid_fields;

/* Split id into OUID fields (whatever its kind). Never fails. */
void ads_ouid_unpack(ads_ouid_fields *out, ads_id id);

/* Build an OUID from fields. ADS_ERANGE if a field does not fit its width
 * (time >= 2^36, counter >= 2^24, version > 7, node >= 2^47). */
int ads_ouid_pack(ads_id *out, const ads_ouid_fields *f, ads_error *err);

/* A LUID: hi = 0, lo = n. */
static inline ads_id ads_luid(uint64_t n)
{
    ads_id id = {0, n};
    return id;
}

/* A version-4 RFC 9562 UUID from getrandom(). ADS_EIO if the kernel's
 * random source fails. */
int ads_uuid_new(ads_id *out, ads_error *err);

/* n random UUIDs from one getrandom() call (faster for bulk). ADS_EIO. */
int ads_uuid_new_n(ads_id *out, size_t n, ads_error *err);

/* A new node id: 47 random bits from getrandom(), never 0. ADS_EIO. */
int ads_node_new(uint64_t *out, ads_error *err);

/* ------------------------------------------------------------------------ */
/* Clock sequences: the OUID generator state                                */
/* ------------------------------------------------------------------------ */

/* k is 15 bits wide and wraps from 32767 to 0 (docs/identifiers.md). */
#define ADS_CLOCKSEQ_K_MAX 0x7fffu
#define ADS_OUID_COUNTER_MAX 0xffffffu
#define ADS_OUID_TIME_MAX ((UINT64_C(1) << 36) - 1)

/* One track (current or backfill): its k, the union [lo, hi] of the seconds
 * it has issued ids for under k, and the last (T, C) issued. */
typedef struct ads_clock_track {
    uint16_t k;
    bool used;       /* false until the track issues its first id */
    uint64_t lo, hi; /* seconds */
    uint64_t last_t;
    uint32_t last_c;
} ads_clock_track;

/* Everything an OUID generator remembers. Persist it with the rows. */
typedef struct ads_idgen_state {
    uint64_t node; /* 47 bits */
    ads_clock_track current;
    ads_clock_track backfill;
    uint32_t steps_back; /* times the clock was seen going backwards */
} ads_idgen_state;

/* Size of the serialised state (ads_idgen_state_encode). */
#define ADS_IDGEN_STATE_BYTES 75

/* A fresh state for node (47 bits): both tracks unused, k = 0. */
void ads_idgen_state_init(ads_idgen_state *st, uint64_t node);

/* Serialise st into exactly ADS_IDGEN_STATE_BYTES bytes: a version byte,
 * then fixed-width little-endian fields. Never fails. */
void ads_idgen_state_encode(uint8_t out[ADS_IDGEN_STATE_BYTES], const ads_idgen_state *st);

/* Read a serialised state. ADS_ECORRUPT if len or a field is wrong,
 * ADS_EVERSION for an unknown version byte. */
int ads_idgen_state_decode(ads_idgen_state *out, const uint8_t *in, size_t len,
                           ads_error *err);

/* Returned (positive) by ads_ouid_next when it saw the clock go backwards and
 * took a new k: the id is valid; the event is worth a log line. */
#define ADS_IDGEN_CLOCK_STEPPED_BACK 1

/*
 * The next current OUID for st, reading time from clock (NULL: the system
 * clock). Within one second the counter counts up; when it would pass 2^24-1
 * the call waits for the next second. If now is before the track's range (the
 * clock went back, or the state came from the future) it takes a new k.
 * Returns 0, ADS_IDGEN_CLOCK_STEPPED_BACK, or ADS_ERANGE if the clock reads a
 * time outside 36 bits of seconds.
 */
int ads_ouid_next(ads_id *out, ads_idgen_state *st, const ads_clock *clock, ads_error *err);

/*
 * As ads_ouid_next at a given second, without a clock: the pure core.
 * Returns ADS_ELIMIT (and changes nothing) when the counter for that second
 * is used up; the caller must try again with a later second.
 */
int ads_ouid_next_at(ads_id *out, ads_idgen_state *st, uint64_t now, ads_error *err);

/*
 * One backfill batch. Begin takes the batch's time range [lo, hi] in seconds:
 * if it overlaps the backfill track's range, k advances and the range becomes
 * [lo, hi]; otherwise k stays and the range widens to cover [lo, hi]. Each id
 * of the batch then takes the record's own second t in [lo, hi]; counters
 * start at 0 for each second within the batch. The batch keeps the per-second
 * counters (heap memory, freed by ads_backfill_end); the state is passed to
 * each call so the caller keeps owning it.
 */
typedef struct ads_backfill ads_backfill;

/* ADS_EINVAL if lo > hi; ADS_ERANGE if hi >= 2^36; ADS_ENOMEM. */
int ads_backfill_begin(ads_backfill **out, ads_idgen_state *st, uint64_t lo, uint64_t hi,
                       ads_error *err);

/* The next backfill id for second t. ADS_ERANGE if t is outside the batch's
 * range; ADS_ELIMIT if the batch already made 2^24 ids in second t (split the
 * batch); ADS_ENOMEM. */
int ads_backfill_next(ads_id *out, ads_backfill *b, ads_idgen_state *st, uint64_t t,
                      ads_error *err);

/* Free the batch. NULL is allowed. */
void ads_backfill_end(ads_backfill *b);

/*
 * A self-contained OUID generator for programs without a store: it holds the
 * state in memory. It is fork-aware: in a child process created by fork() it
 * draws a new node id before its first id (a child is a new node), so parent
 * and child never repeat each other's ids. Not thread-safe: one per thread,
 * or a lock around it. Persist ads_ouid_gen_state() if ids must stay unique
 * across restarts.
 */
typedef struct ads_ouid_gen ads_ouid_gen;

/* initial: a state to continue (NULL: a fresh state with a new random node);
 * clock: NULL for the system clock (the clock is copied). ADS_ENOMEM, ADS_EIO. */
int ads_ouid_gen_new(ads_ouid_gen **out, const ads_idgen_state *initial,
                     const ads_clock *clock, ads_error *err);

/* As ads_ouid_next on the generator's state (0 or ADS_IDGEN_CLOCK_STEPPED_BACK,
 * or a negative code). */
int ads_ouid_gen_next(ads_id *out, ads_ouid_gen *g, ads_error *err);

/* Copy out the current state (to persist it). */
void ads_ouid_gen_state(ads_idgen_state *out, const ads_ouid_gen *g);

void ads_ouid_gen_free(ads_ouid_gen *g);

/* ------------------------------------------------------------------------ */
/* FLUIDs (Flux RFC 19): ts:40 | generator:14 | seq:10                       */
/* ------------------------------------------------------------------------ */

typedef enum ads_fluid_enc {
    ADS_FLUID_DEC = 0,      /* 6731191091817518 */
    ADS_FLUID_HEX = 1,      /* 0x17e9fb8df16c2e */
    ADS_FLUID_DOTHEX = 2,   /* 0017.e9fb.8df1.6c2e */
    ADS_FLUID_F58 = 3,      /* ƒuZZybuNNy (U+0192 prefix) */
    ADS_FLUID_F58PLAIN = 4, /* fuZZybuNNy (ASCII prefix) */
    ADS_FLUID_WORDS = 5,    /* reform-remote-galileo--heart-package-academy */
    ADS_FLUID_EMOJI = 6     /* base 576 over the RFC's emoji table */
} ads_fluid_enc;

#define ADS_FLUID_ENC_COUNT 7

/* Longest encoding written, in bytes, without the NUL (words is longest). */
#define ADS_FLUID_TEXT_MAX 64

#define ADS_FLUID_GENERATOR_MAX 16383u
#define ADS_FLUID_SEQ_MAX 1023u
#define ADS_FLUID_TS_MAX ((UINT64_C(1) << 40) - 1)

/* "dec", "hex", "dothex", "f58", "f58plain", "words", "emoji". */
const char *ads_fluid_enc_name(ads_fluid_enc enc);

/* The encoding named name (as ads_fluid_enc_name). ADS_EINVAL if unknown,
 * with a message listing the names. */
int ads_fluid_enc_parse(ads_fluid_enc *out, const char *name, ads_error *err);

/*
 * Write value in encoding enc into out (cap bytes, ADS_FLUID_TEXT_MAX + 1 is
 * always enough), NUL-terminated. Returns the length written (>= 1), or
 * ADS_EINVAL for an unknown enc or a buffer too small.
 */
int ads_fluid_encode(char *out, size_t cap, uint64_t value, ads_fluid_enc enc,
                     ads_error *err);

/*
 * Decode s (len bytes) choosing the encoding by shape, in the RFC's order:
 * contains '.' -> dothex; else contains '-' -> words; else starts with 'ƒ' or
 * 'f' -> F58; else starts with bytes F0 9F -> emoji; else starts with "0x" ->
 * hex; else decimal. Leading and trailing white space is ignored. Strict:
 * values over 2^64-1, dothex groups that are not 1..4 hex digits, unknown or
 * extra words, the seven 24-bit-tail words, bytes >= 0x80 in F58 digits, and
 * anything else malformed are ADS_ESYNTAX or ADS_ERANGE with a message naming
 * the encoding and err->column at the offending byte.
 * If enc_out is not NULL it receives the encoding that was chosen.
 */
int ads_fluid_decode(uint64_t *out, ads_fluid_enc *enc_out, const char *s, size_t len,
                     ads_error *err);

/*
 * Decode s as the one encoding enc (what `fluid decode --from ENC` does):
 * white space trimmed as above, the same strict rules; f58 and f58plain each
 * accept either prefix; hex needs its "0x". Text of another shape is an error
 * naming what was expected (ADS_ESYNTAX, ADS_ERANGE); ADS_EINVAL for an
 * unknown enc.
 */
int ads_fluid_decode_as(uint64_t *out, ads_fluid_enc enc, const char *s, size_t len,
                        ads_error *err);

/* Split a FLUID into its fields. */
static inline void ads_fluid_unpack(uint64_t fluid, uint64_t *ts, uint32_t *generator,
                                    uint32_t *seq)
{
    *ts = fluid >> 24;
    *generator = (uint32_t)((fluid >> 10) & 0x3fff);
    *seq = (uint32_t)(fluid & 0x3ff);
}

/*
 * adstore's FLUID epoch: 2020-01-01T00:00:00Z in ms since the Unix epoch. The
 * 40-bit timestamp holds 34.8 years of ms, so a Unix-epoch FLUID overflowed in
 * 2004 and cannot date today; with this fixed epoch every adstore FLUID reads
 * as wall time (epoch + ts) until 2054-11-03, and FLUIDs of different stores
 * compare by time. Used by the store's generators (docs/identifiers.md).
 */
#define ADS_FLUID_EPOCH_ADSTORE_MS UINT64_C(1577836800000)

/* FLUID generator state: the epoch, the generator id, and the last
 * timestamp and sequence issued. Persist it so a restart never repeats ids. */
typedef struct ads_fluid_state {
    uint64_t epoch_ms;  /* ms since the Unix epoch where ts = 0 */
    uint32_t generator; /* 0..16383 */
    uint64_t last_ts;   /* ms since epoch_ms of the last id issued */
    uint32_t seq;       /* sequence of the last id issued */
    bool used;          /* false until the first id */
} ads_fluid_state;

/* ADS_ERANGE if generator >= 16384 (the message names the limit). */
int ads_fluid_state_init(ads_fluid_state *st, uint32_t generator, uint64_t epoch_ms,
                         ads_error *err);

/*
 * The next FLUID: ts = max(clock - epoch, last_ts) in ms; up to 1024 ids per
 * ms, then it waits (clock->sleep_ns) for the next ms. Never goes backwards.
 * If the clock is behind last_ts when a ms is used up (it stepped back), it
 * takes the next ms at once instead of waiting for the clock to catch up.
 * clock NULL: the system clock. A clock before the epoch counts as ts 0 (and
 * then as last_ts). ADS_ERANGE if ts would pass 2^40-1 (the generator is worn
 * out: 34.8 years after its epoch).
 */
int ads_fluid_next(uint64_t *out, ads_fluid_state *st, const ads_clock *clock,
                   ads_error *err);

/* ------------------------------------------------------------------------ */
/* k-ordered 64/96-bit ids (the uid scheme)                                 */
/* ------------------------------------------------------------------------ */

/*
 * Fields: A = megaseconds, B = seconds within the megasecond (0..999999),
 * C = microseconds within the second (0..999999; stored as C >> 10, so it
 * reads back with its low 10 bits zero), seq 0..16383, node (global only).
 * local  64 bits: A:20 | B:20 | C>>10:10 | seq:14
 * global 96 bits: A:20 | B>>I:(20-I) | node:32 | B&(2^I-1):I | C>>10:10 | seq:14
 * I, the neighbourhood interval, is 5..10 (default 8).
 */
typedef struct ads_kid_fields {
    uint32_t a, b, c, seq;
    uint32_t node;
} ads_kid_fields;

#define ADS_KID_LOCAL_BYTES 8
#define ADS_KID_GLOBAL_BYTES 12
#define ADS_KID_LOCAL_TEXT 11
#define ADS_KID_GLOBAL_TEXT 16
#define ADS_KID_INTERVAL_DEFAULT 8
#define ADS_KID_SEQ_MAX 16383u

/* Pack fields into 8 big-endian bytes. ADS_ERANGE if a field is too wide
 * (a >= 2^20, b or c > 999999, seq >= 2^14). */
int ads_kid_pack_local(uint8_t out[ADS_KID_LOCAL_BYTES], const ads_kid_fields *f,
                       ads_error *err);

/* Pack into 12 big-endian bytes with interval I. ADS_ERANGE as above, or if
 * I is outside 5..10. */
int ads_kid_pack_global(uint8_t out[ADS_KID_GLOBAL_BYTES], const ads_kid_fields *f,
                        unsigned interval, ads_error *err);

/* Unpack. ADS_ERANGE if the bytes hold b or c over 999999 (not a kid), or I is
 * outside 5..10. */
int ads_kid_unpack_local(ads_kid_fields *out, const uint8_t in[ADS_KID_LOCAL_BYTES],
                         ads_error *err);
int ads_kid_unpack_global(ads_kid_fields *out, const uint8_t in[ADS_KID_GLOBAL_BYTES],
                          unsigned interval, ads_error *err);

/*
 * Text form: the order-preserving alphabet
 * ".0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz", 6-bit
 * groups of the bytes big-endian, the last group padded with zero bits, no
 * padding characters: 11 characters for 8 bytes, 16 for 12. Text order equals
 * byte order. encode writes n*8/6 rounded up characters and a NUL into out
 * (cap bytes); returns the length or ADS_EINVAL (n not 8 or 12, cap small).
 */
int ads_kid_encode(char *out, size_t cap, const uint8_t *bytes, size_t n, ads_error *err);

/* Decode 11 characters into 8 bytes or 16 into 12; *n_out receives 8 or 12.
 * ADS_ESYNTAX with the column for a character outside the alphabet, a wrong
 * length, or non-zero padding bits. out must hold 12 bytes. */
int ads_kid_decode(uint8_t *out, size_t *n_out, const char *s, size_t len, ads_error *err);

/* Generator state: the last tick ((seconds << 10) | (microseconds >> 10))
 * and the sequence issued in it. Persist it to stay unique across restarts. */
typedef struct ads_kid_state {
    uint64_t last_tick;
    uint32_t seq;
    bool used;
} ads_kid_state;

/*
 * The next k-ordered fields from clock (NULL: the system clock): seq resets
 * to 0 each new tick and counts up within a tick; when 16384 ids were made in
 * one tick it waits for the next tick (no wrap). Never goes backwards: if the
 * clock is behind the last tick it keeps issuing in the last tick, and when
 * that is used up takes the next tick at once (no wait for the clock to catch
 * up). node is copied into the fields for global ids. Errors: ADS_EINVAL
 * (NULL), ADS_ERANGE (a state holding an impossible tick, or a time past 20
 * bits of megaseconds).
 */
int ads_kid_next(ads_kid_fields *out, ads_kid_state *st, uint32_t node,
                 const ads_clock *clock, ads_error *err);

#ifdef __cplusplus
}
#endif
#endif
