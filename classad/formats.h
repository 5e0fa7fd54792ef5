/*
 * classad/formats.h: the other text forms of ClassAd records
 * (shared/spec/classad.md section 8; the user's view, with every rule spelled
 * out, is docs/formats.md):
 *
 *   - the informal "long" form, one `Name = value` per line, records separated
 *     by blank lines: what HTCondor's `condor_q -long` and `condor_status
 *     -long` print (classad/text_long.c);
 *   - JSON, with HTCondor's "\/Expr(...)\/" convention for what JSON cannot
 *     carry, so that `condor_q -json` output reads in and adstore's output
 *     reads back without loss (classad/text_json.c);
 *   - the classads XML form, <classads><c><a n="Name"><s>..</s></a></c>...
 *     (classad/text_xml.c);
 *   - new ClassAd syntax, `[ ... ]` records one after another (the writer is
 *     ads_record_unparse; the streaming reader is classad/text_classad.c).
 *
 * Reading: each form has a streaming reader over a buffer or a FILE *. Each
 * call to *_next() returns one record, built in the arena the caller passes,
 * so an import never holds more than the record it is working on. Records
 * and values never point into the input: the caller may reuse or free its
 * buffer once the reader is freed, and the records live until the arena is
 * reset or freed. Readers never trust their input: anything they refuse is
 * reported with ADS_ESYNTAX and the line and column (1-based, columns in
 * bytes) where the problem is, a message meant for a user (`err->message`
 * does not repeat the position: a tool prints "FILE:LINE:COLUMN: message"),
 * and nothing is returned. Nesting deeper than ADS_MAX_DEPTH is ADS_ELIMIT;
 * no reader recurses without bound or allocates more than the input asks
 * for (a single line, JSON value or XML record is limited to ADS_MAX_TEXT
 * bytes).
 *
 * Values and expressions: a text that is a constant (a literal, a list or
 * record of constants, real("NaN"), real("INF"), real("-INF"), or blob(...)
 * of constants) is stored as that value; anything else is kept as an
 * expression and never evaluated. ads_expr_fold applies this rule.
 *
 * Writing: one record at a time, appended to an ads_buf, attributes in
 * stored order, values in adstore's spelling (ads_value_unparse). What a
 * writer writes, the matching reader reads back as the same record. The
 * text forms cannot hold a string or a name containing a NUL byte (the
 * ClassAd language has no way to write one): writers refuse such records
 * (ADS_EINVAL) and readers never produce them.
 */
#ifndef ADS_CLASSAD_FORMATS_H
#define ADS_CLASSAD_FORMATS_H

#include <stdio.h>

#include "../classad/classad.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Shared rules                                                             */
/* ------------------------------------------------------------------------ */

/*
 * If e is a constant expression -- a literal; a list or a record whose
 * members are all constants; real("NaN"), real("INF") or real("-INF"); or
 * blob("base64") / blob("base64", record) whose arguments are constants and
 * decode -- set *out to a literal of its value (made in arena a); otherwise
 * set *out to e itself. Nothing is ever evaluated that depends on a record.
 * This is how the readers decide between a value and an expression.
 * Errors: ADS_EINVAL (NULL argument), ADS_ENOMEM.
 */
int ads_expr_fold(const ads_expr **out, ads_arena *a, const ads_expr *e, ads_error *err);

/*
 * 0 if every name and string in r (nested records, lists, blob metadata and
 * expressions included) can be written in the text forms, that is, holds no
 * NUL byte; else ADS_EINVAL with a message naming the attribute. The
 * writers below call it.
 */
int ads_record_check_text(const ads_record *r, ads_error *err);

/* ------------------------------------------------------------------------ */
/* The informal long form (classad/text_long.c)                             */
/* ------------------------------------------------------------------------ */

/*
 * The long form, in short (docs/formats.md has the details):
 *
 *   # a comment line
 *   MyType = "Job"
 *   Requirements = (TARGET.Memory >= 1024) && (TARGET.Arch == "X86_64")
 *   Iwd = "C:\Users\alice"            (HTCondor's strings: '\' is literal)
 *   Note := "two\nlines"              (ClassAd strings: C escapes)
 *   Source.Host = "x"                 (a nested record Source = [ Host = "x" ])
 *   Expr = ={ 1, 2 }                  (kept as an expression, even if constant)
 *
 * `=` takes HTCondor's syntax, in which a backslash in a string is an
 * ordinary character except before a quote (old ClassAd escaping, as
 * HTCondor prints and reads -long output); `:=` takes ClassAd syntax with C
 * escapes. Either way a constant is stored as a value (ads_expr_fold) and
 * anything else as an expression; a value written with a leading `=` is
 * ClassAd syntax kept exactly as written. Lines end in LF or CRLF; a line of
 * only spaces and tabs ends a record, and so does a line whose first
 * non-blank bytes are "***" (the banner after each ad of HTCondor's history
 * files, "*** Offset = 0 ClusterId = 1 ProcId = 0 Owner = ...", which is not
 * kept); a line whose first non-blank byte is '#' is a comment. A repeated name keeps the last value at the first
 * position. Names are plain identifiers or 'quoted', joined by '.' for
 * nested records (at most ADS_MAX_DEPTH parts).
 */
typedef struct ads_long_reader ads_long_reader;

/*
 * A reader over len bytes of text (not copied: text must stay valid and
 * unchanged until the reader is freed; records made from it do not point
 * into it). Errors: ADS_EINVAL (NULL *out, or NULL text with len > 0),
 * ADS_ENOMEM. *out is freed with ads_long_reader_free.
 */
int ads_long_reader_new(ads_long_reader **out, const char *text, size_t len, ads_error *err);

/*
 * A reader over an open stream, read in chunks as records are asked for;
 * the reader does not close f. Errors: ADS_EINVAL, ADS_ENOMEM.
 */
int ads_long_reader_new_file(ads_long_reader **out, FILE *f, ads_error *err);

/*
 * The next record. Returns 1 and sets *out to the record (made in arena a)
 * and *line (if not NULL) to the line of its first attribute; returns 0 at
 * the end of the input; or a negative code, with *out untouched:
 *   ADS_ESYNTAX  a line that does not read (err: line, column, message);
 *                the next call skips the rest of that record (up to the next
 *                blank or "***" line) and goes on with the one after, so a
 *                caller may skip bad records;
 *   ADS_ELIMIT   a line over ADS_MAX_TEXT bytes, a record over ADS_MAX_TEXT
 *                bytes, a name of more than ADS_MAX_DEPTH parts, or an
 *                expression nested too deep (err has line and column);
 *   ADS_EIO      reading the stream failed (err: the system's reason);
 *   ADS_ENOMEM   out of memory;
 *   ADS_EINVAL   NULL reader, out or arena.
 * ADS_ELIMIT on a line, ADS_EIO and ADS_ENOMEM are final: later calls
 * return the same code.
 */
int ads_long_reader_next(const ads_record **out, int *line, ads_long_reader *r, ads_arena *a,
                         ads_error *err);

/* Free the reader (NULL is allowed). Records already returned stay valid. */
void ads_long_reader_free(ads_long_reader *r);

/*
 * Append record r to b in the long form: one line per attribute, in stored
 * order, then one empty line, so that records written one after another
 * form a stream. A nested record value with attributes is written as
 * `Outer.Inner = ...` lines (as deep as ADS_MAX_DEPTH parts; deeper, and
 * inside lists, as `[ ... ]`); an empty one as `Outer = [ ]`. Each line
 * uses HTCondor's `Name = value` when every string and quoted name in it
 * holds only printable bytes and does not end in a backslash, `Name :=
 * value` (C escapes) otherwise, and `Name = =expr` for an expression that
 * is constant but not a value. Errors: ADS_EINVAL (NULL argument; a record
 * with no attributes, which the long form cannot show; a NUL byte, see
 * ads_record_check_text), ADS_ENOMEM (b failed). On error b may hold part
 * of the record: truncate it to its former length.
 */
int ads_long_write(ads_buf *b, const ads_record *r, ads_error *err);

/* ------------------------------------------------------------------------ */
/* JSON (classad/text_json.c)                                               */
/* ------------------------------------------------------------------------ */

/*
 * JSON to ClassAd: null is undefined; true and false booleans; a number
 * without fraction or exponent an integer if it fits 64 bits, else a real;
 * one with a fraction or exponent a real; a string a string, except that a
 * string written "\/Expr(text)\/" (with the escaped slashes, as HTCondor
 * writes it) is the ClassAd expression text, folded to a value when it is a
 * constant (ads_expr_fold); an array a list; an object a record. Input is
 * strict RFC 8259 JSON in UTF-8 (an initial byte-order mark is skipped):
 * either one array of objects, or objects one after another separated by
 * white space (JSON Lines). Escapes of \u and four hex digits (surrogate
 * pairs included) become UTF-8. Invalid UTF-8, lone surrogates, unescaped
 * control characters, \u0000, empty names, trailing commas and comments are
 * errors; a repeated name keeps the last value at the first position, as
 * records do.
 */
typedef struct ads_json_reader ads_json_reader;

/* As ads_long_reader_new and ads_long_reader_new_file. */
int ads_json_reader_new(ads_json_reader **out, const char *text, size_t len, ads_error *err);
int ads_json_reader_new_file(ads_json_reader **out, FILE *f, ads_error *err);

/*
 * The next record: 1 and *out (in arena a), *line (if not NULL) the line of
 * its opening '{'; 0 at the end; or a negative code with *out untouched:
 * ADS_ESYNTAX (err: line, column, message), ADS_ELIMIT (nesting deeper than
 * ADS_MAX_DEPTH, a value over ADS_MAX_TEXT bytes), ADS_EIO, ADS_ENOMEM,
 * ADS_EINVAL. Every error is final: later calls return the same code.
 */
int ads_json_reader_next(const ads_record **out, int *line, ads_json_reader *r, ads_arena *a,
                         ads_error *err);

void ads_json_reader_free(ads_json_reader *r);

/* Flags for ads_json_write. */
enum {
    ADS_JSON_COMPACT = 0, /* one line, no spaces: `{"a":1,"b":[1,2]}` (JSON Lines) */
    ADS_JSON_PRETTY = 1   /* one member per line, indented by two spaces */
};

/*
 * Append record r to b as one JSON object (no newline after it), members in
 * stored order. Integers as integers, reals always with a '.' or an exponent
 * (2.0, 1e+100) so they read back as reals, strings with JSON escapes;
 * lists and list expressions as arrays, records and record expressions as
 * objects; everything JSON cannot carry -- error, AbsTime, RelTime,
 * identifiers, blobs, NaN and infinities, strings that are not valid UTF-8,
 * and any other expression -- as "\/Expr(text)\/" with text in adstore's
 * spelling (bytes that are not UTF-8 as \ooo escapes inside the ClassAd
 * string). Errors: ADS_EINVAL (NULL argument, a NUL byte, a name that is
 * not valid UTF-8), ADS_ENOMEM.
 */
int ads_json_write(ads_buf *b, const ads_record *r, int flags, ads_error *err);

/* ------------------------------------------------------------------------ */
/* New ClassAd syntax (classad/text_classad.c)                              */
/* ------------------------------------------------------------------------ */

/*
 * New ClassAd syntax: `[ ... ]` records one after another, separated by
 * white space, comments or commas, optionally all inside one `{ ... }` list.
 * Each record's extent is found by bracket matching and only it is parsed,
 * so a stream of any size reads in memory for one record.
 */
typedef struct ads_classad_reader ads_classad_reader;

/* As ads_long_reader_new (but the text is copied) and
 * ads_long_reader_new_file. */
int ads_classad_reader_new(ads_classad_reader **out, const char *text, size_t len,
                           ads_error *err);
int ads_classad_reader_new_file(ads_classad_reader **out, FILE *f, ads_error *err);

/*
 * The next record: 1 and *out, *line the line of its '['; 0 at the end; or
 * a negative code:
 *   ADS_ESYNTAX  a record that does not parse (err: line and column in the
 *                input); the next call goes on with the record after it.
 *                Text outside a record is an error too, and the next call
 *                goes on at the next '['. A record left open at the end is
 *                final;
 *   ADS_ELIMIT   a record over ADS_MAX_TEXT bytes or nested more than
 *                ADS_MAX_DEPTH deep (final);
 *   ADS_EIO, ADS_ENOMEM, ADS_EINVAL as ads_long_reader_next (final).
 */
int ads_classad_reader_next(const ads_record **out, int *line, ads_classad_reader *r, ads_arena *a,
                            ads_error *err);

void ads_classad_reader_free(ads_classad_reader *r);

/* ------------------------------------------------------------------------ */
/* XML (classad/text_xml.c)                                                 */
/* ------------------------------------------------------------------------ */

/*
 * The classads XML form of HTCondor:
 *   <?xml version="1.0"?>
 *   <!DOCTYPE classads SYSTEM "classads.dtd">
 *   <classads>
 *   <c>
 *       <a n="Name"><s>text</s></a>
 *   </c>
 *   </classads>
 * Values: <s>string</s> <i>integer</i> <r>real</r> <b v="t"/> <b v="f"/>
 * <un/> <er/> <at>AbsTime</at> <rt>RelTime</rt> <l>list</l> <c>record</c>
 * and <e>expression</e> (also for identifiers and blobs, which have no
 * element). Text is escaped twice, as HTCondor does: ClassAd C escapes for
 * control characters, backslashes and bytes that are not UTF-8, then the XML
 * entities &amp; &lt; &gt; (&quot; in attribute values), so the document is
 * well-formed UTF-8 whatever the bytes. The reader takes exactly this form
 * (the <?xml?> and <!DOCTYPE> lines and the <classads> wrapper optional;
 * entities &lt; &gt; &amp; &quot; &apos; &#N; &#xN;), nothing more general.
 */
typedef struct ads_xml_reader ads_xml_reader;

int ads_xml_reader_new(ads_xml_reader **out, const char *text, size_t len, ads_error *err);
int ads_xml_reader_new_file(ads_xml_reader **out, FILE *f, ads_error *err);

/*
 * The next record (a top-level <c> element): 1 and *out, *line the line of
 * its <c>; 0 at the end; or a negative code as ads_json_reader_next (every
 * error final).
 */
int ads_xml_reader_next(const ads_record **out, int *line, ads_xml_reader *r, ads_arena *a,
                        ads_error *err);

void ads_xml_reader_free(ads_xml_reader *r);

/* The document head (<?xml?>, <!DOCTYPE>, <classads> and a newline) and
 * tail (</classads> and a newline). */
void ads_xml_write_begin(ads_buf *b);
void ads_xml_write_end(ads_buf *b);

/*
 * Append record r as one <c> element: `<c>`, a newline, each attribute on
 * its own line indented by four spaces, `</c>` and a newline (nested records
 * and lists inline). Errors: ADS_EINVAL (NULL argument, a NUL byte),
 * ADS_ENOMEM.
 */
int ads_xml_write(ads_buf *b, const ads_record *r, ads_error *err);

#ifdef __cplusplus
}
#endif
#endif
