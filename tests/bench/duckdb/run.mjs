// tests/bench/duckdb/run.mjs: DuckDB as a peer in adstore-bench (issue 17).
//
//   node run.mjs DATABASE STATEMENT...
//
// Opens (or creates) DATABASE with one thread (SET threads=1, as the bench
// compares single-threaded work), runs each statement in order, and closes
// the database, which checkpoints it. Queries write their rows themselves
// with COPY (...) TO '/dev/stdout' (FORMAT csv, HEADER), DuckDB's own csv
// writer. Exits 1 with the error on stderr if a statement fails.
import { DuckDBInstance } from '@duckdb/node-api';

const [path, ...statements] = process.argv.slice(2);
if (!path || statements.length === 0) {
  process.stderr.write('usage: node run.mjs DATABASE STATEMENT...\n');
  process.exit(2);
}
try {
  const instance = await DuckDBInstance.create(path, { threads: '1' });
  const connection = await instance.connect();
  for (const sql of statements) {
    await connection.run(sql);
  }
  connection.closeSync();
  instance.closeSync();
} catch (e) {
  process.stderr.write(`duckdb: ${e.message}\n`);
  process.exit(1);
}
