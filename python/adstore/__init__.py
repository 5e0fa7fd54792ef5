"""adstore: an embedded ClassAd record datastore (docs/python.md).

Values cross between ClassAd and Python as:

========== =================================================================
ClassAd    Python
========== =================================================================
undefined  None
error      adstore.ERROR (the one ErrorValue)
boolean    bool
integer    int (64-bit; a larger int raises RangeError)
real       float
string     str (bytes that are not UTF-8 travel as lone surrogates, PEP 383)
list       list (a tuple is accepted)
record     adstore.Record (any mapping with str keys is accepted)
abstime    datetime.datetime with a tzinfo (naive datetimes are refused)
reltime    datetime.timedelta
identifier adstore.Id
blob       bytes (adstore.Blob when the blob has a metadata record)
expression adstore.Expr (a record's attribute that is not a plain value)
========== =================================================================

Errors raise adstore.Error or one of its subclasses, carrying message, line
and column (1-based; 0 when not about text) and code.
"""

from collections.abc import MutableMapping as _MutableMapping

from ._adstore import (  # noqa: F401  (re-exported)
    ERROR,
    Blob,
    BusyError,
    CorruptError,
    Cursor,
    Error,
    ErrorValue,
    ExistsError,
    Expr,
    ForkError,
    Id,
    InvalidError,
    LimitError,
    MapFullError,
    NotFoundError,
    NotSupportedError,
    OutOfMemoryError,
    ParseError,
    RangeError,
    ReadOnlyError,
    Record,
    StorageError,
    Store,
    SystemCallError,
    Transaction,
    VersionError,
    eval,
    fluid_decode,
    fluid_encode,
    fluid_fields,
    open,
    parse,
    uuid,
)

_MutableMapping.register(Record)

__version__ = "0.1.0"

__all__ = [
    "ERROR", "Blob", "BusyError", "CorruptError", "Cursor", "Error", "ErrorValue",
    "ExistsError", "Expr", "ForkError", "Id", "InvalidError", "LimitError", "MapFullError",
    "NotFoundError", "NotSupportedError", "OutOfMemoryError", "ParseError", "RangeError",
    "ReadOnlyError", "Record", "StorageError", "Store", "SystemCallError", "Transaction",
    "VersionError", "eval", "fluid_decode", "fluid_encode", "fluid_fields", "open", "parse",
    "uuid",
]
