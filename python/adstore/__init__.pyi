"""Type hints for adstore (the C module adstore._adstore); docs/python.md."""

import datetime
import os
from collections.abc import Iterable, Iterator, Mapping, MutableMapping
from typing import Any, Optional, Union

__version__: str

# A ClassAd value as Python sees it.
Value = Union[
    None, "ErrorValue", bool, int, float, str, list["Value"], "Record", datetime.datetime,
    datetime.timedelta, "Id", bytes, "Blob",
]
# What may stand as a record's attribute: a value or an expression.
Member = Union[Value, "Expr"]
PathLike = Union[str, bytes, os.PathLike[str], os.PathLike[bytes]]

class Error(Exception):
    """Base of every adstore error."""
    message: Optional[str]
    line: int  # 1-based line of text input, 0 when not about text
    column: int  # 1-based column (bytes), 0 when not about text
    code: str  # the kind of error, e.g. "syntax error"

class InvalidError(Error, ValueError): ...
class ParseError(Error): ...
class RangeError(Error, OverflowError): ...
class LimitError(Error): ...
class OutOfMemoryError(Error, MemoryError): ...
class SystemCallError(Error, OSError): ...
class StorageError(Error): ...
class CorruptError(Error): ...
class VersionError(Error): ...
class NotFoundError(Error, LookupError): ...
class ExistsError(Error): ...
class ForkError(Error): ...
class ReadOnlyError(Error): ...
class MapFullError(Error): ...
class BusyError(Error): ...
class NotSupportedError(Error, NotImplementedError): ...

class ErrorValue:
    """The type of ERROR, the ClassAd value `error`."""

ERROR: ErrorValue

class Id:
    """A ClassAd identifier (OUID, UUID or LUID)."""
    def __init__(self, text: str) -> None: ...
    @property
    def kind(self) -> str: ...  # "ordered", "random" or "increment"
    def __int__(self) -> int: ...
    def __index__(self) -> int: ...
    def __lt__(self, other: "Id") -> bool: ...
    def __le__(self, other: "Id") -> bool: ...
    def __gt__(self, other: "Id") -> bool: ...
    def __ge__(self, other: "Id") -> bool: ...
    def __hash__(self) -> int: ...

class Blob:
    """A blob with a metadata record."""
    data: bytes
    meta: Optional["Record"]
    def __init__(self, data: bytes, meta: Optional[Mapping[str, Member]] = ...) -> None: ...

class Record(MutableMapping[str, Member]):
    """A ClassAd record: ordered, names compared ignoring ASCII case."""
    def __init__(self, mapping: Union[Mapping[str, Member], Iterable[tuple[str, Member]]] = ...,
                 **kw: Member) -> None: ...
    def __getitem__(self, name: str) -> Member: ...
    def __setitem__(self, name: str, value: Member) -> None: ...
    def __delitem__(self, name: str) -> None: ...
    def __iter__(self) -> Iterator[str]: ...
    def __len__(self) -> int: ...
    def copy(self) -> "Record": ...
    def to_dict(self) -> dict[str, Member]:
        """A plain dict (names as written)."""
    def unparse(self) -> str:
        """The record as ClassAd text: [ a = 1; b = "x" ]."""
    @classmethod
    def parse(cls, text: str) -> "Record":
        """The record written in ClassAd text; ParseError with line and column."""

class Expr:
    """A parsed ClassAd expression."""
    def __init__(self, text: Union[str, "Expr"]) -> None: ...
    def eval(self, record: Optional[Mapping[str, Member]] = None) -> Value:
        """The value of the expression in record (None: an empty record)."""
    def unparse(self) -> str:
        """The expression as adstore writes it (as str())."""
    def unparse_condor(self) -> str:
        """The expression in HTCondor's spelling."""

class Cursor(Iterator[Record]):
    """The rows of one statement, streamed."""
    rowcount: int
    kind: str
    columns: Optional[tuple[str, ...]]
    unchanged: int
    def __next__(self) -> Record: ...
    def close(self) -> None:
        """Stop the statement; no more rows come."""
    def __enter__(self) -> "Cursor": ...
    def __exit__(self, *exc: object) -> bool: ...

class Transaction:
    """A transaction; `with` commits it, or aborts it on an exception."""
    active: bool
    def store(self, record: Mapping[str, Member]) -> bool: ...
    def get(self, type: str, key: Any, *, deleted: bool = False,
            timeline: bool = False) -> Optional[Record]: ...
    def history(self, type: str, key: Any) -> list[Record]: ...
    def delete(self, type: str, key: Any) -> bool: ...
    def new_ids(self, kind: str = "ordered", n: int = 1) -> list[Id]: ...
    def new_fluids(self, generator: int = 0, n: int = 1) -> list[int]: ...
    def next_value(self, sequence: str) -> Value: ...
    def commit(self) -> None: ...
    def abort(self) -> None: ...
    def __enter__(self) -> "Transaction": ...
    def __exit__(self, *exc: object) -> bool: ...

class Store:
    """An open store."""
    path: str
    node: int
    closed: bool
    def execute(self, statement: str, params: Optional[Any] = None, *,
                hidden: bool = False) -> Cursor:
        """Run one statement; a Cursor over its rows (a SELECT streams).

        params: a sequence (the values of the statement's ? placeholders, in
        order) or a mapping (the values of its :name placeholders), bound as
        values, never spliced into the text. BEGIN, COMMIT and ROLLBACK raise
        NotSupportedError (each execute commits on its own): use
        `with store.transaction():` and its methods."""
    def store(self, records: Union[Mapping[str, Member], Iterable[Mapping[str, Member]]], *,
              batch: int = 0, backfill: bool = False) -> int:
        """Store a record or an iterable of records (merge semantics), committed every batch records (0: 10000); the number stored."""
    def get(self, type: str, key: Any, *, deleted: bool = False,
            timeline: bool = False) -> Optional[Record]:
        """The record of type with key (a value, or a tuple for several key attributes), or None."""
    def history(self, type: str, key: Any) -> list[Record]:
        """Every row of the record, oldest first, with its timeline attributes."""
    def transaction(self, *, readonly: bool = False) -> Transaction:
        """A Transaction; `with` commits it, or aborts it if the block raised."""
    def new_ids(self, kind: str = "ordered", n: int = 1) -> list[Id]:
        """n new Ids: 'ordered' (OUIDs), 'random' (UUIDs) or 'increment'."""
    def new_fluids(self, generator: int = 0, n: int = 1) -> list[int]:
        """n new FLUIDs from the store's generator number."""
    def next_value(self, sequence: str) -> Value:
        """The next value of a named sequence."""
    def import_file(self, path: PathLike, format: Optional[str] = None, *,
                    backfill: bool = False, batch: int = 0) -> int:
        """Store every record of a file (long, classad, json, xml or dump; None: by name, then content); the number stored."""
    def dump(self, path: PathLike, format: str = "msgpack", *,
             types: Optional[list[str]] = None) -> dict[str, int]:
        """Write the store (or those types) as a dump; {'rows', 'meta', 'bytes'}."""
    def verify(self) -> dict[str, Any]:
        """Check the whole store; {'records', 'rows', 'problems', 'messages'}."""
    def close(self) -> None:
        """Close the store (BusyError while transactions or cursors are open)."""
    def __enter__(self) -> "Store": ...
    def __exit__(self, *exc: object) -> bool: ...

def open(path: PathLike, *, create: bool = True, readonly: bool = False, nosync: bool = False,
         map_size: int = 0) -> Store:
    """Open (or create) the store in directory path."""
def eval(expr: Union[str, Expr], record: Optional[Mapping[str, Member]] = None) -> Value:
    """The value of expr (text or an Expr) in record (None: an empty record)."""
def parse(text: str) -> Expr:
    """The Expr written in text."""
def uuid() -> Id:
    """A new random Id (UUID), needing no store."""
def fluid_encode(value: int, encoding: str = "f58") -> str:
    """A FLUID's text in an encoding: dec, hex, dothex, f58, f58plain, words, emoji."""
def fluid_decode(text: str, encoding: Optional[str] = None) -> int:
    """The FLUID written in text (encoding chosen by its shape unless given)."""
def fluid_fields(value: int) -> tuple[int, int, int]:
    """(timestamp_ms, generator, sequence) of a FLUID."""
