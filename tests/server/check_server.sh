#!/usr/bin/env bash
# `adstore serve` end to end, with curl: refusals (tokens, roles, methods,
# routes, bodies too large, malformed JSON, non-loopback without TLS), TLS
# with a certificate made here, a result larger than the held-back head
# streamed whole, concurrent readers beside a writer (nothing lost, nothing
# torn), SIGTERM with a request in flight (it finishes, the store closes),
# a statement still running when the 30 s drain ends (503; new connections
# refused meanwhile), and kill -9 under writes (the store verifies; every
# acknowledged write is there).
#   check_server.sh ADSTORE
set -uo pipefail
ADSTORE=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
here=$(cd "$(dirname "$0")" && pwd)
source "$here/server_env.sh"
require_tools curl openssl python3
work=$(mktemp -d)
trap 'stop_server 2>/dev/null; rm -rf "$work"' EXIT
failures=0 checks=0

check() { # check NAME WANT GOT
  checks=$((checks + 1))
  if [ "$2" != "$3" ]; then
    echo "FAIL $1"
    echo "  want: $2"
    echo "  got:  $3"
    failures=$((failures + 1))
  fi
}

contains() { # contains NAME NEEDLE HAYSTACK
  checks=$((checks + 1))
  if [[ $3 != *"$2"* ]]; then
    echo "FAIL $1: '$2' not in:"
    printf '  %s\n' "$3"
    failures=$((failures + 1))
  fi
}

W=$("$ADSTORE" serve --tokens "$work/tokens" --add-token w --role write 2>/dev/null)
R=$("$ADSTORE" serve --tokens "$work/tokens" --add-token r --role read 2>/dev/null)
HW="Authorization: Bearer $W"
HR="Authorization: Bearer $R"

# ---- options ----
out=$("$ADSTORE" serve --tokens "$work/tokens" --add-token w 2>&1)
check "a token name is used once" "adstore serve: $work/tokens already has a token named 'w'" "$out"
out=$("$ADSTORE" serve --add-token x 2>&1)
contains "--add-token needs --tokens" "adstore serve: --add-token needs --tokens FILE" "$out"
out=$("$ADSTORE" -d "$work/db" serve --listen 0.0.0.0:0 --tokens "$work/tokens" 2>&1)
contains "no TLS beyond loopback" "refusing to listen on 0.0.0.0:0 without TLS and tokens" "$out"
out=$("$ADSTORE" -d "$work/db" serve --listen localhost:80 2>&1)
contains "addresses are literals" "the address must be an IPv4 or [IPv6] literal" "$out"
printf 'w write nothex\n' > "$work/badtokens"
out=$("$ADSTORE" -d "$work/db" serve --tokens "$work/badtokens" 2>&1)
check "a bad tokens file" "adstore serve: $work/badtokens:1: expected 'NAME read|write SHA256-HEX'" "$out"
check "tokens file mode" "600" "$(stat -c %a "$work/tokens")"
contains "the file holds hashes only" "w write " "$(cat "$work/tokens")"
checks=$((checks + 1))
if grep -q "$W" "$work/tokens"; then echo "FAIL the tokens file holds a token"; failures=$((failures + 1)); fi

# ---- refusals ----
start_server "$work" --tokens "$work/tokens" || exit 1
U=$ADSTORE_URL
code() { curl -s -o "$work/body" -w '%{http_code}' "$@"; }
check "health needs no token" 200 "$(code "$U/api/health")"
check "no token: 401" 401 "$(code "$U/api/types")"
contains "401's code" '"code":"unauthorized"' "$(cat "$work/body")"
check "a bad token: 401" 401 "$(code -H 'Authorization: Bearer ads_00' "$U/api/types")"
check "not bearer: 401" 401 "$(code -H "Authorization: Basic $W" "$U/api/types")"
check "a good token" 200 "$(code -H "$HR" "$U/api/types")"
check "read token writing a statement: 403" 403 "$(code -H "$HR" --data 'STORE [ AdType = "Type"; ForType = "T"; KeyAttributes = { "K" } ]' "$U/api/query")"
check "read token storing records: 403" 403 "$(code -H "$HR" --data '[ AdType = "T"; K = 1 ]' "$U/api/records")"
check "read token importing: 403" 403 "$(code -H "$HR" --data '[ AdType = "T"; K = 1 ]' "$U/api/import")"
check "read token taking ids: 403" 403 "$(code -H "$HR" -X POST "$U/api/ids")"
check "write token" 200 "$(code -H "$HW" --data 'STORE [ AdType = "Type"; ForType = "T"; KeyAttributes = { "K" } ]' "$U/api/query")"
check "read token reading" 200 "$(code -H "$HR" --data 'SELECT * FROM T' "$U/api/query")"
check "unknown route" 404 "$(code -H "$HR" "$U/api/nope")"
check "wrong method" 405 "$(code -H "$HR" "$U/api/query")"
check "bad record path" 404 "$(code -H "$HR" "$U/api/records/T/x?K=1")"
check "record without key" 400 "$(code -H "$HR" "$U/api/records/T")"
check "bad key name" 400 "$(code -H "$HR" "$U/api/records/T?K%20x=1")"
check "unknown format" 400 "$(code -H "$HR" --data 'SELECT * FROM T' "$U/api/query?format=yaml")"
contains "unknown format message" "unknown format 'yaml'" "$(cat "$work/body")"
check "empty statement" 400 "$(code -H "$HR" -X POST "$U/api/query")"
check "malformed JSON statement" 400 "$(code -H "$HR" -H 'Content-Type: application/json' --data '{"statement": ' "$U/api/query")"
contains "malformed JSON has a position" '"line":1,"column"' "$(cat "$work/body")"
check "statement of the wrong type" 400 "$(code -H "$HR" -H 'Content-Type: application/json' --data '{"statement": ["SELECT"]}' "$U/api/query")"
check "format of the wrong type" 400 "$(code -H "$HR" -H 'Content-Type: application/json' --data '{"statement": "SELECT * FROM T", "format": 1}' "$U/api/query")"
check "malformed JSON records" 400 "$(code -H "$HW" -H 'Content-Type: application/json' --data '[{"AdType": "T", "K": 1}, {"AdType": }]' "$U/api/records")"
check "all or nothing" 200 "$(code -H "$HR" "$U/api/types")"
contains "nothing stored by a failed body" '{"ForType":"T","KeyAttributes":["K"],"Count":0' "$(cat "$work/body")"
check "a record missing its key" 400 "$(code -H "$HW" --data '[ AdType = "T"; X = 1 ]' "$U/api/records")"
check "ids count too large" 400 "$(code -H "$HW" -X POST "$U/api/ids?count=10001")"
check "ids count not a number" 400 "$(code -H "$HW" -X POST "$U/api/ids?count=1x")"
check "ids of an unknown sequence" 404 "$(code -H "$HW" -X POST "$U/api/ids?sequence=nope")"
check "ids default" 200 "$(code -H "$HW" -X POST "$U/api/ids?count=2")"
contains "ids are OUIDs" '{"sequence":"ordered","values":["#' "$(cat "$work/body")"
head -c 9000000 /dev/zero > "$work/huge"
check "a huge body: 413" 413 "$(code -H "$HW" --data-binary @"$work/huge" "$U/api/import")"
check "a huge chunked body: 413" 413 "$(code -H "$HW" -H 'Transfer-Encoding: chunked' --data-binary @"$work/huge" "$U/api/import")"
check "a NUL in a statement" 400 "$(printf 'SELECT * FROM T\0' | code -H "$HW" --data-binary @- "$U/api/query")"
check "stats" 200 "$(code -H "$HR" "$U/api/stats")"
contains "stats count failures" '"failures":' "$(cat "$work/body")"
# found by a hostile-client run (stop 36): each was a defect
check "a JSON statement given as an expression: 400" 400 "$(code -H "$HR" -H 'Content-Type: application/json' --data '{"statement": "\/Expr(strcat(\"SELECT * \", \"FROM T\"))\/"}' "$U/api/query")"
contains "an expression is never evaluated" '"the body'"'"'s \"statement\" must be a string"' "$(cat "$work/body")"
check "a second JSON object after the statement: 400" 400 "$(code -H "$HR" -H 'Content-Type: application/json' --data '{"statement": "SELECT * FROM T"}{"statement": "SELECT 1"}' "$U/api/query")"
contains "the second object named" "more than one JSON object" "$(cat "$work/body")"
check "garbage after the statement object: 400" 400 "$(code -H "$HR" -H 'Content-Type: application/json' --data '{"statement": "SELECT * FROM T"} x' "$U/api/query")"
check "bytes that are not UTF-8 in an error" 404 "$(code -H "$HW" -X POST "$U/api/ids?sequence=%FF%FEab")"
check "the error is JSON all the same" "no sequence named \ufffd\ufffdab" "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["error"]["message"].encode("unicode_escape").decode())' "$work/body")"
check "a type keyed by K" 200 "$(code -H "$HW" --data 'STORE [ AdType = "Type"; ForType = "Nul"; KeyAttributes = { "K" } ], [ AdType = "Nul"; K = "a" ]' "$U/api/query")"
check "the record a" 200 "$(code -H "$HR" "$U/api/records/Nul?K=a")"
check "a key value with %00 is not cut short" 404 "$(code -H "$HR" "$U/api/records/Nul?K=a%00b")"
check "an argument name with %00 is not cut short" 400 "$(code -H "$HR" "$U/api/records/Nul?K%00x=a")"
check "arguments without the key: 400" 400 "$(code -H "$HR" "$U/api/records/Nul?X=1")"
contains "the key named" "a record of Nul is named by its key attributes: K" "$(cat "$work/body")"
check "health with a bad token" 200 "$(code -H 'Authorization: Bearer ads_00' "$U/api/health")"
check "a token with white space after it" 200 "$(code -H "$HR " "$U/api/types")"
check "the page" 200 "$(code "$U/")"
contains "the page is html" "<textarea id=\"stmt\"" "$(cat "$work/body")"

# ---- hostile bytes: each answered with a 4xx (or closed), the server unharmed ----
hostile=$(python3 - "$PORT" "$W" <<'PY'
import socket, sys
port = int(sys.argv[1])
def status(data):
    s = socket.create_connection(("127.0.0.1", port))
    s.settimeout(10)
    try:
        s.sendall(data)
        return s.recv(12)[9:12].decode() or "closed"
    except OSError:
        return "closed"
    finally:
        s.close()
H = b"Host: x\r\nAuthorization: Bearer " + sys.argv[2].encode() + b"\r\n"
print(status(b"GET / HTTP/1.1\r\n" + H + b"X: " + b"a" * 100000 + b"\r\n\r\n"),
      status(b"POST /api/query HTTP/1.1\r\n" + H + b"Transfer-Encoding: chunked\r\n\r\nzz\r\n"),
      status(b"POST /api/query HTTP/1.1\r\n" + H + b"Content-Length: -5\r\n\r\n"),
      status(b"POST /api/query HTTP/1.1\r\n" + H + b"Content-Type: application/json\r\nContent-Length: 2000\r\n\r\n" + b"[" * 2000),
      status(b"POST /api/records HTTP/1.1\r\n" + H + b"Content-Length: 2000\r\n\r\n" + b"[" * 2000),
      # a coding other than chunked: refused at once (it used to wait 30 s)
      status(b"POST /api/query HTTP/1.1\r\n" + H + b"Transfer-Encoding: gzip\r\n\r\nabc"),
      # an absolute-form target is the path it names
      status(b"GET http://x/api/health HTTP/1.1\r\n" + H + b"\r\n"))
PY
)
check "hostile requests" "431 400 400 400 422 501 200" "$hostile"
check "still serving" 200 "$(code "$U/api/health")"

# ---- bodies in flight, all connections together, stay under 64 MiB ----
# Eight bodies of 8 MiB, sent but for their last 64 KiB, nearly fill the
# server's body memory (ADS_SERVE_BODY_MEMORY): a request that declares a
# 4 MiB body is refused with 503 before its body is read. The held
# connections send a byte each time the client asks, so that none of them is
# idle for the server's 30 s connection timeout however slowly the server
# reads (a sanitizer build on a loaded machine); once they close, requests are
# served again.
budget=$(python3 - "$PORT" "$W" <<'PY'
import socket, sys, time
port = int(sys.argv[1])
H = b"Host: x\r\nAuthorization: Bearer " + sys.argv[2].encode() + b"\r\n"
def status(s):
    try:
        return s.recv(12)[9:12].decode() or "closed"
    except OSError:
        return "none"
def post_big():
    s = socket.create_connection(("127.0.0.1", port))
    s.settimeout(2)
    s.sendall(b"POST /api/query HTTP/1.1\r\n" + H + b"Content-Length: %d\r\n\r\n" % (4 << 20))
    st = status(s)
    s.close()
    return st
def post(body):
    s = socket.create_connection(("127.0.0.1", port))
    s.settimeout(10)
    s.sendall(b"POST /api/query HTTP/1.1\r\n" + H + b"Content-Length: %d\r\n\r\n" % len(body) + body)
    st = status(s)
    s.close()
    return st
size = 8 << 20
held = []
for i in range(8):
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(b"POST /api/import HTTP/1.1\r\n" + H + b"Content-Length: %d\r\n\r\n" % size)
    s.sendall(b"[" * (size - 65536))
    held.append(s)
full = "no 503"
for i in range(240): # until the server has read them (a minute on a busy machine)
    for s in held:
        s.sendall(b"[")
    st = post_big()
    if st == "503":
        full = st
        break
    time.sleep(0.25)
for s in held:
    s.close()
again = "no 200"
for i in range(240):
    st = post(b"SELECT * FROM T LIMIT 1")
    if st == "200":
        again = st
        break
    time.sleep(0.25)
print(full, again)
PY
)
check "bodies past the server's body memory: 503, then served again" "503 200" "$budget"

# ---- a result larger than the head, streamed ----
python3 -c '
for i in range(30000):
    print("[ AdType = \"T\"; K = %d; Pad = \"%s\" ]" % (i, "x" * 40))' > "$work/t.ads"
check "import" 200 "$(code -H "$HW" --data-binary @"$work/t.ads" "$U/api/import")"
check "imported count" '{"stored":30000,"unchanged":0}' "$(cat "$work/body")"
n=$(curl -s -H "$HR" --data 'SELECT K FROM T' "$U/api/query" | wc -l)
check "jsonl streamed whole" 30000 "$n"
n=$(curl -s -H "$HR" --data 'SELECT K FROM T' "$U/api/query?format=json" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')
check "json streamed whole and well formed" 30000 "$n"
n=$(curl -s -H "$HR" --data 'SELECT * FROM T' "$U/api/query?format=csv" | wc -l)
check "csv streamed whole" 30001 "$n"

# ---- records by key: read from the store directly, answered as the statement would ----
same_as_statement() { # same_as_statement NAME URL-PATH STATEMENT
  local direct stmt
  direct=$(curl -s -D "$work/h1" -H "$HR" "$U$2")
  stmt=$(curl -s -H "$HR" --data "$3" "$U/api/query?hidden=true")
  check "$1" "$stmt" "$direct"
  contains "$1: JSON Lines" "application/x-ndjson" "$(cat "$work/h1")"
}
curl -s -H "$HW" --data 'STORE [ AdType = "Type"; ForType = "P"; KeyAttributes = { "Name" } ]' "$U/api/query" > /dev/null
for v in 1 2 3; do
  curl -s -H "$HW" --data "[ AdType = \"P\"; Name = \"abc\"; V = $v; _Secret = \"s$v\" ]" "$U/api/records" > /dev/null
done
check "a record by key" 200 "$(code -H "$HR" "$U/api/records/P?Name=abc")"
contains "its latest row" '"V":3' "$(cat "$work/body")"
contains "hidden attributes too" '"_Secret":"s3"' "$(cat "$work/body")"
same_as_statement "a record, as SELECT * shows it" "/api/records/P?Name=abc" 'SELECT * FROM P WHERE Name =?= "abc"'
same_as_statement "a key named in other case" "/api/records/P?name=abc" 'SELECT * FROM P WHERE name =?= "abc"'
same_as_statement "a number key" "/api/records/T?K=17" 'SELECT * FROM T WHERE K =?= 17'
same_as_statement "a history" "/api/records/P/history?Name=abc" 'SELECT * FROM P WHERE Name =?= "abc" && _Deleted =!= undefined && @anytime()'
check "history has every row" 3 "$(curl -s -H "$HR" "$U/api/records/P/history?Name=abc" | wc -l)"
# =?= tells "ABC" from "abc" where the store's key (===) does not: 404, as the statement says
check "a key in the wrong case is not the record" 404 "$(code -H "$HR" "$U/api/records/P?Name=ABC")"
check "no such record" 404 "$(code -H "$HR" "$U/api/records/P?Name=nope")"
contains "no such record's message" '"no record has that key"' "$(cat "$work/body")"
check "no history" 200 "$(code -H "$HR" "$U/api/records/P/history?Name=nope")"
check "no history: no lines" "" "$(cat "$work/body")"
check "an unknown type" 404 "$(code -H "$HR" "$U/api/records/Nope?Name=abc")"
contains "an unknown type's message" "no type named Nope" "$(cat "$work/body")"
check "an argument beside the key (a statement)" 200 "$(code -H "$HR" "$U/api/records/P?Name=abc&V=3")"
contains "an argument beside the key filters" '"V":3' "$(cat "$work/body")"
check "an argument beside the key that does not match" 404 "$(code -H "$HR" "$U/api/records/P?Name=abc&V=1")"
check "the key twice" 404 "$(code -H "$HR" "$U/api/records/P?Name=abc&Name=x")"
curl -s -H "$HW" --data 'DELETE FROM P WHERE Name == "abc"' "$U/api/query" > /dev/null
check "a deleted record" 404 "$(code -H "$HR" "$U/api/records/P?Name=abc")"
same_as_statement "a deleted record's history" "/api/records/P/history?Name=abc" 'SELECT * FROM P WHERE Name =?= "abc" && _Deleted =!= undefined && @anytime()'
# a history past the 64 KiB head goes to the statement, streamed
python3 -c '
for i in range(300): print("[ AdType = \"P\"; Name = \"big\"; V = %d; Pad = \"%s\"; _Timestamp = `2024-01-01T00:%02d:%02dZ` ]" % (i, "y" * 300, i // 60, i % 60))' > "$work/big.ads"
curl -s -H "$HW" --data-binary @"$work/big.ads" "$U/api/records" > /dev/null
check "a long history, whole" 300 "$(curl -s -H "$HR" "$U/api/records/P/history?Name=big" | wc -l)"
same_as_statement "a long history" "/api/records/P/history?Name=big" 'SELECT * FROM P WHERE Name =?= "big" && _Deleted =!= undefined && @anytime()'

# ---- a statement failing after its rows started: the response is cut ----
# csv of SELECT * over all types learns its columns from the first 1000 rows
# (A's); B's attribute Extra then stops the statement, 200 KB into the answer.
mkdir -p "$work/cut"
(
  start_server "$work/cut" || exit 1
  curl -s --data 'STORE [ AdType = "Type"; ForType = "A"; KeyAttributes = { "K" } ], [ AdType = "Type"; ForType = "B"; KeyAttributes = { "K" } ]' "$ADSTORE_URL/api/query" > /dev/null
  python3 -c '
for i in range(2000): print("[ AdType = \"A\"; K = %d; Pad = \"%s\" ]" % (i, "x" * 100))
for i in range(5): print("[ AdType = \"B\"; K = %d; Extra = 1 ]" % i)' > "$work/cut/m.ads"
  curl -s --data-binary @"$work/cut/m.ads" "$ADSTORE_URL/api/import" > /dev/null
  curl -s --data 'SELECT *' "$ADSTORE_URL/api/query?format=csv" -o "$work/cut/out"
  echo "csv-curl=$?"
  curl -s --data 'SELECT *' "$ADSTORE_URL/api/query?format=jsonl" -o /dev/null
  echo "jsonl-curl=$?"
  stop_server TERM
  grep -c ' POST /api/query 499 ' "$work/cut/serve.log"
) > "$work/cut/result"
check "a failed stream is cut short (curl: partial file) and logged 499" \
  "csv-curl=18 jsonl-curl=0 1" "$(paste -sd' ' "$work/cut/result")"

# ---- concurrent readers and a writer ----
for r in 1 2 3 4; do
  (for i in $(seq 1 15); do
     curl -s -H "$HR" --data 'SELECT count(*) AS n FROM T' "$U/api/query" >> "$work/reads.$r"
   done) &
done
for i in $(seq 30000 30099); do
  curl -s -H "$HW" --data "[ AdType = \"T\"; K = $i ]" "$U/api/records" >> "$work/writes"
done
wait $(jobs -p | grep -v "^$SERVER_PID\$") 2>/dev/null
check "every write acknowledged" 100 "$(grep -c '{"stored":1,"unchanged":0}' "$work/writes")"
torn=$(cat "$work"/reads.* | python3 -c '
import json, sys
bad = 0; prev = 0
for line in sys.stdin:
    n = json.loads(line)["n"]
    if not 30000 <= n <= 30100: bad += 1
print(bad)')
check "reads are whole counts between the writes" 0 "$torn"
check "nothing lost" '{"n":30100}' "$(curl -s -H "$HR" --data 'SELECT count(*) AS n FROM T' "$U/api/query")"

# ---- slow readers of huge results hold only their own statements ----
# Six clients read a 13 MB result at 20 KB/s (more than the pool's four
# waiting threads); a statement and a record read sent meanwhile are
# answered while all six are still reading, and once the six hang up their
# statements stop (the server is idle again).
big='SELECT K, strcat(Pad, Pad, Pad, Pad, Pad, Pad, Pad, Pad, Pad, Pad) AS P FROM T'
slow_pids=""
for i in 1 2 3 4 5 6; do
  curl -s --limit-rate 20K -H "$HR" --data "$big" "$U/api/query" -o /dev/null &
  slow_pids="$slow_pids $!"
done
for i in $(seq 1 100); do # until the server has all six in flight (stats is the seventh)
  curl -s -H "$HR" "$U/api/stats" | grep -q '"active":7' && break
  sleep 0.1
done
check "a statement beside six slow readers" '{"n":30100}' "$(curl -s -m 60 -H "$HR" --data 'SELECT count(*) AS n FROM T' "$U/api/query")"
check "a record beside six slow readers" 200 "$(code -m 60 -H "$HR" "$U/api/records/T?K=5")"
alive=0
for p in $slow_pids; do kill -0 "$p" 2>/dev/null && alive=$((alive + 1)); done
check "the six were still reading" 6 "$alive"
kill $slow_pids 2>/dev/null
wait $slow_pids 2>/dev/null
for i in $(seq 1 100); do
  curl -s -H "$HR" "$U/api/stats" | grep -q '"active":1,' && break
  sleep 0.1
done
contains "their statements stopped when they hung up" '"active":1,' "$(curl -s -H "$HR" "$U/api/stats")"

# ---- SIGTERM with a request in flight ----
# 30200 rows of 440 bytes read at 2 MB/s: several seconds, far more than the
# socket buffers hold, so the response is still being sent when TERM comes.
big='SELECT K, strcat(Pad, Pad, Pad, Pad, Pad, Pad, Pad, Pad, Pad, Pad) AS P FROM T'
curl -s --limit-rate 2M -H "$HR" --data "$big" "$U/api/query" > "$work/slow" &
slow=$!
for i in $(seq 1 100); do # until the server counts it in flight (stats itself is the other)
  curl -s -H "$HR" "$U/api/stats" | grep -q '"active":[2-9]' && break
  sleep 0.1
done
stop_server TERM
wait "$slow"
check "the request in flight finished" 30100 "$(wc -l < "$work/slow")"
check "serve exits 0 on SIGTERM" 0 "$SERVER_STATUS"
check "it was in flight when the signal came" "POST /api/query 200" \
  "$(sed -n '/^stopping on signal 15/,$p' "$work/serve.log" | grep -o 'POST /api/query 200' | head -1)"
contains "the store was closed" "serve: stopped; the store is closed" "$(cat "$work/serve.log")"
contains "one log line per request" " r POST /api/query 200 " "$(cat "$work/serve.log")"

# ---- the drain: new connections refused, a statement past it answered 503 ----
# 150,000 terms over 20,000 records: minutes of work, interrupted when the
# 30 s drain (ADS_SERVE_DRAIN_SECONDS) runs out.
mkdir -p "$work/drain"
(
  start_server "$work/drain" || exit 1
  curl -s --data 'STORE [ AdType = "Type"; ForType = "D"; KeyAttributes = { "K" } ]' "$ADSTORE_URL/api/query" > /dev/null
  python3 -c 'for i in range(20000): print("[ AdType = \"D\"; K = %d ]" % i)' > "$work/drain/d.ads"
  curl -s --data-binary @"$work/drain/d.ads" "$ADSTORE_URL/api/import" > /dev/null
  python3 -c 'print("SELECT K FROM D WHERE " + " || ".join("K == -%d" % i for i in range(1, 150001)))' > "$work/drain/q.txt"
  curl -s -o "$work/drain/out" -w '%{http_code}' --data-binary @"$work/drain/q.txt" "$ADSTORE_URL/api/query" > "$work/drain/code" &
  long=$!
  for i in $(seq 1 300); do # until the statement is in flight
    curl -s "$ADSTORE_URL/api/stats" | grep -q '"active":[2-9]' && break
    sleep 0.1
  done
  kill -TERM "$SERVER_PID"
  sleep 1
  curl -s -m 5 -o /dev/null "$ADSTORE_URL/api/health"
  echo "new=$?"
  wait "$long"
  echo "long=$(cat "$work/drain/code") $(grep -o 'the server is shutting down' "$work/drain/out")"
  stop_server TERM
  echo "exit=$SERVER_STATUS"
) > "$work/drain/result" 2>&1
check "the drain: new connections refused (curl: 7), a statement past it 503, exit 0" \
  "new=7 long=503 the server is shutting down exit=0" "$(paste -sd' ' "$work/drain/result")"

# ---- TLS ----
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$work/key.pem" -out "$work/cert.pem" \
  -days 2 -subj /CN=localhost -addext subjectAltName=IP:127.0.0.1 2>/dev/null
start_server "$work" --tokens "$work/tokens" --tls-cert "$work/cert.pem" --tls-key "$work/key.pem" || exit 1
check "TLS" 200 "$(code --cacert "$work/cert.pem" -H "$HR" --data 'SELECT count(*) AS n FROM T' "$ADSTORE_URL/api/query")"
check "TLS answer" '{"n":30100}' "$(cat "$work/body")"
check "TLS with an unknown certificate fails" 000 "$(code "$ADSTORE_URL/api/health")"
check "plain HTTP to a TLS port fails" 000 "$(code "http://127.0.0.1:$PORT/api/health")"
stop_server TERM
check "TLS server exits 0" 0 "$SERVER_STATUS"

# ---- kill -9 under writes ----
start_server "$work" --tokens "$work/tokens" || exit 1
: > "$work/acked"
(for i in $(seq 100000 100999); do
   if curl -s -H "$HW" --data "[ AdType = \"T\"; K = $i ]" "$ADSTORE_URL/api/records" | grep -q '"stored":1'; then
     echo "$i" >> "$work/acked"
   fi
 done) &
writer=$!
for i in $(seq 1 100); do [ "$(wc -l < "$work/acked")" -ge 50 ] && break; sleep 0.1; done
stop_server KILL
wait "$writer"
acked=$(wc -l < "$work/acked")
checks=$((checks + 1))
[ "$acked" -ge 1 ] || { echo "FAIL no write acknowledged before the kill"; failures=$((failures + 1)); }
"$ADSTORE" -d "$work/db" verify > "$work/verify" 2>&1
check "the store verifies after kill -9" 0 "$?"
"$ADSTORE" -d "$work/db" execute -f values 'SELECT K FROM T WHERE K >= 100000' 2>/dev/null | sort > "$work/present"
missing=$(sort "$work/acked" | comm -23 - "$work/present" | wc -l)
check "every acknowledged write is there" 0 "$missing"

checks=$((checks + 1))
if grep -n 'Sanitizer\|runtime error' "$work/serve.log"; then
  echo "FAIL the server's log has sanitizer reports (above)"
  failures=$((failures + 1))
fi

echo "check_server: $checks checks, $failures failed"
[ "$failures" = 0 ]
