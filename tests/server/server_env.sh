# tests/server/server_env.sh: sourced by the server's test scripts. Starts
# `adstore serve` on a free loopback port and stops it; needs curl.
#   start_server DIR ARGS...  sets SERVER_PID, PORT, ADSTORE_URL (ARGS go to
#                             serve; its log is DIR/serve.log)
#   stop_server [SIGNAL]      signals it (TERM) and waits; sets SERVER_STATUS

require_tools() {
  local t
  for t in "$@"; do
    if ! command -v "$t" > /dev/null 2>&1; then
      echo "SKIP: $t is not installed (tools/setup.sh installs it)"
      exit 77
    fi
  done
}

start_server() {
  local dir=$1 scheme=http i
  shift
  case " $* " in *" --tls-cert "*) scheme=https ;; esac
  rm -f "$dir/port"
  "$ADSTORE" -d "$dir/db" serve --listen 127.0.0.1:0 --port-file "$dir/port" "$@" \
    2>> "$dir/serve.log" &
  SERVER_PID=$!
  for i in $(seq 1 200); do
    [ -s "$dir/port" ] && break
    if ! kill -0 "$SERVER_PID" 2> /dev/null; then
      echo "the server did not start:"
      cat "$dir/serve.log"
      return 1
    fi
    sleep 0.05
  done
  [ -s "$dir/port" ] || { echo "the server wrote no port in 10 s"; return 1; }
  PORT=$(cat "$dir/port")
  ADSTORE_URL=$scheme://127.0.0.1:$PORT
  export ADSTORE_URL
}

stop_server() {
  kill -"${1:-TERM}" "$SERVER_PID" 2> /dev/null
  SERVER_STATUS=0
  wait "$SERVER_PID" || SERVER_STATUS=$?
}
