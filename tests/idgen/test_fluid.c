/*
 * tests/idgen/test_fluid.c: FLUIDs (idgen/fluid.c): the six text encodings
 * against the known vectors of shared/spec/identifiers.md section 4 and
 * shared/spec/vectors/ids.tsv, strict decoding (every rejection with its
 * message and column), random round trips, and the generator driven by a fake
 * clock.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "idgen/fluid_tables.h"
#include "idgen/idgen.h"

/* ------------------------------------------------------------------------ */
/* Helpers                                                                  */
/* ------------------------------------------------------------------------ */

static const ads_fluid_enc all_encs[ADS_FLUID_ENC_COUNT] = {
    ADS_FLUID_DEC,      ADS_FLUID_HEX,   ADS_FLUID_DOTHEX, ADS_FLUID_F58,
    ADS_FLUID_F58PLAIN, ADS_FLUID_WORDS, ADS_FLUID_EMOJI,
};

static void assert_encodes(uint64_t value, ads_fluid_enc enc, const char *expected)
{
    char buf[ADS_FLUID_TEXT_MAX + 1];
    ads_error err;
    int n;

    ads_error_clear(&err);
    n = ads_fluid_encode(buf, sizeof buf, value, enc, &err);
    if (n < 0)
        fail_msg("encode %llu as %s failed: %s", (unsigned long long)value,
                 ads_fluid_enc_name(enc), err.message);
    if (strcmp(buf, expected) != 0)
        fail_msg("encode %llu as %s: got '%s', expected '%s'", (unsigned long long)value,
                 ads_fluid_enc_name(enc), buf, expected);
    assert_int_equal(n, (int)strlen(expected));
}

static void assert_decodes(const char *text, uint64_t expected)
{
    uint64_t v = 0;
    ads_error err;
    int rc;

    ads_error_clear(&err);
    rc = ads_fluid_decode(&v, NULL, text, strlen(text), &err);
    if (rc != 0)
        fail_msg("decode '%s' failed: %s", text, err.message);
    if (v != expected)
        fail_msg("decode '%s': got %llu, expected %llu", text, (unsigned long long)v,
                 (unsigned long long)expected);
}

/* Decode text (len bytes) expecting failure with code, message and column. */
static void assert_rejects_n(const char *text, size_t len, int code, const char *message,
                             int column)
{
    uint64_t v = UINT64_C(0xdeadbeef);
    ads_error err;
    int rc;

    ads_error_clear(&err);
    rc = ads_fluid_decode(&v, NULL, text, len, &err);
    if (rc == 0)
        fail_msg("decode '%.*s' succeeded with %llu, expected an error", (int)len, text,
                 (unsigned long long)v);
    assert_int_equal(rc, code);
    assert_int_equal(err.code, code);
    assert_string_equal(err.message, message);
    assert_int_equal(err.column, column);
    assert_int_equal(err.line, 1);
    /* The output is left alone on error. */
    assert_true(v == UINT64_C(0xdeadbeef));
}

static void assert_rejects(const char *text, int code, const char *message, int column)
{
    assert_rejects_n(text, strlen(text), code, message, column);
}

/* A seeded xorshift64* generator: the same values on every run. */
static uint64_t rng_state = UINT64_C(0x9e3779b97f4a7c15);

static uint64_t rng_next(void)
{
    uint64_t x = rng_state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    rng_state = x;
    return x * UINT64_C(0x2545f4914f6cdd1d);
}

/* Values of every magnitude: a random value shifted right by a random amount. */
static uint64_t rng_value(void)
{
    uint64_t v = rng_next();
    return v >> (rng_next() % 64);
}

/* ------------------------------------------------------------------------ */
/* Vectors from shared/spec/vectors/ids.tsv (fluid-encode, fluid-decode)    */
/* ------------------------------------------------------------------------ */

struct enc_vector {
    ads_fluid_enc enc;
    uint64_t value;
    const char *text;
};

struct dec_vector {
    const char *text;
    bool ok;
    uint64_t value;
};

/* Every fluid line of ids.tsv, except two that come from flux-core's
 * codec-specific tests and do not hold for the shape-choosing decoder:
 * "1234" -> ERR (an F58-only decoder's test; as a whole it is decimal 1234)
 * and "ƒ1234" -> ERR (a basemoji-only decoder's test; it is F58 3483). Both
 * are checked in decode_1234_and_f1234_follow_the_shape_rules. */
static const struct enc_vector enc_vectors[] = {
    {ADS_FLUID_F58, UINT64_C(0), "ƒ1"},
    {ADS_FLUID_F58PLAIN, UINT64_C(0), "f1"},
    {ADS_FLUID_F58, UINT64_C(1), "ƒ2"},
    {ADS_FLUID_F58PLAIN, UINT64_C(1), "f2"},
    {ADS_FLUID_F58, UINT64_C(1234), "ƒNH"},
    {ADS_FLUID_F58PLAIN, UINT64_C(1234), "fNH"},
    {ADS_FLUID_F58, UINT64_C(1888), "ƒZZ"},
    {ADS_FLUID_F58, UINT64_C(3363), "ƒzz"},
    {ADS_FLUID_F58PLAIN, UINT64_C(3363), "fzz"},
    {ADS_FLUID_F58PLAIN, UINT64_C(3364), "f211"},
    {ADS_FLUID_F58, UINT64_C(4369), "ƒ2JL"},
    {ADS_FLUID_F58PLAIN, UINT64_C(4369), "f2JL"},
    {ADS_FLUID_F58, UINT64_C(65535), "ƒLUv"},
    {ADS_FLUID_F58PLAIN, UINT64_C(65535), "fLUv"},
    {ADS_FLUID_F58PLAIN, UINT64_C(4294967295), "f7YXq9G"},
    {ADS_FLUID_F58, UINT64_C(633528662), "ƒxyzzy"},
    {ADS_FLUID_F58PLAIN, UINT64_C(633528662), "fxyzzy"},
    {ADS_FLUID_F58, UINT64_C(6731191091817518), "ƒuZZybuNNy"},
    {ADS_FLUID_F58PLAIN, UINT64_C(6731191091817518), "fuZZybuNNy"},
    {ADS_FLUID_F58, UINT64_C(18446744073709551614), "ƒjpXCZedGfVP"},
    {ADS_FLUID_F58PLAIN, UINT64_C(18446744073709551614), "fjpXCZedGfVP"},
    {ADS_FLUID_F58, UINT64_C(18446744073709551615), "ƒjpXCZedGfVQ"},
    {ADS_FLUID_F58PLAIN, UINT64_C(18446744073709551615), "fjpXCZedGfVQ"},
    {ADS_FLUID_EMOJI, UINT64_C(0), "😃"},
    {ADS_FLUID_EMOJI, UINT64_C(1), "😄"},
    {ADS_FLUID_EMOJI, UINT64_C(65535), "💁📚"},
    {ADS_FLUID_EMOJI, UINT64_C(2034152287593), "😪🏭🐭🍑👨"},
    {ADS_FLUID_EMOJI, UINT64_C(21900760568561664), "🎆🍧🎆🐾🕓😃"},
    {ADS_FLUID_EMOJI, UINT64_C(18446744073709551615), "🚹💗💧👗😷📷📚"},
    {ADS_FLUID_DEC, UINT64_C(0), "0"},
    {ADS_FLUID_HEX, UINT64_C(0), "0x0"},
    {ADS_FLUID_DOTHEX, UINT64_C(0), "0000.0000.0000.0000"},
    {ADS_FLUID_WORDS, UINT64_C(0), "academy-academy-academy--academy-academy-academy"},
    {ADS_FLUID_HEX, UINT64_C(1), "0x1"},
    {ADS_FLUID_DOTHEX, UINT64_C(1), "0000.0000.0000.0001"},
    {ADS_FLUID_WORDS, UINT64_C(1), "acrobat-academy-academy--academy-academy-academy"},
    {ADS_FLUID_DEC, UINT64_C(65535), "65535"},
    {ADS_FLUID_DOTHEX, UINT64_C(65535), "0000.0000.0000.ffff"},
    {ADS_FLUID_DEC, UINT64_C(6787342413402046), "6787342413402046"},
    {ADS_FLUID_HEX, UINT64_C(6787342413402046), "0x181d0d4d850fbe"},
    {ADS_FLUID_DOTHEX, UINT64_C(6787342413402046), "0018.1d0d.4d85.0fbe"},
    {ADS_FLUID_DOTHEX, UINT64_C(18446744073709551614), "ffff.ffff.ffff.fffe"},
    {ADS_FLUID_WORDS, UINT64_C(358042566656), "vertigo-elite-postage--brazil-academy-academy"},
    {ADS_FLUID_F58, UINT64_C(32031692986253312), "ƒ5K8DFzpK2P"},
    {ADS_FLUID_F58, UINT64_C(32031603597246464), "ƒ5K8AuopHZ9"},
    {ADS_FLUID_EMOJI, UINT64_C(57), "🙊"},
    {ADS_FLUID_DOTHEX, UINT64_C(1234), "0000.0000.0000.04d2"},
    {ADS_FLUID_WORDS, UINT64_C(1234), "turtle-academy-academy--academy-academy-academy"},
    {ADS_FLUID_DOTHEX, UINT64_C(1888), "0000.0000.0000.0760"},
    {ADS_FLUID_EMOJI, UINT64_C(1888), "😆🐻"},
    {ADS_FLUID_DOTHEX, UINT64_C(3363), "0000.0000.0000.0d23"},
    {ADS_FLUID_WORDS, UINT64_C(3363), "carlo-active-academy--academy-academy-academy"},
    {ADS_FLUID_EMOJI, UINT64_C(3363), "😂📍"},
    {ADS_FLUID_DOTHEX, UINT64_C(3364), "0000.0000.0000.0d24"},
    {ADS_FLUID_EMOJI, UINT64_C(3364), "😂📎"},
    {ADS_FLUID_DOTHEX, UINT64_C(4369), "0000.0000.0000.1111"},
    {ADS_FLUID_DOTHEX, UINT64_C(12342435), "0000.0000.00bc.54a3"},
    {ADS_FLUID_WORDS, UINT64_C(12342435), "enigma-cubic-adam--academy-academy-academy"},
    {ADS_FLUID_F58, UINT64_C(12342435), "ƒ26Fyc"},
    {ADS_FLUID_WORDS, UINT64_C(633528662), "apollo-sabrina-elastic--academy-academy-academy"},
    {ADS_FLUID_DOTHEX, UINT64_C(4294901760), "0000.0000.ffff.0000"},
    {ADS_FLUID_EMOJI, UINT64_C(4294901760), "😳🏪👩👘"},
    {ADS_FLUID_F58, UINT64_C(4294901760), "ƒ7YXVfM"},
    {ADS_FLUID_DOTHEX, UINT64_C(4294967295), "0000.0000.ffff.ffff"},
    {ADS_FLUID_WORDS, UINT64_C(4294967295), "natural-analyze-verbal--academy-academy-academy"},
    {ADS_FLUID_EMOJI, UINT64_C(4294967295), "😳🏪🍖🍸"},
    {ADS_FLUID_EMOJI, UINT64_C(358042566656), "😆🐺🕔🌟🏃"},
    {ADS_FLUID_DOTHEX, UINT64_C(2034152287593), "0000.01d9.9cec.ad69"},
    {ADS_FLUID_F58, UINT64_C(2034152287593), "ƒvSA5BJQ"},
    {ADS_FLUID_DOTHEX, UINT64_C(14436593041408), "0000.0d21.4800.0000"},
    {ADS_FLUID_WORDS, UINT64_C(14436593041408), "galileo-mike-miami--carbon-active-academy"},
    {ADS_FLUID_DOTHEX, UINT64_C(14461356212224), "0000.0d27.0c00.0000"},
    {ADS_FLUID_EMOJI, UINT64_C(14461356212224), "🏂🌽💗🍧📓"},
    {ADS_FLUID_EMOJI, UINT64_C(281470681743360), "😅🍶👺🍜🐸👘"},
    {ADS_FLUID_F58, UINT64_C(281470681743360), "ƒ3CUkwJ61d"},
    {ADS_FLUID_WORDS, UINT64_C(281483566841860), "point-cecilia-academy--nirvana-archive-academy"},
    {ADS_FLUID_F58, UINT64_C(281483566841860), "ƒ3CV6ZuatK"},
    {ADS_FLUID_DOTHEX, UINT64_C(2814797012533261), "000a.000b.000c.000d"},
    {ADS_FLUID_EMOJI, UINT64_C(2814797012533261), "👽🍱🕓😁🍒🍈"},
    {ADS_FLUID_WORDS, UINT64_C(4181414752813056), "random-idea-yoyo--sugar-printer-academy"},
    {ADS_FLUID_DOTHEX, UINT64_C(6731191091817518), "0017.e9fb.8df1.6c2e"},
    {ADS_FLUID_WORDS, UINT64_C(6731191091817518), "reform-remote-galileo--heart-package-academy"},
    {ADS_FLUID_EMOJI, UINT64_C(6731191091817518), "👩💅📓😸👑🚓"},
    {ADS_FLUID_WORDS, UINT64_C(8213253243011072), "peace-turbo-barcode--cement-pretend-academy"},
    {ADS_FLUID_EMOJI, UINT64_C(8213253243011072), "💃🚥🔐🌛🍬🔞"},
    {ADS_FLUID_F58, UINT64_C(8213253243011072), "ƒ278oEf7zGf"},
    {ADS_FLUID_DOTHEX, UINT64_C(21900760568561664), "004d.cea0.2e00.0000"},
    {ADS_FLUID_WORDS, UINT64_C(21900760568561664), "garlic-ohio-forum--analog-raja-acrobat"},
    {ADS_FLUID_F58, UINT64_C(21900760568561664), "ƒ3x1tqtp8Mu"},
    {ADS_FLUID_WORDS, UINT64_C(32031603597246464), "loyal-demo-love--famous-druid-active"},
    {ADS_FLUID_EMOJI, UINT64_C(32031603597246464), "🚹💂🙌😳💱🏃"},
    {ADS_FLUID_DOTHEX, UINT64_C(32031692986253312), "0071.cca7.b200.0000"},
    {ADS_FLUID_WORDS, UINT64_C(32031692986253312), "harbor-domingo-isabel--hexagon-druid-active"},
    {ADS_FLUID_EMOJI, UINT64_C(32031692986253312), "🚹💂🈳💰🎩🏃"},
    {ADS_FLUID_DOTHEX, UINT64_C(39601885002334208), "008c.b1b4.6000.0000"},
    {ADS_FLUID_WORDS, UINT64_C(39601885002334208), "spain-garage-puma--gilbert-yogurt-actor"},
    {ADS_FLUID_EMOJI, UINT64_C(39601885002334208), "😄😹🎇📥🏧🙉🔞"},
    {ADS_FLUID_DOTHEX, UINT64_C(18446462598732840960), "ffff.0000.0000.0000"},
    {ADS_FLUID_WORDS, UINT64_C(18446462598732840960), "academy-academy-academy--reserve-virtual-verbal"},
    {ADS_FLUID_EMOJI, UINT64_C(18446462598732840960), "🚹💌👎🕑👏👺👘"},
    {ADS_FLUID_F58, UINT64_C(18446462598732840960), "ƒjpV15n9SkLX"},
    {ADS_FLUID_DOTHEX, UINT64_C(18446743892750589633), "ffff.ffd5.de01.5ec1"},
    {ADS_FLUID_DOTHEX, UINT64_C(18446744073709551615), "ffff.ffff.ffff.ffff"},
    {ADS_FLUID_WORDS, UINT64_C(18446744073709551615), "natural-analyze-verbal--natural-analyze-verbal"},
};

static const struct dec_vector dec_vectors[] = {
    {"ƒ1", true, UINT64_C(0)},
    {"ƒz", true, UINT64_C(57)},
    {"ƒNH", true, UINT64_C(1234)},
    {"ƒZZ", true, UINT64_C(1888)},
    {"ƒzz", true, UINT64_C(3363)},
    {"ƒ211", true, UINT64_C(3364)},
    {"ƒ2JL", true, UINT64_C(4369)},
    {"ƒLUv", true, UINT64_C(65535)},
    {"ƒ7YXq9G", true, UINT64_C(4294967295)},
    {"ƒxyzzy", true, UINT64_C(633528662)},
    {"ƒuZZybuNNy", true, UINT64_C(6731191091817518)},
    {"ƒjpXCZedGfVP", true, UINT64_C(18446744073709551614)},
    {"ƒjpXCZedGfVQ", true, UINT64_C(18446744073709551615)},
    {"f2", true, UINT64_C(1)},
    {"fz", true, UINT64_C(57)},
    {"fNH", true, UINT64_C(1234)},
    {"fZZ", true, UINT64_C(1888)},
    {"fzz", true, UINT64_C(3363)},
    {"fLUv", true, UINT64_C(65535)},
    {"f7YXq9G", true, UINT64_C(4294967295)},
    {"fxyzzy", true, UINT64_C(633528662)},
    {"fjpXCZedGfVP", true, UINT64_C(18446744073709551614)},
    {"fjpXCZedGfVQ", true, UINT64_C(18446744073709551615)},
    {"aaa", false, 0},
    {"f", false, 0},
    {"flux", false, 0},
    {"f1230", false, 0},
    {"x1", false, 0},
    {"1888", true, UINT64_C(1888)},
    {"3364", true, UINT64_C(3364)},
    {"4369", true, UINT64_C(4369)},
    {"6731191091817518", true, UINT64_C(6731191091817518)},
    {"18446744073709551614", true, UINT64_C(18446744073709551614)},
    {"18446744073709551615", true, UINT64_C(18446744073709551615)},
    {"0x0", true, UINT64_C(0)},
    {"0x1", true, UINT64_C(1)},
    {"0xd23", true, UINT64_C(3363)},
    {"0x1111", true, UINT64_C(4369)},
    {"0x17e9fb8df16c2e", true, UINT64_C(6731191091817518)},
    {"0xffffffffffffffff", true, UINT64_C(18446744073709551615)},
    {"0.0.0.0", true, UINT64_C(0)},
    {"0.0.0.0039", true, UINT64_C(57)},
    {"0000.0000.0000.04d2", true, UINT64_C(1234)},
    {"0000.0000.0000.1111", true, UINT64_C(4369)},
    {"ffff.ffff.ffff.ffff", true, UINT64_C(18446744073709551615)},
    {"ffff.0000.0000.0000", true, UINT64_C(18446462598732840960)},
    {"0000.0000.ffff.0000", true, UINT64_C(4294901760)},
    {"0000.0000.0000.ffff", true, UINT64_C(65535)},
    {"a.b.c.d", true, UINT64_C(2814797012533261)},
    {"1.2.3.4", true, UINT64_C(281483566841860)},
    {"😄", true, UINT64_C(1)},
    {"🙊", true, UINT64_C(57)},
    {"😁👌", true, UINT64_C(1234)},
    {"😆🐻", true, UINT64_C(1888)},
    {"😊🌀", true, UINT64_C(4369)},
    {"💁📚", true, UINT64_C(65535)},
    {"🚹💗💧👗😷📷📚", true, UINT64_C(18446744073709551615)},
    {"", false, 0},
    {"boo", false, 0},
    {"-1", false, 0},
    {"0.0.0.", false, 0},
    {".0.0.0", false, 0},
    {"fI", false, 0},
    {"foo-bar-baz--qux-quux-corge", false, 0},
    {"🦄", false, 0},
    {"bogus", false, 0},
    {"a-a-a--a-a-a", false, 0},
    {"😠🙇📍", true, UINT64_C(12342435)},
    {"🎆🍧🎆🐾🕓😃", true, UINT64_C(21900760568561664)},
    {"reform-remote-galileo--heart-package-academy", true, UINT64_C(6731191091817518)},
    {"0xedaf97d000000", true, UINT64_C(4181414752813056)},
    {"000e.daf9.7d00.0000", true, UINT64_C(4181414752813056)},
    {"ƒ278oEf7zGf", true, UINT64_C(8213253243011072)},
    {"reform-remote-galileo--heart-package", false, 0},
    {"reform-remote-galileo--heart-package-ego", false, 0},
    {"acro-academy-academy--academy-academy-academy", false, 0},
    {"fjpXCZedGfVR", false, 0},
    {"fzzzzzzzzzzzz", false, 0},
    {"fzzzzzzzzzzzzz", false, 0},
    {"f111111111111", true, UINT64_C(0)},
    {"ƒ", false, 0},
    {"ffff", true, UINT64_C(130074)},
    {"f123", true, UINT64_C(60)},
    {"😃😃😃😃😃😃😃", true, UINT64_C(0)},
    {"FFFF.FFFF.FFFF.FFFF", true, UINT64_C(18446744073709551615)},
    {"0.0.0.0x1", false, 0},
    {"00000.0.0.0", false, 0},
    {"0x", false, 0},
    {"0x1ffffffffffffffff", false, 0},
    {"1 2", false, 0},
    {"123abc", false, 0},
    {" 0.0.0.1", true, UINT64_C(1)},
    {"😄 ", true, UINT64_C(1)},
    {"  42  ", true, UINT64_C(42)},
    {"😃x", false, 0},
};

static void fluid__encode_matches_tsv_vectors(void **state)
{
    size_t i;
    (void)state;
    for (i = 0; i < sizeof enc_vectors / sizeof enc_vectors[0]; i++)
        assert_encodes(enc_vectors[i].value, enc_vectors[i].enc, enc_vectors[i].text);
}

static void fluid__decode_matches_tsv_vectors(void **state)
{
    size_t i;
    (void)state;
    for (i = 0; i < sizeof dec_vectors / sizeof dec_vectors[0]; i++) {
        const struct dec_vector *t = &dec_vectors[i];
        uint64_t v = 0;
        ads_error err;
        int rc;

        ads_error_clear(&err);
        rc = ads_fluid_decode(&v, NULL, t->text, strlen(t->text), &err);
        if (t->ok && rc != 0)
            fail_msg("decode '%s' failed: %s", t->text, err.message);
        if (t->ok && v != t->value)
            fail_msg("decode '%s': got %llu, expected %llu", t->text, (unsigned long long)v,
                     (unsigned long long)t->value);
        if (!t->ok && rc == 0)
            fail_msg("decode '%s' gave %llu, expected an error", t->text,
                     (unsigned long long)v);
        if (!t->ok) {
            assert_true(rc == ADS_ESYNTAX || rc == ADS_ERANGE);
            assert_true(strncmp(err.message, "FLUID", 5) == 0);
            assert_true(err.column >= 1);
        }
    }
}

static void fluid__decode_1234_and_f1234_follow_the_shape_rules(void **state)
{
    ads_fluid_enc enc;
    uint64_t v;
    (void)state;
    assert_int_equal(ads_fluid_decode(&v, &enc, "1234", 4, NULL), 0);
    assert_int_equal(enc, ADS_FLUID_DEC);
    assert_true(v == 1234);
    assert_int_equal(ads_fluid_decode(&v, &enc, "ƒ1234", strlen("ƒ1234"), NULL), 0);
    assert_int_equal(enc, ADS_FLUID_F58);
    assert_true(v == 3483); /* 0*58^3 + 1*58^2 + 2*58 + 3 */
}

/* ------------------------------------------------------------------------ */
/* Known vectors of identifiers.md section 4                                */
/* ------------------------------------------------------------------------ */

static void fluid__encode_spec_vector_in_every_encoding(void **state)
{
    const uint64_t v = UINT64_C(6731191091817518);
    (void)state;
    assert_encodes(v, ADS_FLUID_DEC, "6731191091817518");
    assert_encodes(v, ADS_FLUID_HEX, "0x17e9fb8df16c2e");
    assert_encodes(v, ADS_FLUID_DOTHEX, "0017.e9fb.8df1.6c2e");
    assert_encodes(v, ADS_FLUID_F58, "ƒuZZybuNNy");
    assert_encodes(v, ADS_FLUID_F58PLAIN, "fuZZybuNNy");
    assert_encodes(v, ADS_FLUID_WORDS, "reform-remote-galileo--heart-package-academy");
    assert_encodes(v, ADS_FLUID_EMOJI, "👩💅📓😸👑🚓");
}

static void fluid__decode_spec_vector_from_every_encoding(void **state)
{
    (void)state;
    assert_decodes("6731191091817518", UINT64_C(6731191091817518));
    assert_decodes("0x17e9fb8df16c2e", UINT64_C(6731191091817518));
    assert_decodes("0017.e9fb.8df1.6c2e", UINT64_C(6731191091817518));
    assert_decodes("ƒuZZybuNNy", UINT64_C(6731191091817518));
    assert_decodes("fuZZybuNNy", UINT64_C(6731191091817518));
    assert_decodes("reform-remote-galileo--heart-package-academy",
                   UINT64_C(6731191091817518));
    assert_decodes("👩💅📓😸👑🚓", UINT64_C(6731191091817518));
}

static void fluid__encode_zero_in_every_encoding(void **state)
{
    (void)state;
    assert_encodes(0, ADS_FLUID_DEC, "0");
    assert_encodes(0, ADS_FLUID_HEX, "0x0");
    assert_encodes(0, ADS_FLUID_DOTHEX, "0000.0000.0000.0000");
    assert_encodes(0, ADS_FLUID_F58, "ƒ1");
    assert_encodes(0, ADS_FLUID_F58PLAIN, "f1");
    assert_encodes(0, ADS_FLUID_WORDS, "academy-academy-academy--academy-academy-academy");
    assert_encodes(0, ADS_FLUID_EMOJI, "😃");
    assert_decodes("ƒ1", 0);
    assert_decodes("0x0", 0);
    assert_decodes("0000.0000.0000.0000", 0);
    assert_decodes("academy-academy-academy--academy-academy-academy", 0);
    assert_decodes("😃", 0);
    assert_decodes("0", 0);
}

static void fluid__encode_max_value_in_every_encoding(void **state)
{
    (void)state;
    assert_encodes(UINT64_MAX, ADS_FLUID_DEC, "18446744073709551615");
    assert_encodes(UINT64_MAX, ADS_FLUID_HEX, "0xffffffffffffffff");
    assert_encodes(UINT64_MAX, ADS_FLUID_DOTHEX, "ffff.ffff.ffff.ffff");
    assert_encodes(UINT64_MAX, ADS_FLUID_F58, "ƒjpXCZedGfVQ");
    assert_encodes(UINT64_MAX, ADS_FLUID_F58PLAIN, "fjpXCZedGfVQ");
    assert_encodes(UINT64_MAX, ADS_FLUID_WORDS, "natural-analyze-verbal--natural-analyze-verbal");
    assert_encodes(UINT64_MAX, ADS_FLUID_EMOJI, "🚹💗💧👗😷📷📚");
}

static void fluid__decode_reports_chosen_encoding(void **state)
{
    static const struct {
        const char *text;
        ads_fluid_enc enc;
    } cases[] = {
        {"42", ADS_FLUID_DEC},
        {"0x2a", ADS_FLUID_HEX},
        {"0.0.0.2a", ADS_FLUID_DOTHEX},
        {"ƒj", ADS_FLUID_F58},
        {"fj", ADS_FLUID_F58PLAIN},
        {"actress-academy-academy--academy-academy-academy", ADS_FLUID_WORDS},
        {"😃", ADS_FLUID_EMOJI},
        /* Shape decides even when the rest is wrong: '.' wins over '-'. */
        {"a-b.c", ADS_FLUID_DOTHEX},
        {"f-1", ADS_FLUID_WORDS},
    };
    size_t i;
    (void)state;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ads_fluid_enc enc = (ads_fluid_enc)99;
        uint64_t v;
        ads_fluid_decode(&v, &enc, cases[i].text, strlen(cases[i].text), NULL);
        assert_int_equal(enc, cases[i].enc);
    }
}

/* ------------------------------------------------------------------------ */
/* Encoding names and encode arguments                                      */
/* ------------------------------------------------------------------------ */

static void fluid__enc_name_and_parse_round_trip(void **state)
{
    static const char *const names[] = {"dec",      "hex",   "dothex", "f58",
                                        "f58plain", "words", "emoji"};
    size_t i;
    (void)state;
    for (i = 0; i < ADS_FLUID_ENC_COUNT; i++) {
        ads_fluid_enc enc;
        assert_string_equal(ads_fluid_enc_name(all_encs[i]), names[i]);
        assert_int_equal(ads_fluid_enc_parse(&enc, names[i], NULL), 0);
        assert_int_equal(enc, all_encs[i]);
    }
    assert_string_equal(ads_fluid_enc_name((ads_fluid_enc)7), "unknown");
}

static void fluid__enc_parse_rejects_unknown_name_listing_names(void **state)
{
    ads_fluid_enc enc = ADS_FLUID_HEX;
    ads_error err;
    (void)state;
    assert_int_equal(ads_fluid_enc_parse(&enc, "base58", &err), ADS_EINVAL);
    assert_string_equal(err.message, "unknown FLUID encoding 'base58' (expected dec, hex, "
                                     "dothex, f58, f58plain, words or emoji)");
    assert_int_equal(enc, ADS_FLUID_HEX);
    assert_int_equal(ads_fluid_enc_parse(&enc, "HEX", &err), ADS_EINVAL);
    assert_int_equal(ads_fluid_enc_parse(&enc, NULL, &err), ADS_EINVAL);
}

static void fluid__encode_rejects_small_buffer_and_unknown_encoding(void **state)
{
    char buf[8];
    ads_error err;
    (void)state;
    assert_int_equal(ads_fluid_encode(buf, sizeof buf, 1, ADS_FLUID_DOTHEX, &err), ADS_EINVAL);
    assert_string_equal(err.message,
                        "FLUID encode: dothex needs 20 bytes with the NUL, the buffer has 8");
    assert_string_equal(buf, "");
    /* Exactly enough room. */
    assert_int_equal(ads_fluid_encode(buf, 4, 1, ADS_FLUID_HEX, &err), 3);
    assert_string_equal(buf, "0x1");
    assert_int_equal(ads_fluid_encode(buf, 3, 1, ADS_FLUID_HEX, &err), ADS_EINVAL);
    assert_int_equal(ads_fluid_encode(buf, sizeof buf, 1, (ads_fluid_enc)7, &err), ADS_EINVAL);
    assert_string_equal(err.message, "FLUID encode: unknown encoding 7");
    assert_int_equal(ads_fluid_encode(NULL, 0, 1, ADS_FLUID_DEC, &err), ADS_EINVAL);
}

static void fluid__encode_never_exceeds_text_max(void **state)
{
    /* 0 is the longest words form: "academy" (7 letters) in all six places. */
    static const uint64_t values[] = {0, UINT64_MAX, UINT64_C(1) << 63,
                                      UINT64_C(0x7fffffffffffffff)};
    size_t i, j;
    (void)state;
    for (i = 0; i < sizeof values / sizeof values[0]; i++) {
        for (j = 0; j < ADS_FLUID_ENC_COUNT; j++) {
            char buf[ADS_FLUID_TEXT_MAX + 1];
            int n = ads_fluid_encode(buf, sizeof buf, values[i], all_encs[j], NULL);
            assert_true(n >= 1 && n <= ADS_FLUID_TEXT_MAX);
        }
    }
    /* Every word is at most 7 letters: six words and 7 dashes fit easily. */
    for (i = 0; i < ADS_FLUID__WORD_COUNT; i++)
        assert_true(ads_fluid__word_len[i] <= 7);
    assert_true(6 * 7 + 7 <= ADS_FLUID_TEXT_MAX);
}

/* ------------------------------------------------------------------------ */
/* Strict decoding                                                          */
/* ------------------------------------------------------------------------ */

static void fluid__decode_rejects_empty_input(void **state)
{
    (void)state;
    assert_rejects("", ADS_ESYNTAX, "FLUID: empty input", 1);
    assert_rejects("   ", ADS_ESYNTAX, "FLUID: empty input", 4);
    assert_rejects(" \t\r\n", ADS_ESYNTAX, "FLUID: empty input", 5);
}

static void fluid__decode_rejects_null_arguments(void **state)
{
    uint64_t v;
    ads_error err;
    (void)state;
    assert_int_equal(ads_fluid_decode(NULL, NULL, "1", 1, &err), ADS_EINVAL);
    assert_int_equal(ads_fluid_decode(&v, NULL, NULL, 1, &err), ADS_EINVAL);
    assert_int_equal(ads_fluid_decode(&v, NULL, NULL, 0, &err), ADS_ESYNTAX);
    assert_string_equal(err.message, "FLUID: empty input");
}

static void fluid__decode_rejects_overflow_in_every_encoding(void **state)
{
    (void)state;
    assert_rejects("18446744073709551616", ADS_ERANGE,
                   "FLUID decimal: value over 2^64-1 (18446744073709551615)", 20);
    assert_rejects("99999999999999999999", ADS_ERANGE,
                   "FLUID decimal: value over 2^64-1 (18446744073709551615)", 20);
    assert_rejects("184467440737095516150", ADS_ERANGE,
                   "FLUID decimal: value over 2^64-1 (18446744073709551615)", 21);
    assert_rejects("0x10000000000000000", ADS_ERANGE,
                   "FLUID hex: value over 2^64-1 (18446744073709551615)", 19);
    assert_rejects("0x1ffffffffffffffff", ADS_ERANGE,
                   "FLUID hex: value over 2^64-1 (18446744073709551615)", 19);
    assert_rejects("fjpXCZedGfVR", ADS_ERANGE,
                   "FLUID F58: value over 2^64-1 (18446744073709551615)", 12);
    assert_rejects("ƒjpXCZedGfVR", ADS_ERANGE,
                   "FLUID F58: value over 2^64-1 (18446744073709551615)", 13);
    assert_rejects("fzzzzzzzzzzzz", ADS_ERANGE,
                   "FLUID F58: value over 2^64-1 (18446744073709551615)", 12);
    /* 576^7 needs 8 emoji: the digit 1 followed by seven zeros. */
    assert_rejects("😄😃😃😃😃😃😃😃", ADS_ERANGE,
                   "FLUID emoji: value over 2^64-1 (18446744073709551615)", 29);
    /* 2^64 as seven emoji: 2^64-1 ends in digit 447, so the same digits
     * ending in 448 are one too many. */
    {
        char text[ADS_FLUID_TEXT_MAX + 1];
        assert_int_equal(ads_fluid_encode(text, sizeof text, UINT64_MAX, ADS_FLUID_EMOJI, NULL),
                         28);
        assert_memory_equal(text + 24, ads_fluid__emoji[447], 4);
        memcpy(text + 24, ads_fluid__emoji[448], 4);
        assert_rejects(text, ADS_ERANGE, "FLUID emoji: value over 2^64-1 (18446744073709551615)",
                       25);
    }
    /* A half over 2^32-1: 2^32-1 is natural-analyze-verbal. */
    assert_rejects("natural-annual-verbal--academy-academy-academy", ADS_ERANGE,
                   "FLUID words: the first three words are over 2^32-1 (the third word "
                   "is too large)",
                   16);
    assert_rejects("academy-academy-academy--academy-academy-amen", ADS_ERANGE,
                   "FLUID words: the last three words are over 2^32-1 (the sixth word "
                   "is too large)",
                   42);
    /* The values just below the limit are fine. */
    assert_decodes("18446744073709551615", UINT64_MAX);
    assert_decodes("0x0000ffffffffffffffff", UINT64_MAX);
    assert_decodes("natural-analyze-verbal--natural-analyze-verbal", UINT64_MAX);
}

static void fluid__decode_emoji_digits_run_from_0_to_575(void **state)
{
    (void)state;
    assert_string_equal(ads_fluid__emoji[0], "😃");
    assert_string_equal(ads_fluid__emoji[575], "🎌");
    assert_decodes("😃", 0);
    assert_decodes("🎌", 575);
    assert_decodes("😄😃", 576);
    assert_decodes("🎌🎌", 576 * 576 - 1);
}

static void fluid__decode_rejects_tail_word(void **state)
{
    static const char *const tails[] = {"ego", "fax", "jet", "job", "rio", "ski", "yes"};
    char text[80], msg[128];
    size_t i;
    (void)state;
    assert_rejects("reform-remote-galileo--heart-package-ego", ADS_ESYNTAX,
                   "FLUID words: 'ego' is a 24-bit tail word, not valid in a 64-bit FLUID",
                   38);
    for (i = 0; i < 7; i++) {
        assert_string_equal(ads_fluid__words[ADS_FLUID__WORD_BASE + i], tails[i]);
        snprintf(text, sizeof text, "%s-academy-academy--academy-academy-academy", tails[i]);
        snprintf(msg, sizeof msg,
                 "FLUID words: '%s' is a 24-bit tail word, not valid in a 64-bit FLUID",
                 tails[i]);
        assert_rejects(text, ADS_ESYNTAX, msg, 1);
        snprintf(text, sizeof text, "academy-academy-academy--academy-%s-academy", tails[i]);
        assert_rejects(text, ADS_ESYNTAX, msg, 34);
    }
}

static void fluid__decode_rejects_unknown_words(void **state)
{
    (void)state;
    assert_rejects("foo-bar-baz--qux-quux-corge", ADS_ESYNTAX,
                   "FLUID words: unknown word 'foo'", 1);
    assert_rejects("a-a-a--a-a-a", ADS_ESYNTAX, "FLUID words: unknown word 'a'", 1);
    /* A prefix of a word is not the word. */
    assert_rejects("acro-academy-academy--academy-academy-academy", ADS_ESYNTAX,
                   "FLUID words: unknown word 'acro'", 1);
    /* Nor is a word with extra letters, however long. */
    assert_rejects("academy-academyx-academy--academy-academy-academy", ADS_ESYNTAX,
                   "FLUID words: unknown word 'academyx'", 9);
    assert_rejects("academy-academy-academy--academy-academy-"
                   "abcdefghijklmnopqrstuvwxyzabcdefghijkl",
                   ADS_ESYNTAX,
                   "FLUID words: unknown word 'abcdefghijklmnopqrstuvwxyzabcdef'", 42);
    assert_rejects("academy-academy-academy--academy-academy-acad", ADS_ESYNTAX,
                   "FLUID words: unknown word 'acad'", 42);
}

static void fluid__decode_rejects_missing_and_extra_words(void **state)
{
    (void)state;
    assert_rejects("reform-remote-galileo--heart-package", ADS_ESYNTAX,
                   "FLUID words: expected 6 words, found 5", 37);
    assert_rejects("reform-remote-galileo--heart-package-", ADS_ESYNTAX,
                   "FLUID words: expected 6 words, found 5", 38);
    assert_rejects("reform-remote-galileo", ADS_ESYNTAX,
                   "FLUID words: expected 6 words, found 3", 22);
    assert_rejects("reform-", ADS_ESYNTAX, "FLUID words: expected 6 words, found 1", 8);
    assert_rejects("-reform", ADS_ESYNTAX, "FLUID words: expected a word, found '-'", 1);
    assert_rejects("reform-remote-galileo--heart-package-academy-academy", ADS_ESYNTAX,
                   "FLUID words: more than 6 words", 45);
    assert_rejects("reform-remote-galileo--heart-package-academy-", ADS_ESYNTAX,
                   "FLUID words: more than 6 words", 45);
}

static void fluid__decode_rejects_misplaced_separators(void **state)
{
    (void)state;
    /* The halves need "--" between them, and only there. */
    assert_rejects("reform-remote-galileo-heart-package-academy", ADS_ESYNTAX,
                   "FLUID words: expected \"--\" between the third and the fourth word", 23);
    assert_rejects("reform-remote-galileo---heart-package-academy", ADS_ESYNTAX,
                   "FLUID words: expected a word, found '-'", 24);
    assert_rejects("reform--remote-galileo--heart-package-academy", ADS_ESYNTAX,
                   "FLUID words: expected a word, found '-'", 8);
    assert_rejects("reform remote-galileo--heart-package-academy", ADS_ESYNTAX,
                   "FLUID words: expected a letter or '-', found a space", 7);
    assert_rejects("reform-remote-galileo--heart-package-academy1", ADS_ESYNTAX,
                   "FLUID words: expected a letter or '-', found '1'", 45);
    assert_rejects("reform-remote-galil\xc3\xa9o--heart-package-academy", ADS_ESYNTAX,
                   "FLUID words: expected a letter or '-', found '\xc3\xa9' (U+00E9)", 20);
    assert_rejects("-1", ADS_ESYNTAX, "FLUID words: expected a word, found '-'", 1);
}

static void fluid__decode_words_reject_characters_next_to_the_letters(void **state)
{
    /* The bytes just outside A-Z and a-z, at every place in a word. */
    static const char edges[] = {'@', '[', '`', '{', '\x00', '\x7f', '\xc1', '\xe1'};
    char text[64], msg[128], what[64];
    size_t i, pos;
    (void)state;
    for (i = 0; i < sizeof edges; i++) {
        for (pos = 0; pos < 7; pos++) {
            size_t len;
            unsigned char c = (unsigned char)edges[i];
            snprintf(text, sizeof text, "academy-academy-academy--academy-academy-academy");
            text[25 + pos] = edges[i];
            len = strlen("academy-academy-academy--academy-academy-academy");
            if (c > 0x20 && c < 0x7f)
                snprintf(what, sizeof what, "'%c'", c);
            else if (c < 0x80)
                snprintf(what, sizeof what, "byte 0x%02x", c);
            else if (c == 0xc1)
                snprintf(what, sizeof what, "byte 0xc1 (not UTF-8)");
            else
                snprintf(what, sizeof what, "a truncated UTF-8 character (byte 0x%02x)", c);
            snprintf(msg, sizeof msg, "FLUID words: expected a letter or '-', found %s", what);
            assert_rejects_n(text, len, ADS_ESYNTAX, msg, 26 + (int)pos);
        }
    }
}

static void fluid__decode_words_ignore_letter_case(void **state)
{
    /* As mnemonicode's own decoder: letters fold to lower case. */
    (void)state;
    assert_decodes("REFORM-Remote-gAlileo--heart-PACKAGE-academy", UINT64_C(6731191091817518));
}

static void fluid__decode_rejects_bad_dothex_groups(void **state)
{
    (void)state;
    assert_rejects("00000.0.0.0", ADS_ESYNTAX, "FLUID dothex: group 1 has more than 4 hex digits",
                   5);
    assert_rejects("0.0.0.12345", ADS_ESYNTAX, "FLUID dothex: group 4 has more than 4 hex digits",
                   11);
    assert_rejects("0.0.0.", ADS_ESYNTAX,
                   "FLUID dothex: group 4 is empty (expected 1 to 4 hex digits)", 7);
    assert_rejects(".0.0.0", ADS_ESYNTAX,
                   "FLUID dothex: group 1 is empty (expected 1 to 4 hex digits)", 1);
    assert_rejects("0..0.0", ADS_ESYNTAX,
                   "FLUID dothex: group 2 is empty (expected 1 to 4 hex digits)", 3);
    assert_rejects("0.0.0", ADS_ESYNTAX, "FLUID dothex: expected 4 groups, found 3", 6);
    assert_rejects("0.", ADS_ESYNTAX,
                   "FLUID dothex: group 2 is empty (expected 1 to 4 hex digits)", 3);
    assert_rejects("0.0.0.0.0", ADS_ESYNTAX, "FLUID dothex: more than 4 groups", 8);
    assert_rejects("0.0.0.0x1", ADS_ESYNTAX, "FLUID dothex: expected a hex digit, found 'x'", 8);
    assert_rejects("0.g.0.0", ADS_ESYNTAX, "FLUID dothex: expected a hex digit, found 'g'", 3);
    assert_rejects("0.0g.0.0", ADS_ESYNTAX,
                   "FLUID dothex: expected a hex digit or '.', found 'g'", 4);
    assert_rejects("0.0 .0.0", ADS_ESYNTAX,
                   "FLUID dothex: expected a hex digit or '.', found a space", 4);
    assert_rejects("a-b.c", ADS_ESYNTAX,
                   "FLUID dothex: expected a hex digit or '.', found '-'", 2);
    /* Upper case and short groups are accepted. */
    assert_decodes("FFFF.FFFF.FFFF.FFFF", UINT64_MAX);
    assert_decodes("a.B.c.D", UINT64_C(2814797012533261));
    assert_decodes("0.0.0.0", 0);
}

static void fluid__decode_rejects_bad_hex(void **state)
{
    (void)state;
    assert_rejects("0x", ADS_ESYNTAX, "FLUID hex: no digits after \"0x\"", 3);
    assert_rejects("  0x  ", ADS_ESYNTAX, "FLUID hex: no digits after \"0x\"", 5);
    assert_rejects("0xg", ADS_ESYNTAX, "FLUID hex: expected a hex digit, found 'g'", 3);
    assert_rejects("0x12 34", ADS_ESYNTAX, "FLUID hex: expected a hex digit, found a space", 5);
    assert_rejects("0x0x1", ADS_ESYNTAX, "FLUID hex: expected a hex digit, found 'x'", 4);
    /* "0X" is not the hex prefix: that is a decimal with an 'X' in it. */
    assert_rejects("0X1", ADS_ESYNTAX, "FLUID decimal: expected a digit, found 'X'", 2);
    /* Digits of either case after the prefix. */
    assert_decodes("0xABCdef", UINT64_C(0xabcdef));
    assert_decodes("0x0000000000000000000001", 1);
}

static void fluid__decode_rejects_bad_decimal(void **state)
{
    (void)state;
    assert_rejects("123abc", ADS_ESYNTAX, "FLUID decimal: expected a digit, found 'a'", 4);
    assert_rejects("1 2", ADS_ESYNTAX, "FLUID decimal: expected a digit, found a space", 2);
    assert_rejects("+1", ADS_ESYNTAX, "FLUID decimal: expected a digit, found '+'", 1);
    assert_rejects("boo", ADS_ESYNTAX, "FLUID decimal: expected a digit, found 'b'", 1);
    assert_rejects("x1", ADS_ESYNTAX, "FLUID decimal: expected a digit, found 'x'", 1);
    assert_rejects("F1", ADS_ESYNTAX, "FLUID decimal: expected a digit, found 'F'", 1);
    assert_rejects_n("12\0", 3, ADS_ESYNTAX, "FLUID decimal: expected a digit, found byte 0x00",
                     3);
    assert_rejects("1\x7f", ADS_ESYNTAX, "FLUID decimal: expected a digit, found byte 0x7f", 2);
    assert_decodes("007", 7);
}

static void fluid__decode_rejects_bad_f58(void **state)
{
    (void)state;
    assert_rejects("f", ADS_ESYNTAX, "FLUID F58: no digits after the prefix", 2);
    assert_rejects("ƒ", ADS_ESYNTAX, "FLUID F58: no digits after the prefix", 3);
    /* Case matters in base58: 'I' and 'l' and 'O' and '0' are not digits. */
    assert_rejects("fI", ADS_ESYNTAX, "FLUID F58: expected a base58 digit, found 'I'", 2);
    assert_rejects("flux", ADS_ESYNTAX, "FLUID F58: expected a base58 digit, found 'l'", 2);
    assert_rejects("fO", ADS_ESYNTAX, "FLUID F58: expected a base58 digit, found 'O'", 2);
    assert_rejects("f1230", ADS_ESYNTAX, "FLUID F58: expected a base58 digit, found '0'", 5);
    assert_rejects("ƒu ZZ", ADS_ESYNTAX, "FLUID F58: expected a base58 digit, found a space", 4);
    /* Bytes >= 0x80 are never F58 digits. */
    assert_rejects("f\xc3\xa9", ADS_ESYNTAX,
                   "FLUID F58: expected a base58 digit, found '\xc3\xa9' (U+00E9)", 2);
    assert_rejects("ƒ\xff", ADS_ESYNTAX,
                   "FLUID F58: expected a base58 digit, found byte 0xff (not UTF-8)", 3);
    assert_rejects("ƒƒ1", ADS_ESYNTAX,
                   "FLUID F58: expected a base58 digit, found '\xc6\x92' (U+0192)", 3);
    /* U+0191, the capital hooked F, is not the prefix. */
    assert_rejects("\xc6\x91" "2", ADS_ESYNTAX,
                   "FLUID decimal: expected a digit, found '\xc6\x91' (U+0191)", 1);
}

static void fluid__decode_f58_leading_ones_are_zeros(void **state)
{
    char text[128];
    (void)state;
    assert_decodes("f111111111111", 0);
    assert_decodes("ffff", 130074);
    assert_decodes("f123", 60);
    assert_decodes("f11", 0);
    assert_decodes("ƒ12", 1);
    /* Any number of leading zero digits: the value is what counts. */
    memset(text, '1', sizeof text - 1);
    text[0] = 'f';
    text[sizeof text - 1] = '\0';
    assert_decodes(text, 0);
    text[sizeof text - 2] = 'Q';
    assert_decodes(text, 23);
}

static void fluid__decode_rejects_bad_emoji(void **state)
{
    (void)state;
    assert_rejects("🦄", ADS_ESYNTAX,
                   "FLUID emoji: '🦄' (U+1F984) is not one of the 576 emoji digits", 1);
    assert_rejects("😃🦄", ADS_ESYNTAX,
                   "FLUID emoji: '🦄' (U+1F984) is not one of the 576 emoji digits", 5);
    assert_rejects("😃x", ADS_ESYNTAX, "FLUID emoji: expected an emoji, found 'x'", 5);
    assert_rejects("😃 😃", ADS_ESYNTAX, "FLUID emoji: expected an emoji, found a space", 5);
    assert_rejects("😃\xe2\x98\x83", ADS_ESYNTAX,
                   "FLUID emoji: expected an emoji, found '\xe2\x98\x83' (U+2603)", 5);
    assert_rejects("😃\xf0\xa0\x80\x80", ADS_ESYNTAX,
                   "FLUID emoji: expected an emoji, found '\xf0\xa0\x80\x80' (U+20000)", 5);
    /* F0 9F followed by something that is not a continuation byte. */
    assert_rejects("\xf0\x9f" "12", ADS_ESYNTAX,
                   "FLUID emoji: expected an emoji, found a truncated UTF-8 character "
                   "(byte 0xf0)",
                   1);
}

static void fluid__decode_rejects_truncated_utf8(void **state)
{
    (void)state;
    assert_rejects("\xc6", ADS_ESYNTAX,
                   "FLUID decimal: expected a digit, found a truncated UTF-8 character "
                   "(byte 0xc6)",
                   1);
    assert_rejects("\xf0\x9f\x98", ADS_ESYNTAX,
                   "FLUID emoji: expected an emoji, found a truncated UTF-8 character "
                   "(byte 0xf0)",
                   1);
    assert_rejects("\xf0\x9f", ADS_ESYNTAX,
                   "FLUID emoji: expected an emoji, found a truncated UTF-8 character "
                   "(byte 0xf0)",
                   1);
    assert_rejects("😃\xf0\x9f\x98", ADS_ESYNTAX,
                   "FLUID emoji: expected an emoji, found a truncated UTF-8 character "
                   "(byte 0xf0)",
                   5);
    assert_rejects("f1\xc6", ADS_ESYNTAX,
                   "FLUID F58: expected a base58 digit, found a truncated UTF-8 character "
                   "(byte 0xc6)",
                   3);
    /* Trimming does not swallow part of a character. */
    assert_rejects("\xf0\x9f\x98 ", ADS_ESYNTAX,
                   "FLUID emoji: expected an emoji, found a truncated UTF-8 character "
                   "(byte 0xf0)",
                   1);
}

static void fluid__decode_rejects_non_utf8_bytes(void **state)
{
    (void)state;
    assert_rejects("\xff", ADS_ESYNTAX, "FLUID decimal: expected a digit, found byte 0xff (not UTF-8)",
                   1);
    assert_rejects("1\x80", ADS_ESYNTAX,
                   "FLUID decimal: expected a digit, found byte 0x80 (not UTF-8)", 2);
    /* An overlong encoding of '1' is not UTF-8 either. */
    assert_rejects("1\xe0\x80\xb1", ADS_ESYNTAX,
                   "FLUID decimal: expected a digit, found byte 0xe0 (not UTF-8)", 2);
    /* Nor is an encoded surrogate. */
    assert_rejects("1\xed\xa0\x80", ADS_ESYNTAX,
                   "FLUID decimal: expected a digit, found byte 0xed (not UTF-8)", 2);
}

static void fluid__decode_ignores_surrounding_white_space(void **state)
{
    size_t i;
    (void)state;
    assert_decodes(" 0.0.0.1", 1);
    assert_decodes("😄 ", 1);
    assert_decodes("  42  ", 42);
    assert_decodes("\t\n0x2a\r\n", 42);
    assert_decodes("\v\f fuZZybuNNy \n", UINT64_C(6731191091817518));
    assert_decodes(" ƒuZZybuNNy", UINT64_C(6731191091817518));
    assert_decodes("\nreform-remote-galileo--heart-package-academy\n",
                   UINT64_C(6731191091817518));
    /* Columns still count from the start of the input. */
    assert_rejects("  12x  ", ADS_ESYNTAX, "FLUID decimal: expected a digit, found 'x'", 5);
    assert_rejects("\n\n0.0.0.0.0", ADS_ESYNTAX, "FLUID dothex: more than 4 groups", 10);
    for (i = 0; i < ADS_FLUID_ENC_COUNT; i++) {
        char buf[ADS_FLUID_TEXT_MAX + 1], padded[ADS_FLUID_TEXT_MAX + 8];
        ads_fluid_encode(buf, sizeof buf, UINT64_C(1234567890123), all_encs[i], NULL);
        snprintf(padded, sizeof padded, " \t%s\n ", buf);
        assert_decodes(padded, UINT64_C(1234567890123));
    }
}

static void fluid__decode_reads_only_len_bytes(void **state)
{
    uint64_t v = 0;
    (void)state;
    /* The text need not be NUL-terminated; bytes past len are ignored. */
    assert_int_equal(ads_fluid_decode(&v, NULL, "12345", 3, NULL), 0);
    assert_true(v == 123);
    assert_int_equal(ads_fluid_decode(&v, NULL, "0.0.0.1-junk", 7, NULL), 0);
    assert_true(v == 1);
}

/* ------------------------------------------------------------------------ */
/* Round trips                                                              */
/* ------------------------------------------------------------------------ */

static void round_trip(uint64_t v)
{
    size_t i;
    for (i = 0; i < ADS_FLUID_ENC_COUNT; i++) {
        char buf[ADS_FLUID_TEXT_MAX + 1];
        ads_fluid_enc enc;
        uint64_t back = ~v;
        ads_error err;
        int n = ads_fluid_encode(buf, sizeof buf, v, all_encs[i], &err);
        if (n < 1)
            fail_msg("encode %llu as %s: %s", (unsigned long long)v,
                     ads_fluid_enc_name(all_encs[i]), err.message);
        if (ads_fluid_decode(&back, &enc, buf, (size_t)n, &err) != 0)
            fail_msg("decode '%s' (%llu as %s): %s", buf, (unsigned long long)v,
                     ads_fluid_enc_name(all_encs[i]), err.message);
        if (back != v || enc != all_encs[i])
            fail_msg("'%s': %llu as %s came back as %llu (%s)", buf, (unsigned long long)v,
                     ads_fluid_enc_name(all_encs[i]), (unsigned long long)back,
                     ads_fluid_enc_name(enc));
    }
}

static void fluid__round_trips_edge_values(void **state)
{
    static const uint64_t edges[] = {
        0,
        1,
        57,
        58,
        575,
        576,
        1625,
        1626,
        UINT64_C(2643876),
        UINT64_C(0xffff),
        UINT64_C(0x10000),
        UINT64_C(0xffffffff),
        UINT64_C(0x100000000),
        UINT64_C(0x100000001),
        UINT64_C(0xffffffff00000000),
        UINT64_C(0x7fffffffffffffff),
        UINT64_C(0x8000000000000000),
        UINT64_C(0x8000000000000001),
        UINT64_C(10000000000000000000),
        UINT64_C(9999999999999999999),
        UINT64_MAX - 1,
        UINT64_MAX,
    };
    uint64_t p;
    size_t i;
    (void)state;
    for (i = 0; i < sizeof edges / sizeof edges[0]; i++)
        round_trip(edges[i]);
    /* Powers of each base and their neighbours. */
    for (p = 58; p < UINT64_MAX / 58; p *= 58) {
        round_trip(p - 1);
        round_trip(p);
        round_trip(p + 1);
    }
    for (p = 576; p < UINT64_MAX / 576; p *= 576) {
        round_trip(p - 1);
        round_trip(p);
    }
    for (i = 0; i < 64; i++)
        round_trip(UINT64_C(1) << i);
}

static void fluid__round_trips_every_word_and_emoji_digit(void **state)
{
    uint64_t d;
    (void)state;
    for (d = 0; d < ADS_FLUID__WORD_BASE; d++) {
        round_trip(d);
        round_trip(d * ADS_FLUID__WORD_BASE);
        round_trip(d << 32);
    }
    for (d = 0; d < ADS_FLUID__EMOJI_COUNT; d++)
        round_trip(d);
}

static void fluid__round_trips_200k_random_values_in_every_encoding(void **state)
{
    int i;
    (void)state;
    rng_state = UINT64_C(0x9e3779b97f4a7c15);
    for (i = 0; i < 200000; i++)
        round_trip(i & 1 ? rng_next() : rng_value());
}

/* ------------------------------------------------------------------------ */
/* Generator                                                                */
/* ------------------------------------------------------------------------ */

/* A clock that only moves when told, or when a generator sleeps on it. */
typedef struct fake_clock {
    int64_t now;
    int sleeps;
    int64_t slept;
} fake_clock;

static int64_t fake_now(void *ctx)
{
    return ((fake_clock *)ctx)->now;
}

static void fake_sleep(void *ctx, int64_t ns)
{
    fake_clock *c = ctx;
    assert_true(ns > 0);
    c->now += ns;
    c->sleeps++;
    c->slept += ns;
}

#define MS INT64_C(1000000)

static void fluid__state_init_rejects_generator_16384(void **state)
{
    ads_fluid_state st;
    ads_error err;
    (void)state;
    memset(&st, 0x5a, sizeof st);
    assert_int_equal(ads_fluid_state_init(&st, 16384, 0, &err), ADS_ERANGE);
    assert_int_equal(err.code, ADS_ERANGE);
    assert_string_equal(err.message, "FLUID generator id 16384 is over the limit of 16383 (14 bits)");
    assert_int_equal(ads_fluid_state_init(&st, UINT32_MAX, 0, &err), ADS_ERANGE);
    assert_int_equal(ads_fluid_state_init(NULL, 1, 0, &err), ADS_EINVAL);
    assert_int_equal(ads_fluid_state_init(&st, 16383, 77, &err), 0);
    assert_int_equal(st.generator, 16383);
    assert_true(st.epoch_ms == 77);
    assert_true(st.last_ts == 0);
    assert_int_equal(st.seq, 0);
    assert_false(st.used);
}

static void fluid__next_packs_ts_generator_and_seq(void **state)
{
    fake_clock fc = {1700000000123 * MS + 456789, 0, 0};
    ads_clock clock = {fake_now, fake_sleep, &fc};
    ads_fluid_state st;
    uint64_t id, ts;
    uint32_t gen, seq;
    (void)state;
    assert_int_equal(ads_fluid_state_init(&st, 12345, 1600000000000, NULL), 0);
    assert_int_equal(ads_fluid_next(&id, &st, &clock, NULL), 0);
    ads_fluid_unpack(id, &ts, &gen, &seq);
    assert_true(ts == 100000000123);
    assert_int_equal(gen, 12345);
    assert_int_equal(seq, 0);
    assert_true(id == (UINT64_C(100000000123) << 24 | 12345u << 10));
    assert_true(st.used);
    assert_true(st.last_ts == 100000000123);
}

static void fluid__next_issues_1024_per_ms_then_waits(void **state)
{
    fake_clock fc = {5000 * MS + 250000, 0, 0};
    ads_clock clock = {fake_now, fake_sleep, &fc};
    ads_fluid_state st;
    uint64_t id, prev = 0, ts;
    uint32_t gen, seq;
    int i;
    (void)state;
    assert_int_equal(ads_fluid_state_init(&st, 7, 0, NULL), 0);
    for (i = 0; i < 1024; i++) {
        assert_int_equal(ads_fluid_next(&id, &st, &clock, NULL), 0);
        ads_fluid_unpack(id, &ts, &gen, &seq);
        assert_true(ts == 5000);
        assert_int_equal(seq, (uint32_t)i);
        assert_int_equal(gen, 7);
        assert_true(i == 0 || id > prev);
        prev = id;
    }
    assert_int_equal(fc.sleeps, 0);
    /* The 1025th waits for the next millisecond and starts over at seq 0. */
    assert_int_equal(ads_fluid_next(&id, &st, &clock, NULL), 0);
    ads_fluid_unpack(id, &ts, &gen, &seq);
    assert_true(ts == 5001);
    assert_int_equal(seq, 0);
    assert_true(id > prev);
    assert_true(fc.sleeps >= 1);
    assert_true(fc.now >= 5001 * MS);
    assert_true(fc.slept == 750000);
}

static void fluid__next_never_goes_backwards_when_clock_steps_back(void **state)
{
    fake_clock fc = {9000 * MS, 0, 0};
    ads_clock clock = {fake_now, fake_sleep, &fc};
    ads_fluid_state st;
    uint64_t id, prev, ts;
    uint32_t gen, seq;
    int i;
    (void)state;
    assert_int_equal(ads_fluid_state_init(&st, 1, 0, NULL), 0);
    assert_int_equal(ads_fluid_next(&prev, &st, &clock, NULL), 0);
    fc.now -= 3600 * 1000 * MS; /* an hour back */
    for (i = 0; i < 100; i++) {
        assert_int_equal(ads_fluid_next(&id, &st, &clock, NULL), 0);
        ads_fluid_unpack(id, &ts, &gen, &seq);
        assert_true(ts == 9000);
        assert_int_equal(seq, (uint32_t)i + 1);
        assert_true(id > prev);
        prev = id;
    }
    assert_int_equal(fc.sleeps, 0);
}

static void fluid__next_takes_next_ms_at_once_when_clock_is_behind_and_used_up(void **state)
{
    fake_clock fc = {9000 * MS, 0, 0};
    ads_clock clock = {fake_now, fake_sleep, &fc};
    ads_fluid_state st;
    uint64_t id, prev = 0, ts;
    uint32_t gen, seq;
    int i;
    (void)state;
    assert_int_equal(ads_fluid_state_init(&st, 1, 0, NULL), 0);
    assert_int_equal(ads_fluid_next(&prev, &st, &clock, NULL), 0);
    fc.now = 8000 * MS; /* a second back */
    for (i = 1; i < 1024; i++) {
        assert_int_equal(ads_fluid_next(&id, &st, &clock, NULL), 0);
        assert_true(id > prev);
        prev = id;
    }
    assert_int_equal(fc.sleeps, 0);
    assert_int_equal(ads_fluid_next(&id, &st, &clock, NULL), 0);
    ads_fluid_unpack(id, &ts, &gen, &seq);
    assert_true(ts == 9001);
    assert_int_equal(seq, 0);
    assert_true(id > prev);
    /* no wait for a clock a second behind: the next ms is taken at once */
    assert_int_equal(fc.sleeps, 0);
    assert_true(fc.now == 8000 * MS);
}

static void fluid__next_respects_persisted_state_after_restart(void **state)
{
    fake_clock fc = {20000 * MS, 0, 0};
    ads_clock clock = {fake_now, fake_sleep, &fc};
    ads_fluid_state st, restarted;
    uint64_t id, last = 0, ts;
    uint32_t gen, seq;
    int i;
    (void)state;
    assert_int_equal(ads_fluid_state_init(&st, 3, 0, NULL), 0);
    for (i = 0; i < 10; i++)
        assert_int_equal(ads_fluid_next(&last, &st, &clock, NULL), 0);
    /* The process restarts with the persisted state, and the clock has gone
     * back: ids continue after the last one instead of repeating. */
    restarted = st;
    fc.now = 19000 * MS;
    assert_int_equal(ads_fluid_next(&id, &restarted, &clock, NULL), 0);
    ads_fluid_unpack(id, &ts, &gen, &seq);
    assert_true(ts == 20000);
    assert_int_equal(seq, 10);
    assert_true(id > last);
    /* A later clock starts a new millisecond. */
    fc.now = 25000 * MS;
    assert_int_equal(ads_fluid_next(&id, &restarted, &clock, NULL), 0);
    ads_fluid_unpack(id, &ts, &gen, &seq);
    assert_true(ts == 25000);
    assert_int_equal(seq, 0);
}

static void fluid__next_counts_from_the_epoch(void **state)
{
    fake_clock fc = {1000 * MS, 0, 0};
    ads_clock clock = {fake_now, fake_sleep, &fc};
    ads_fluid_state st;
    uint64_t id, ts;
    uint32_t gen, seq;
    (void)state;
    /* The clock before the epoch counts as ts 0 ... */
    assert_int_equal(ads_fluid_state_init(&st, 2, 5000, NULL), 0);
    assert_int_equal(ads_fluid_next(&id, &st, &clock, NULL), 0);
    ads_fluid_unpack(id, &ts, &gen, &seq);
    assert_true(ts == 0);
    assert_int_equal(seq, 0);
    /* ... and a negative clock too. */
    fc.now = -5 * MS;
    assert_int_equal(ads_fluid_next(&id, &st, &clock, NULL), 0);
    ads_fluid_unpack(id, &ts, &gen, &seq);
    assert_true(ts == 0);
    assert_int_equal(seq, 1);
    fc.now = 5042 * MS + 999999;
    assert_int_equal(ads_fluid_next(&id, &st, &clock, NULL), 0);
    ads_fluid_unpack(id, &ts, &gen, &seq);
    assert_true(ts == 42);
    assert_int_equal(seq, 0);
}

static void fluid__next_rejects_ts_past_40_bits(void **state)
{
    fake_clock fc = {(int64_t)ADS_FLUID_TS_MAX * MS, 0, 0};
    ads_clock clock = {fake_now, fake_sleep, &fc};
    ads_fluid_state st;
    uint64_t id = 0, ts;
    uint32_t gen, seq;
    ads_error err;
    int i;
    (void)state;
    assert_int_equal(ads_fluid_state_init(&st, 0, 0, NULL), 0);
    /* The last millisecond is still usable, all 1024 ids of it. */
    for (i = 0; i < 1024; i++)
        assert_int_equal(ads_fluid_next(&id, &st, &clock, NULL), 0);
    ads_fluid_unpack(id, &ts, &gen, &seq);
    assert_true(ts == ADS_FLUID_TS_MAX);
    assert_int_equal(seq, 1023);
    /* Then the generator is worn out, without waiting. */
    assert_int_equal(ads_fluid_next(&id, &st, &clock, &err), ADS_ERANGE);
    assert_string_equal(err.message, "FLUID generator worn out: the timestamp passes 2^40-1 ms "
                                     "(34.8 years) after its epoch");
    assert_int_equal(fc.sleeps, 0);
    /* A fresh state with a clock past the range fails the same way. */
    fc.now += MS;
    assert_int_equal(ads_fluid_state_init(&st, 0, 0, NULL), 0);
    assert_int_equal(ads_fluid_next(&id, &st, &clock, &err), ADS_ERANGE);
    assert_false(st.used);
    /* A later epoch brings it back in range. */
    assert_int_equal(ads_fluid_state_init(&st, 0, 1000, NULL), 0);
    assert_int_equal(ads_fluid_next(&id, &st, &clock, &err), 0);
}

static void fluid__next_rejects_bad_state_and_arguments(void **state)
{
    ads_fluid_state st;
    uint64_t id;
    ads_error err;
    (void)state;
    assert_int_equal(ads_fluid_state_init(&st, 0, 0, NULL), 0);
    st.generator = 16384;
    assert_int_equal(ads_fluid_next(&id, &st, NULL, &err), ADS_ERANGE);
    assert_string_equal(err.message, "FLUID generator id 16384 is over the limit of 16383 (14 bits)");
    assert_int_equal(ads_fluid_next(NULL, &st, NULL, &err), ADS_EINVAL);
    assert_int_equal(ads_fluid_next(&id, NULL, NULL, &err), ADS_EINVAL);
}

static void fluid__next_with_adstore_epoch_reads_as_wall_time(void **state)
{
    /* 2024-02-29T12:34:56.789Z */
    fake_clock fc = {INT64_C(1709210096789) * MS + 123456, 0, 0};
    ads_clock clock = {fake_now, fake_sleep, &fc};
    ads_fluid_state st;
    uint64_t id, ts;
    uint32_t gen, seq;
    ads_error err;
    (void)state;
    assert_true(ADS_FLUID_EPOCH_ADSTORE_MS == UINT64_C(1577836800000)); /* 2020-01-01 */
    assert_int_equal(ads_fluid_state_init(&st, 9, ADS_FLUID_EPOCH_ADSTORE_MS, NULL), 0);
    assert_int_equal(ads_fluid_next(&id, &st, &clock, NULL), 0);
    ads_fluid_unpack(id, &ts, &gen, &seq);
    assert_true(ts + ADS_FLUID_EPOCH_ADSTORE_MS == UINT64_C(1709210096789));
    /* The Unix epoch cannot date today: 2^40 ms after 1970 is 2004-11-03. */
    assert_int_equal(ads_fluid_state_init(&st, 9, 0, NULL), 0);
    assert_int_equal(ads_fluid_next(&id, &st, &clock, &err), ADS_ERANGE);
}

static void fluid__next_with_system_clock_increases(void **state)
{
    ads_fluid_state st;
    uint64_t prev, id;
    int i;
    (void)state;
    assert_int_equal(ads_fluid_state_init(&st, 42, ADS_FLUID_EPOCH_ADSTORE_MS, NULL), 0);
    assert_int_equal(ads_fluid_next(&prev, &st, NULL, NULL), 0);
    for (i = 0; i < 5000; i++) {
        assert_int_equal(ads_fluid_next(&id, &st, NULL, NULL), 0);
        assert_true(id > prev);
        prev = id;
    }
}

/* Decoding as one named encoding: the same strict rules, no guessing. */
#define DECODE_AS(enc, text, e) ads_fluid_decode_as(&v, enc, text, strlen(text), e)

static void fluid__decode_as_one_encoding(void **state)
{
    (void)state;
    uint64_t v = 99;
    ads_error err;
    assert_int_equal(DECODE_AS(ADS_FLUID_F58, "\xc6\x92uZZybuNNy", NULL), 0);
    assert_int_equal(v, 6731191091817518ULL);
    assert_int_equal(DECODE_AS(ADS_FLUID_F58, "fuZZybuNNy", NULL), 0);
    assert_int_equal(DECODE_AS(ADS_FLUID_F58PLAIN, "\xc6\x92" "2", NULL), 0);
    assert_int_equal(v, 1);
    assert_int_equal(DECODE_AS(ADS_FLUID_HEX, " 0x17e9fb8df16c2e ", NULL), 0);
    assert_int_equal(v, 6731191091817518ULL);
    assert_int_equal(DECODE_AS(ADS_FLUID_DEC, "42", NULL), 0);
    assert_int_equal(v, 42);

    v = 99;
    assert_int_equal(DECODE_AS(ADS_FLUID_F58, "1234", &err), ADS_ESYNTAX);
    assert_int_equal(err.column, 1);
    assert_non_null(strstr(err.message, "the prefix"));
    assert_int_equal(DECODE_AS(ADS_FLUID_EMOJI, "\xc6\x92" "1234", &err),
                     ADS_ESYNTAX);
    assert_non_null(strstr(err.message, "an emoji"));
    assert_int_equal(DECODE_AS(ADS_FLUID_HEX, "17e9", &err), ADS_ESYNTAX);
    assert_non_null(strstr(err.message, "'0x'"));
    assert_int_equal(DECODE_AS(ADS_FLUID_DOTHEX, "0x1", &err), ADS_ESYNTAX);
    assert_int_equal(DECODE_AS(ADS_FLUID_WORDS, "academy", &err), ADS_ESYNTAX);
    assert_int_equal(DECODE_AS(ADS_FLUID_DEC, "0x1", &err), ADS_ESYNTAX);
    assert_int_equal(DECODE_AS((ads_fluid_enc)7, "1", &err), ADS_EINVAL);
    assert_int_equal(v, 99); /* nothing written on failure */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fluid__encode_matches_tsv_vectors),
        cmocka_unit_test(fluid__decode_matches_tsv_vectors),
        cmocka_unit_test(fluid__decode_1234_and_f1234_follow_the_shape_rules),
        cmocka_unit_test(fluid__encode_spec_vector_in_every_encoding),
        cmocka_unit_test(fluid__decode_spec_vector_from_every_encoding),
        cmocka_unit_test(fluid__encode_zero_in_every_encoding),
        cmocka_unit_test(fluid__encode_max_value_in_every_encoding),
        cmocka_unit_test(fluid__decode_reports_chosen_encoding),
        cmocka_unit_test(fluid__enc_name_and_parse_round_trip),
        cmocka_unit_test(fluid__enc_parse_rejects_unknown_name_listing_names),
        cmocka_unit_test(fluid__encode_rejects_small_buffer_and_unknown_encoding),
        cmocka_unit_test(fluid__encode_never_exceeds_text_max),
        cmocka_unit_test(fluid__decode_rejects_empty_input),
        cmocka_unit_test(fluid__decode_rejects_null_arguments),
        cmocka_unit_test(fluid__decode_rejects_overflow_in_every_encoding),
        cmocka_unit_test(fluid__decode_emoji_digits_run_from_0_to_575),
        cmocka_unit_test(fluid__decode_rejects_tail_word),
        cmocka_unit_test(fluid__decode_rejects_unknown_words),
        cmocka_unit_test(fluid__decode_rejects_missing_and_extra_words),
        cmocka_unit_test(fluid__decode_rejects_misplaced_separators),
        cmocka_unit_test(fluid__decode_words_reject_characters_next_to_the_letters),
        cmocka_unit_test(fluid__decode_words_ignore_letter_case),
        cmocka_unit_test(fluid__decode_rejects_bad_dothex_groups),
        cmocka_unit_test(fluid__decode_rejects_bad_hex),
        cmocka_unit_test(fluid__decode_rejects_bad_decimal),
        cmocka_unit_test(fluid__decode_rejects_bad_f58),
        cmocka_unit_test(fluid__decode_f58_leading_ones_are_zeros),
        cmocka_unit_test(fluid__decode_rejects_bad_emoji),
        cmocka_unit_test(fluid__decode_rejects_truncated_utf8),
        cmocka_unit_test(fluid__decode_rejects_non_utf8_bytes),
        cmocka_unit_test(fluid__decode_ignores_surrounding_white_space),
        cmocka_unit_test(fluid__decode_reads_only_len_bytes),
        cmocka_unit_test(fluid__round_trips_edge_values),
        cmocka_unit_test(fluid__round_trips_every_word_and_emoji_digit),
        cmocka_unit_test(fluid__round_trips_200k_random_values_in_every_encoding),
        cmocka_unit_test(fluid__state_init_rejects_generator_16384),
        cmocka_unit_test(fluid__next_packs_ts_generator_and_seq),
        cmocka_unit_test(fluid__next_issues_1024_per_ms_then_waits),
        cmocka_unit_test(fluid__next_never_goes_backwards_when_clock_steps_back),
        cmocka_unit_test(fluid__next_takes_next_ms_at_once_when_clock_is_behind_and_used_up),
        cmocka_unit_test(fluid__next_respects_persisted_state_after_restart),
        cmocka_unit_test(fluid__next_counts_from_the_epoch),
        cmocka_unit_test(fluid__next_rejects_ts_past_40_bits),
        cmocka_unit_test(fluid__next_rejects_bad_state_and_arguments),
        cmocka_unit_test(fluid__next_with_adstore_epoch_reads_as_wall_time),
        cmocka_unit_test(fluid__next_with_system_clock_increases),
        cmocka_unit_test(fluid__decode_as_one_encoding),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
