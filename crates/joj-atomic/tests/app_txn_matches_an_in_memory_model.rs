//! Random application transactions (transfers, inserts with notes of random size, deletes,
//! overwrites and appends of the ledger; committed, aborted or dropped) against an obviously
//! correct reference: the same SQL on SQLite's in-memory databases inside `BEGIN … COMMIT /
//! ROLLBACK`, and a `Vec` for the ledger. Inside a transaction its own connections read its
//! writes; after it, the same connections (their page caches kept) and the ledger equal the
//! reference. Every random choice comes from one seed (`JOJ_SEED`, printed on failure).
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

use common::bank::{self, State};
use joj_atomic::{AppTxn, AppTxnError, XDevice};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rusqlite::Connection;

const STEPS: u64 = 250;

/// The reference: two in-memory databases and the ledger's bytes.
struct Reference {
    a: Connection,
    b: Connection,
    ledger: Vec<u8>,
}

impl Reference {
    fn state(&self, ledger: &[u8]) -> State {
        State {
            a: bank::digest(&self.a).unwrap(),
            b: bank::digest(&self.b).unwrap(),
            ledger: ledger.to_vec(),
        }
    }
}

/// One random operation, on the device inside `tx` and on the reference.
fn op(
    r: &mut ChaCha8Rng,
    tx: &mut AppTxn<XDevice>,
    (a, b): (&Connection, &Connection),
    m: &Reference,
    ledger: &mut Vec<u8>,
    step: u64,
) -> Result<(), AppTxnError> {
    let both = |sql: &str, on_a: bool, p: &[&dyn rusqlite::ToSql]| {
        let (dev, reference) = if on_a { (a, &m.a) } else { (b, &m.b) };
        reference.execute(sql, p).unwrap();
        (dev, sql.to_string())
    };
    match r.random_range(0..4u32) {
        0 => {
            let (from, to, amount) = (
                r.random_range(1..=bank::ACCOUNTS),
                r.random_range(1..=bank::ACCOUNTS),
                r.random_range(1..=500i64),
            );
            let up = "UPDATE account SET balance = balance - ?2 WHERE id = ?1";
            let (c, s) = both(up, true, &[&from, &amount]);
            tx.sql(|| c.execute(&s, rusqlite::params![from, amount]))?;
            let up = "UPDATE account SET balance = balance + ?2 WHERE id = ?1";
            let (c, s) = both(up, false, &[&to, &amount]);
            tx.sql(|| c.execute(&s, rusqlite::params![to, amount]))?;
            let rec = format!("{step:06} {from}>{to} {amount}\n");
            tx.append(bank::LEDGER, rec.as_bytes())?;
            ledger.extend(rec.as_bytes());
        }
        1 => {
            let id = 100_000 + step as i64 * 10 + r.random_range(0..10i64);
            let note = "m".repeat(r.random_range(10..6000usize));
            let ins = "INSERT OR REPLACE INTO account VALUES (?1, 0, ?2)";
            let (c, s) = both(ins, false, &[&id, &note]);
            tx.sql(|| c.execute(&s, rusqlite::params![id, note]))?;
        }
        2 => {
            let id = r.random_range(1..=bank::ACCOUNTS);
            let (c, s) = both("DELETE FROM account WHERE id = ?1", true, &[&id]);
            tx.sql(|| c.execute(&s, [id]))?;
        }
        _ => {
            let size = tx.file_size(bank::LEDGER)?;
            assert_eq!(size, ledger.len() as u64);
            let at = r.random_range(0..=size);
            let data: Vec<u8> = (0..r.random_range(1..200usize))
                .map(|_| r.random_range(b'a'..=b'z'))
                .collect();
            tx.write_file(bank::LEDGER, at, &data)?;
            let end = at as usize + data.len();
            if ledger.len() < end {
                ledger.resize(end, 0);
            }
            ledger[at as usize..end].copy_from_slice(&data);
        }
    }
    Ok(())
}

#[test]
fn random_transactions_match_the_reference_after_each_commit_and_abort() {
    let seed = common::seed(1);
    let vfs = joj_atomic::register("apptxn-model").unwrap();
    vfs.attach(common::formatted(&common::profile(64))).unwrap();
    bank::setup(&vfs);
    let mut r = ChaCha8Rng::seed_from_u64(seed);
    let mut m = Reference {
        a: Connection::open_in_memory().unwrap(),
        b: Connection::open_in_memory().unwrap(),
        ledger: Vec::new(),
    };
    bank::schema(&m.a, true).unwrap();
    bank::schema(&m.b, true).unwrap();
    let a = bank::open_off(vfs.name(), "a.db").unwrap();
    let b = bank::open_off(vfs.name(), "b.db").unwrap();
    let (mut commits, mut aborts) = (0, 0);
    for step in 0..STEPS {
        let mut tx = vfs.begin_app().unwrap();
        tx.enroll(&a).unwrap();
        tx.enroll(&b).unwrap();
        m.a.execute_batch("BEGIN").unwrap();
        m.b.execute_batch("BEGIN").unwrap();
        let mut ledger = m.ledger.clone();
        for _ in 0..r.random_range(1..=4u32) {
            op(&mut r, &mut tx, (&a, &b), &m, &mut ledger, step)
                .unwrap_or_else(|e| panic!("seed {seed}, step {step}: {e}"));
        }
        // The transaction reads its own writes.
        let inside = tx
            .sql(|| Ok((bank::digest(&a)?, bank::digest(&b)?)))
            .unwrap();
        let want = m.state(&ledger);
        assert_eq!(inside, (want.a, want.b), "seed {seed}, step {step}: inside");
        let end = r.random_range(0..10u32);
        if end < 6 {
            tx.commit().unwrap();
            m.a.execute_batch("COMMIT").unwrap();
            m.b.execute_batch("COMMIT").unwrap();
            m.ledger = ledger;
            commits += 1;
        } else {
            if end < 9 {
                tx.abort().unwrap();
            } else {
                drop(tx);
            }
            m.a.execute_batch("ROLLBACK").unwrap();
            m.b.execute_batch("ROLLBACK").unwrap();
            aborts += 1;
        }
        let seen = State {
            a: bank::digest(&a).unwrap(),
            b: bank::digest(&b).unwrap(),
            ledger: bank::read_ledger(&vfs).unwrap(),
        };
        assert!(
            seen == m.state(&m.ledger),
            "seed {seed}, step {step}: the device differs from the reference"
        );
    }
    assert_eq!(bank::observe(&vfs).unwrap(), m.state(&m.ledger));
    eprintln!("seed {seed}: {commits} commits, {aborts} aborts match the reference");
}
