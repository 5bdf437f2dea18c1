//! A database's logical contents as one comparable value: rows and an order-free digest.

use crate::error::WorkloadError;
use crate::sqlite::sql_err;
use rusqlite::Connection;
use rusqlite::types::ValueRef;
use serde::{Deserialize, Serialize};
use std::fmt;

/// The logical contents of a workload's database: rows over its tables, and a digest that
/// is the wrapping sum of one hash per row (table name and every column value). It does not
/// depend on page layout, row order or journal mode; any changed, added or lost row changes
/// it (but for a 2⁻⁶⁴ chance). For RL Benchmark, which creates and drops its tables, the
/// schema's entries (type, name, table, SQL) count as rows too.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Summary {
    pub rows: u64,
    pub digest: u64,
}

impl Summary {
    pub const EMPTY: Summary = Summary { rows: 0, digest: 0 };

    pub(crate) fn add_row(&mut self, table: &str, values: &[ValueRef<'_>]) {
        self.rows += 1;
        self.digest = self.digest.wrapping_add(row_hash(table, values));
    }

    pub(crate) fn remove_row(&mut self, table: &str, values: &[ValueRef<'_>]) {
        self.rows -= 1;
        self.digest = self.digest.wrapping_sub(row_hash(table, values));
    }
}

impl fmt::Display for Summary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} rows, digest {:016x}", self.rows, self.digest)
    }
}

/// One row's hash: FNV-1a over the table name and a tagged encoding of each value, finished
/// with splitmix64 so that the sum of many row hashes stays well spread.
struct RowHasher(u64);

impl RowHasher {
    const PRIME: u64 = 0x0000_0100_0000_01b3;

    fn new(table: &str) -> RowHasher {
        let mut h = RowHasher(0xcbf2_9ce4_8422_2325);
        h.eat(table.as_bytes());
        h
    }

    fn eat(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(Self::PRIME);
        }
    }

    fn value(&mut self, v: ValueRef<'_>) {
        match v {
            ValueRef::Null => self.eat(&[0]),
            ValueRef::Integer(i) => {
                self.eat(&[1]);
                self.eat(&i.to_le_bytes());
            }
            ValueRef::Real(r) => {
                self.eat(&[2]);
                self.eat(&r.to_bits().to_le_bytes());
            }
            ValueRef::Text(t) => {
                self.eat(&[3]);
                self.eat(&(t.len() as u64).to_le_bytes());
                self.eat(t);
            }
            ValueRef::Blob(b) => {
                self.eat(&[4]);
                self.eat(&(b.len() as u64).to_le_bytes());
                self.eat(b);
            }
        }
    }

    fn finish(self) -> u64 {
        let mut z = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

fn row_hash(table: &str, values: &[ValueRef<'_>]) -> u64 {
    let mut h = RowHasher::new(table);
    for &v in values {
        h.value(v);
    }
    h.finish()
}

/// Add every row of `table` (a table name or a parenthesised subquery) to `summary`; the
/// caller holds a read transaction.
pub(super) fn digest_table(
    conn: &Connection,
    table: &str,
    summary: &mut Summary,
) -> Result<(), WorkloadError> {
    let what = format!("reading {table} for its digest");
    let mut stmt = conn
        .prepare(&format!("SELECT * FROM {table}"))
        .map_err(sql_err(what.clone()))?;
    let columns = stmt.column_count();
    let mut rows = stmt.query([]).map_err(sql_err(what.clone()))?;
    while let Some(row) = rows.next().map_err(sql_err(what.clone()))? {
        let mut h = RowHasher::new(table);
        for i in 0..columns {
            h.value(row.get_ref(i).map_err(sql_err(what.clone()))?);
        }
        summary.rows += 1;
        summary.digest = summary.digest.wrapping_add(h.finish());
    }
    Ok(())
}
