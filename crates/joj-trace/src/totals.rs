//! Block totals of a run: how many requests and bytes went to the device, and how the written
//! bytes divide into file data (by SQLite role), filesystem metadata and filesystem journal —
//! the MOST-style breakdown of the papers.
//!
//! Only writes are divided by class: reads are counted apart (`read_bytes`) and discards apart
//! (`discard_bytes`). Invariants, checked by [`BlockTotals::is_consistent`]:
//! `data_bytes + metadata_bytes + fs_journal_bytes + unclassified_bytes == write_bytes` and
//! `data_by_role` sums to `data_bytes`.

use std::ops::AddAssign;

use serde::{Deserialize, Serialize};

use crate::TraceError;
use crate::record::{BlockClass, FileRole, Op, SECTOR_BYTES, TraceRecord};

/// Written file-data bytes by the role of the file they belong to.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub struct DataByRole {
    #[serde(rename = "database_bytes", alias = "database")]
    pub database: u64,
    #[serde(rename = "wal_bytes", alias = "wal")]
    pub wal: u64,
    #[serde(rename = "rollback_journal_bytes", alias = "rollback_journal")]
    pub rollback_journal: u64,
    #[serde(rename = "other_bytes", alias = "other")]
    pub other: u64,
}

impl DataByRole {
    pub fn get(&self, role: FileRole) -> u64 {
        match role {
            FileRole::Database => self.database,
            FileRole::Wal => self.wal,
            FileRole::RollbackJournal => self.rollback_journal,
            FileRole::Other => self.other,
        }
    }

    pub fn add(&mut self, role: FileRole, bytes: u64) {
        match role {
            FileRole::Database => self.database += bytes,
            FileRole::Wal => self.wal += bytes,
            FileRole::RollbackJournal => self.rollback_journal += bytes,
            FileRole::Other => self.other += bytes,
        }
    }

    pub fn total(&self) -> u64 {
        self.database + self.wal + self.rollback_journal + self.other
    }
}

/// `joj trace show`: a trace file's header, its number of requests and their block totals
/// (`docs/formats/joj-trace.md`, "What `joj trace show` prints").
#[derive(Debug, Clone, Serialize)]
pub struct TraceSummary {
    pub block: BlockTotals,
    pub header: crate::format::TraceHeader,
    pub records: usize,
}

impl TraceSummary {
    /// The summary of a trace read from a file; fails, naming the record, when the bytes of
    /// the records add up to more than a `u64` holds ([`check_bytes_fit`]).
    pub fn of(
        header: crate::format::TraceHeader,
        records: &[TraceRecord],
    ) -> Result<TraceSummary, TraceError> {
        check_bytes_fit(records)?;
        Ok(TraceSummary {
            block: BlockTotals::from_records(records),
            header,
            records: records.len(),
        })
    }

    /// The summary of records given one at a time (a trace read from its file as it is
    /// summed: what is held does not grow with the trace), as [`TraceSummary::of`] makes it;
    /// the first error of `records` is returned.
    pub fn of_records(
        header: crate::format::TraceHeader,
        records: impl Iterator<Item = Result<TraceRecord, TraceError>>,
    ) -> Result<TraceSummary, TraceError> {
        let mut block = BlockTotals::default();
        let mut bytes: u64 = 0;
        let mut count = 0usize;
        for r in records {
            let r = r?;
            bytes = r
                .sectors
                .checked_mul(SECTOR_BYTES)
                .and_then(|b| bytes.checked_add(b))
                .ok_or(TraceError::BytesOverflow {
                    index: count,
                    sectors: r.sectors,
                })?;
            block.count_record(&r);
            count += 1;
        }
        Ok(TraceSummary {
            block,
            header,
            records: count,
        })
    }
}

/// Check that the bytes of all of `records`, whatever their op, add up to at most `u64::MAX`.
/// Every total of [`BlockTotals`] and every per-series sum of a plot adds the bytes of a subset
/// of the records, so once this holds none of them can wrap. A trace file may carry any
/// `sectors` the JSON holds; the first record that brings the sum past the bound is named.
pub fn check_bytes_fit(records: &[TraceRecord]) -> Result<(), TraceError> {
    let mut sum: u64 = 0;
    for (index, r) in records.iter().enumerate() {
        sum = r
            .sectors
            .checked_mul(SECTOR_BYTES)
            .and_then(|b| sum.checked_add(b))
            .ok_or(TraceError::BytesOverflow {
                index,
                sectors: r.sectors,
            })?;
    }
    Ok(())
}

/// Counts and bytes of the block requests of a run (or of one device of it).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub struct BlockTotals {
    /// Every request, flushes and discards included.
    pub requests: u64,
    pub read_requests: u64,
    pub write_requests: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    /// Written bytes of regular files (the sum of `data_by_role`).
    pub data_bytes: u64,
    /// Written bytes of filesystem metadata outside the journal.
    pub metadata_bytes: u64,
    /// Written bytes of the filesystem journal.
    pub fs_journal_bytes: u64,
    /// Written bytes of records that were never classified (class `Unknown`), so the classes
    /// always add up to `write_bytes`.
    #[serde(default)]
    pub unclassified_bytes: u64,
    pub discard_bytes: u64,
    /// Cache flushes: pure flush requests plus requests carrying a preflush.
    pub flushes: u64,
    /// Writes with forced unit access.
    pub fua: u64,
    /// Written file-data bytes by file role.
    pub data_by_role: DataByRole,
}

/// [`BlockTotals`] divided by a number of transactions.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub struct BlockPerTxn {
    pub requests: f64,
    pub read_requests: f64,
    pub write_requests: f64,
    pub read_bytes: f64,
    pub write_bytes: f64,
    pub data_bytes: f64,
    pub metadata_bytes: f64,
    pub fs_journal_bytes: f64,
    #[serde(default)]
    pub unclassified_bytes: f64,
    pub discard_bytes: f64,
    pub flushes: f64,
    pub fua: f64,
    pub data_by_role: DataByRolePerTxn,
}

/// [`DataByRole`] divided by a number of transactions.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub struct DataByRolePerTxn {
    #[serde(rename = "database_bytes", alias = "database")]
    pub database: f64,
    #[serde(rename = "wal_bytes", alias = "wal")]
    pub wal: f64,
    #[serde(rename = "rollback_journal_bytes", alias = "rollback_journal")]
    pub rollback_journal: f64,
    #[serde(rename = "other_bytes", alias = "other")]
    pub other: f64,
}

impl BlockTotals {
    /// Sum already-classified records, attributing each record's written bytes wholly to its
    /// own class (the majority label). [`crate::classify::classify`] gives the exact per-sector split
    /// instead; prefer its totals when a layout is at hand.
    pub fn from_records(records: &[TraceRecord]) -> Self {
        let mut t = Self::default();
        records.iter().for_each(|rec| t.count_record(rec));
        t
    }

    /// Count one record as [`BlockTotals::from_records`] counts each.
    fn count_record(&mut self, rec: &TraceRecord) {
        self.count_request(rec);
        if rec.op == Op::Write {
            self.add_write(rec.class, rec.file, rec.bytes());
        }
    }

    /// Count a request in every field except the division of written bytes by class.
    pub(crate) fn count_request(&mut self, rec: &TraceRecord) {
        self.requests += 1;
        match rec.op {
            Op::Read => {
                self.read_requests += 1;
                self.read_bytes += rec.bytes();
            }
            Op::Write => {
                self.write_requests += 1;
                self.write_bytes += rec.bytes();
                if rec.fua {
                    self.fua += 1;
                }
            }
            Op::Discard => self.discard_bytes += rec.bytes(),
            Op::Flush | Op::Other => {}
        }
        if rec.is_flush() {
            self.flushes += 1;
        }
    }

    /// Attribute `bytes` written to `class` (and, for data, to the file's role; data of an
    /// unknown file counts as `other`).
    pub(crate) fn add_write(&mut self, class: BlockClass, file: Option<FileRole>, bytes: u64) {
        match class {
            BlockClass::Data => {
                self.data_bytes += bytes;
                self.data_by_role
                    .add(file.unwrap_or(FileRole::Other), bytes);
            }
            BlockClass::Metadata => self.metadata_bytes += bytes,
            BlockClass::FsJournal => self.fs_journal_bytes += bytes,
            BlockClass::Unknown | BlockClass::Flush => self.unclassified_bytes += bytes,
        }
    }

    /// Whether the classes add up to the written bytes and the roles to the data bytes.
    pub fn is_consistent(&self) -> bool {
        self.data_bytes + self.metadata_bytes + self.fs_journal_bytes + self.unclassified_bytes
            == self.write_bytes
            && self.data_by_role.total() == self.data_bytes
    }

    /// Every field divided by `transactions`. With zero transactions there is nothing per
    /// transaction to report, and every field is 0 (not NaN, which JSON cannot carry).
    pub fn per_txn(&self, transactions: u64) -> BlockPerTxn {
        let div = |v: u64| {
            if transactions == 0 {
                0.0
            } else {
                v as f64 / transactions as f64
            }
        };
        BlockPerTxn {
            requests: div(self.requests),
            read_requests: div(self.read_requests),
            write_requests: div(self.write_requests),
            read_bytes: div(self.read_bytes),
            write_bytes: div(self.write_bytes),
            data_bytes: div(self.data_bytes),
            metadata_bytes: div(self.metadata_bytes),
            fs_journal_bytes: div(self.fs_journal_bytes),
            unclassified_bytes: div(self.unclassified_bytes),
            discard_bytes: div(self.discard_bytes),
            flushes: div(self.flushes),
            fua: div(self.fua),
            data_by_role: DataByRolePerTxn {
                database: div(self.data_by_role.database),
                wal: div(self.data_by_role.wal),
                rollback_journal: div(self.data_by_role.rollback_journal),
                other: div(self.data_by_role.other),
            },
        }
    }
}

impl AddAssign<&BlockTotals> for BlockTotals {
    /// Merge totals, e.g. of a main and an external journal device.
    fn add_assign(&mut self, o: &BlockTotals) {
        self.requests += o.requests;
        self.read_requests += o.read_requests;
        self.write_requests += o.write_requests;
        self.read_bytes += o.read_bytes;
        self.write_bytes += o.write_bytes;
        self.data_bytes += o.data_bytes;
        self.metadata_bytes += o.metadata_bytes;
        self.fs_journal_bytes += o.fs_journal_bytes;
        self.unclassified_bytes += o.unclassified_bytes;
        self.discard_bytes += o.discard_bytes;
        self.flushes += o.flushes;
        self.fua += o.fua;
        self.data_by_role.database += o.data_by_role.database;
        self.data_by_role.wal += o.data_by_role.wal;
        self.data_by_role.rollback_journal += o.data_by_role.rollback_journal;
        self.data_by_role.other += o.data_by_role.other;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(op: Op, sectors: u64, class: BlockClass, file: Option<FileRole>) -> TraceRecord {
        TraceRecord {
            time_ns: 0,
            dev: "7:0".into(),
            op,
            preflush: false,
            fua: false,
            sync: false,
            meta: false,
            sector: 0,
            sectors,
            comm: "t".into(),
            class,
            file,
            complete_ns: None,
        }
    }

    fn sample() -> Vec<TraceRecord> {
        let mut commit = rec(Op::Write, 8, BlockClass::FsJournal, None);
        commit.preflush = true;
        commit.fua = true;
        vec![
            rec(Op::Write, 8, BlockClass::Data, Some(FileRole::Wal)),
            rec(Op::Write, 16, BlockClass::Data, Some(FileRole::Database)),
            rec(Op::Write, 8, BlockClass::Data, None),
            rec(Op::Write, 8, BlockClass::Metadata, None),
            rec(Op::Write, 24, BlockClass::FsJournal, None),
            commit,
            rec(Op::Write, 8, BlockClass::Unknown, None),
            rec(Op::Read, 32, BlockClass::Data, Some(FileRole::Database)),
            rec(Op::Flush, 0, BlockClass::Flush, None),
            rec(Op::Discard, 2048, BlockClass::Metadata, None),
        ]
    }

    #[test]
    fn records_sum_by_their_own_class_and_only_writes_are_divided() {
        let t = BlockTotals::from_records(&sample());
        assert_eq!(t.requests, 10);
        assert_eq!((t.read_requests, t.write_requests), (1, 7));
        assert_eq!(t.read_bytes, 32 * 512);
        assert_eq!(t.write_bytes, 80 * 512);
        assert_eq!(t.data_bytes, 32 * 512);
        assert_eq!(t.data_by_role.wal, 8 * 512);
        assert_eq!(t.data_by_role.database, 16 * 512);
        assert_eq!(t.data_by_role.other, 8 * 512);
        assert_eq!(t.metadata_bytes, 8 * 512);
        assert_eq!(t.fs_journal_bytes, 32 * 512);
        assert_eq!(t.unclassified_bytes, 8 * 512);
        assert_eq!(t.discard_bytes, 2048 * 512);
        assert_eq!((t.flushes, t.fua), (2, 1));
        assert!(t.is_consistent());
    }

    #[test]
    fn per_txn_divides_every_field_and_zero_transactions_give_zero() {
        let t = BlockTotals::from_records(&sample());
        let p = t.per_txn(4);
        assert_eq!(p.requests, 2.5);
        assert_eq!(p.write_bytes, 80.0 * 512.0 / 4.0);
        assert_eq!(p.data_by_role.wal, 1024.0);
        assert_eq!(p.flushes, 0.5);
        assert_eq!(t.per_txn(0), BlockPerTxn::default());
    }

    #[test]
    fn totals_serialize_in_snake_case_and_merge() {
        let t = BlockTotals::from_records(&sample());
        let json = serde_json::to_value(&t).expect("json");
        assert_eq!(json["fs_journal_bytes"], 32 * 512);
        assert_eq!(json["data_by_role"]["rollback_journal_bytes"], 0);
        let back: BlockTotals = serde_json::from_value(json).expect("parse");
        assert_eq!(back, t);

        let mut sum = t.clone();
        sum += &t;
        assert_eq!(sum.write_bytes, 2 * t.write_bytes);
        assert_eq!(sum.data_by_role.wal, 2 * t.data_by_role.wal);
        assert!(sum.is_consistent());
    }
}
