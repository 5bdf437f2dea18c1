//! A TPC-C-like workload (X-FTL paper §6.3.3, Table 3): TPC-C's nine tables and its five
//! transactions as SQL, run one at a time on one connection, as the paper did ("the number of
//! database connections was set to one").
//!
//! Cardinalities are TPC-C's divided by ten so that a warehouse loads in well under a second:
//!
//! | per warehouse | TPC-C | here |
//! |---|---|---|
//! | items (shared), stock | 100,000 | 10,000 |
//! | districts | 10 | 10 |
//! | customers per district | 3,000 | 300 |
//! | initial orders per district | 3,000 | 300 (5–15 lines each) |
//! | of them undelivered (`new_order`) | 900 | 90 |
//!
//! The non-uniform random constants shrink with them: `NURand(127, 1, 300)` for customer
//! numbers (TPC-C: `A` = 1023), `NURand(1023, 1, 10000)` for items (8191), and last names are
//! TPC-C's syllable names of 0..=299, each district holding every one, so a lookup by name
//! always finds a customer. Money is stored in integer cents and rates in basis points, dates
//! as the driver's transaction counter: every value is exact and deterministic, which keeps
//! the [`super::Summary`] digest independent of the journal mode.
//!
//! The mix is dealt from a shuffled deck of 100 cards per Table 3's percentages (TPC-C allows
//! a deck), so every 100 transactions hold exactly the configured proportions. As in TPC-C, 1 %
//! of New-Orders name an unused item and roll back after their first writes (under
//! `journal_mode=OFF` SQLite's ROLLBACK then relies on nothing having left the page cache, as a
//! transactional device's abort would).
//!
//! [`check`](super::check) verifies TPC-C's consistency conditions 1–4 (clause 3.3.2).

pub use super::workload::MAX_WAREHOUSES;
pub use random::{CUSTOMERS, DISTRICTS, ITEMS, NEW_ORDERS, ORDERS, last_name};

use super::kind::TxnKind;
use super::workload::TpccMix;
use crate::error::WorkloadError;
use crate::sqlite::sql_err;
use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;
use random::{Gen, NURAND_A_CUSTOMER, NURAND_A_ITEM, NURAND_A_LAST};
use rusqlite::{Connection, OptionalExtension, params};

mod load;
mod random;
pub(super) use load::prepare;

pub const TABLES: [&str; 9] = [
    "warehouse",
    "district",
    "customer",
    "history",
    "new_order",
    "orders",
    "order_line",
    "item",
    "stock",
];

/// Stock-Level's query (`?1` warehouse, `?2` district, `?3` its next order number, `?4` the
/// threshold): the paper's join-only mix is this join, which SQLite runs as a nested loop.
pub const STOCK_LEVEL_JOIN: &str = "SELECT count(DISTINCT s_i_id) FROM order_line
    JOIN stock ON s_w_id = ol_w_id AND s_i_id = ol_i_id
    WHERE ol_w_id = ?1 AND ol_d_id = ?2 AND ol_o_id < ?3 AND ol_o_id >= ?3 - 20
      AND s_quantity < ?4";

impl TpccMix {
    pub const ALL: [TpccMix; 4] = [
        TpccMix::WriteIntensive,
        TpccMix::ReadIntensive,
        TpccMix::SelectionOnly,
        TpccMix::JoinOnly,
    ];

    /// Table 3: percent of Delivery, Order-Status, Payment, Stock-Level, New-Order.
    fn percentages(self) -> [u32; 5] {
        match self {
            TpccMix::WriteIntensive => [4, 4, 43, 4, 45],
            TpccMix::ReadIntensive => [0, 50, 0, 45, 5],
            TpccMix::SelectionOnly => [0, 100, 0, 0, 0],
            TpccMix::JoinOnly => [0, 0, 0, 100, 0],
        }
    }

    /// Percent of `kind` in the mix (New-Order's share covers the ones that roll back).
    pub fn percent(self, kind: TxnKind) -> u32 {
        let [delivery, order_status, payment, stock_level, new_order] = self.percentages();
        match kind {
            TxnKind::Delivery => delivery,
            TxnKind::OrderStatus => order_status,
            TxnKind::Payment => payment,
            TxnKind::StockLevel => stock_level,
            TxnKind::NewOrder | TxnKind::NewOrderRolledBack => new_order,
            _ => 0,
        }
    }
}

/// TPC-C consistency conditions 1–4 (clause 3.3.2.1–4), for every warehouse and district.
pub(super) fn check_consistency(conn: &Connection) -> Result<(), WorkloadError> {
    let broken = |what: String, expected: i64, found: i64| WorkloadError::Mismatch {
        what,
        expected: expected.to_string(),
        found: found.to_string(),
    };
    let mut ytd = conn
        .prepare(
            "SELECT w_id, w_ytd, (SELECT sum(d_ytd) FROM district WHERE d_w_id = w_id)
             FROM warehouse ORDER BY w_id",
        )
        .map_err(sql_err("checking TPC-C condition 1"))?;
    let rows = ytd
        .query_map([], |r| {
            Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?, r.get(2)?))
        })
        .map_err(sql_err("checking TPC-C condition 1"))?;
    for row in rows {
        let (w, w_ytd, d_ytd): (i64, i64, Option<i64>) =
            row.map_err(sql_err("checking TPC-C condition 1"))?;
        if Some(w_ytd) != d_ytd {
            return Err(broken(
                format!("TPC-C condition 1 (W_YTD = sum(D_YTD)) in warehouse {w}"),
                d_ytd.unwrap_or(0),
                w_ytd,
            ));
        }
    }
    let mut per_district = conn
        .prepare(
            "SELECT d_w_id, d_id, d_next_o_id,
               (SELECT max(o_id) FROM orders WHERE o_w_id = d_w_id AND o_d_id = d_id),
               (SELECT max(no_o_id) FROM new_order WHERE no_w_id = d_w_id AND no_d_id = d_id),
               (SELECT min(no_o_id) FROM new_order WHERE no_w_id = d_w_id AND no_d_id = d_id),
               (SELECT count(*) FROM new_order WHERE no_w_id = d_w_id AND no_d_id = d_id),
               (SELECT sum(o_ol_cnt) FROM orders WHERE o_w_id = d_w_id AND o_d_id = d_id),
               (SELECT count(*) FROM order_line WHERE ol_w_id = d_w_id AND ol_d_id = d_id)
             FROM district ORDER BY d_w_id, d_id",
        )
        .map_err(sql_err("checking TPC-C conditions 2-4"))?;
    let mut rows = per_district
        .query([])
        .map_err(sql_err("checking TPC-C conditions 2-4"))?;
    while let Some(r) = rows
        .next()
        .map_err(sql_err("checking TPC-C conditions 2-4"))?
    {
        let get = |i| r.get::<_, Option<i64>>(i).map(|v| v.unwrap_or(0));
        let v: Vec<i64> = (0..9)
            .map(get)
            .collect::<Result<_, _>>()
            .map_err(sql_err("checking TPC-C conditions 2-4"))?;
        let [w, d, next, max_o, max_no, min_no, count_no, ol_cnt, lines] = v[..] else {
            unreachable!("nine columns")
        };
        let at = format!("in warehouse {w} district {d}");
        if max_o != next - 1 {
            return Err(broken(
                format!("TPC-C condition 2 (D_NEXT_O_ID - 1 = max(O_ID)) {at}"),
                next - 1,
                max_o,
            ));
        }
        if count_no > 0 && max_no != next - 1 {
            return Err(broken(
                format!("TPC-C condition 2 (D_NEXT_O_ID - 1 = max(NO_O_ID)) {at}"),
                next - 1,
                max_no,
            ));
        }
        if count_no > 0 && count_no != max_no - min_no + 1 {
            return Err(broken(
                format!("TPC-C condition 3 (new orders form one run of order numbers) {at}"),
                max_no - min_no + 1,
                count_no,
            ));
        }
        if ol_cnt != lines {
            return Err(broken(
                format!("TPC-C condition 4 (sum(O_OL_CNT) = order lines) {at}"),
                ol_cnt,
                lines,
            ));
        }
    }
    Ok(())
}

#[derive(Debug, Clone, Copy)]
enum Kind {
    Delivery,
    OrderStatus,
    Payment,
    StockLevel,
    NewOrder,
}

pub(super) struct Driver {
    mix: TpccMix,
    warehouses: i64,
    g: Gen,
    deck: Vec<Kind>,
    /// NURand's run constants C for last names, customer numbers and items.
    c_last: i64,
    c_id: i64,
    c_item: i64,
    /// The transaction counter: TPC-C's dates.
    clock: i64,
}

impl Driver {
    pub(super) fn new(mix: TpccMix, warehouses: u32, seed: u64) -> Driver {
        let mut g = Gen(ChaCha8Rng::seed_from_u64(seed ^ 0x7bcc_d71e_0000_0004));
        let (c_last, c_id, c_item) = (
            g.int(0, NURAND_A_LAST),
            g.int(0, NURAND_A_CUSTOMER),
            g.int(0, NURAND_A_ITEM),
        );
        Driver {
            mix,
            warehouses: i64::from(warehouses),
            g,
            deck: Vec::new(),
            c_last,
            c_id,
            c_item,
            clock: 0,
        }
    }

    fn deal(&mut self) -> Kind {
        if self.deck.is_empty() {
            let kinds = [
                Kind::Delivery,
                Kind::OrderStatus,
                Kind::Payment,
                Kind::StockLevel,
                Kind::NewOrder,
            ];
            for (kind, pct) in kinds.into_iter().zip(self.mix.percentages()) {
                self.deck.extend(std::iter::repeat_n(kind, pct as usize));
            }
            debug_assert_eq!(self.deck.len(), 100, "Table 3's rows sum to 100 %");
            self.deck.shuffle(&mut self.g.0);
        }
        self.deck.pop().expect("a dealt deck holds 100 cards")
    }

    pub(super) fn transaction(&mut self, conn: &Connection) -> Result<TxnKind, WorkloadError> {
        self.clock += 1;
        let kind = self.deal();
        let name = match kind {
            Kind::NewOrder => "New-Order",
            Kind::Payment => "Payment",
            Kind::OrderStatus => "Order-Status",
            Kind::Delivery => "Delivery",
            Kind::StockLevel => "Stock-Level",
        };
        conn.execute_batch("BEGIN")
            .map_err(sql_err(format!("BEGIN ({name})")))?;
        let done = match kind {
            Kind::NewOrder => self.new_order(conn)?,
            Kind::Payment => self.payment(conn)?,
            Kind::OrderStatus => self.order_status(conn)?,
            Kind::Delivery => self.delivery(conn)?,
            Kind::StockLevel => self.stock_level(conn)?,
        };
        let end = if done == TxnKind::NewOrderRolledBack {
            "ROLLBACK"
        } else {
            "COMMIT"
        };
        conn.execute_batch(end)
            .map_err(sql_err(format!("{end} ({name})")))?;
        Ok(done)
    }

    fn warehouse(&mut self) -> i64 {
        self.g.int(1, self.warehouses)
    }

    /// A warehouse other than `w` (only called with more than one).
    fn other_warehouse(&mut self, w: i64) -> i64 {
        let o = self.g.int(1, self.warehouses - 1);
        if o >= w { o + 1 } else { o }
    }

    fn customer_id(&mut self) -> i64 {
        self.g.nurand(NURAND_A_CUSTOMER, 1, CUSTOMERS, self.c_id)
    }

    /// TPC-C's customer selection: 60 % by last name (the middle one of those sorted by first
    /// name), 40 % by number.
    fn customer(&mut self, conn: &Connection, w: i64, d: i64) -> Result<i64, WorkloadError> {
        if !self.g.percent(60) {
            return Ok(self.customer_id());
        }
        let name = last_name(self.g.nurand(NURAND_A_LAST, 0, CUSTOMERS - 1, self.c_last));
        let what = "selecting a customer by last name";
        let mut stmt = conn
            .prepare_cached(
                "SELECT c_id FROM customer WHERE c_w_id = ?1 AND c_d_id = ?2 AND c_last = ?3
                 ORDER BY c_first, c_id",
            )
            .map_err(sql_err(what))?;
        let ids: Vec<i64> = stmt
            .query_map(params![w, d, name], |r| r.get(0))
            .map_err(sql_err(what))?
            .collect::<Result<_, _>>()
            .map_err(sql_err(what))?;
        if ids.is_empty() {
            return Err(WorkloadError::Mismatch {
                what: format!("customers named {name} in warehouse {w} district {d}"),
                expected: "at least one (every district holds every name)".into(),
                found: "none".into(),
            });
        }
        Ok(ids[(ids.len() - 1) / 2])
    }

    /// New-Order (clause 2.4): 5–15 lines, 1 % of them from a remote warehouse, 1 % of the
    /// transactions rolled back on an unused item number.
    fn new_order(&mut self, conn: &Connection) -> Result<TxnKind, WorkloadError> {
        let (w, d) = (self.warehouse(), self.g.int(1, DISTRICTS));
        let c = self.customer_id();
        let count = self.g.int(5, 15);
        let roll_back = self.g.percent(1);
        let mut lines = Vec::with_capacity(count as usize);
        for n in 1..=count {
            let item = if roll_back && n == count {
                ITEMS + 1
            } else {
                self.g.nurand(NURAND_A_ITEM, 1, ITEMS, self.c_item)
            };
            let supply = if self.warehouses > 1 && self.g.percent(1) {
                self.other_warehouse(w)
            } else {
                w
            };
            lines.push((n, item, supply, self.g.int(1, 10)));
        }
        let all_local = lines.iter().all(|&(_, _, s, _)| s == w);
        let what = "New-Order";
        let q = |sql: &str| conn.prepare_cached(sql).map_err(sql_err(what));
        let (_discount, _credit): (i64, String) = q("SELECT c_discount, c_credit FROM customer
                 WHERE c_w_id = ?1 AND c_d_id = ?2 AND c_id = ?3")?
        .query_row(params![w, d, c], |r| Ok((r.get(0)?, r.get(1)?)))
        .map_err(sql_err(what))?;
        let _w_tax: i64 = q("SELECT w_tax FROM warehouse WHERE w_id = ?1")?
            .query_row([w], |r| r.get(0))
            .map_err(sql_err(what))?;
        let (_d_tax, o): (i64, i64) =
            q("SELECT d_tax, d_next_o_id FROM district WHERE d_w_id = ?1 AND d_id = ?2")?
                .query_row([w, d], |r| Ok((r.get(0)?, r.get(1)?)))
                .map_err(sql_err(what))?;
        q("UPDATE district SET d_next_o_id = ?3 WHERE d_w_id = ?1 AND d_id = ?2")?
            .execute([w, d, o + 1])
            .map_err(sql_err(what))?;
        q("INSERT INTO orders VALUES (?1, ?2, ?3, ?4, ?5, NULL, ?6, ?7)")?
            .execute(params![o, d, w, c, self.clock, count, all_local])
            .map_err(sql_err(what))?;
        q("INSERT INTO new_order VALUES (?1, ?2, ?3)")?
            .execute([o, d, w])
            .map_err(sql_err(what))?;
        let stock_sql = format!(
            "SELECT s_quantity, s_dist_{d:02} FROM stock WHERE s_w_id = ?1 AND s_i_id = ?2"
        );
        for (n, item, supply, quantity) in lines {
            let price: Option<i64> = q("SELECT i_price, i_name, i_data FROM item WHERE i_id = ?1")?
                .query_row([item], |r| r.get(0))
                .optional()
                .map_err(sql_err(what))?;
            let Some(price) = price else {
                // The unused item: TPC-C's user data-entry error; the caller rolls back.
                return Ok(TxnKind::NewOrderRolledBack);
            };
            let (stock, dist): (i64, String) = q(&stock_sql)?
                .query_row([supply, item], |r| Ok((r.get(0)?, r.get(1)?)))
                .map_err(sql_err(what))?;
            let left = if stock >= quantity + 10 {
                stock - quantity
            } else {
                stock - quantity + 91
            };
            q("UPDATE stock SET s_quantity = ?3, s_ytd = s_ytd + ?4,
                 s_order_cnt = s_order_cnt + 1, s_remote_cnt = s_remote_cnt + ?5
               WHERE s_w_id = ?1 AND s_i_id = ?2")?
            .execute(params![supply, item, left, quantity, supply != w])
            .map_err(sql_err(what))?;
            q("INSERT INTO order_line VALUES (?1, ?2, ?3, ?4, ?5, ?6, NULL, ?7, ?8, ?9)")?
                .execute(params![
                    o,
                    d,
                    w,
                    n,
                    item,
                    supply,
                    quantity,
                    quantity * price,
                    dist
                ])
                .map_err(sql_err(what))?;
        }
        Ok(TxnKind::NewOrder)
    }

    /// Payment (clause 2.5): 85 % of customers of the home warehouse, 60 % found by name.
    fn payment(&mut self, conn: &Connection) -> Result<TxnKind, WorkloadError> {
        let (w, d) = (self.warehouse(), self.g.int(1, DISTRICTS));
        let (cw, cd) = if self.warehouses == 1 || self.g.percent(85) {
            (w, d)
        } else {
            (self.other_warehouse(w), self.g.int(1, DISTRICTS))
        };
        let amount = self.g.int(100, 500_000);
        let what = "Payment";
        let q = |sql: &str| conn.prepare_cached(sql).map_err(sql_err(what));
        q("UPDATE warehouse SET w_ytd = w_ytd + ?2 WHERE w_id = ?1")?
            .execute([w, amount])
            .map_err(sql_err(what))?;
        let w_name: String = q(
            "SELECT w_name, w_street_1, w_street_2, w_city, w_state, w_zip
                 FROM warehouse WHERE w_id = ?1",
        )?
        .query_row([w], |r| r.get(0))
        .map_err(sql_err(what))?;
        q("UPDATE district SET d_ytd = d_ytd + ?3 WHERE d_w_id = ?1 AND d_id = ?2")?
            .execute([w, d, amount])
            .map_err(sql_err(what))?;
        let d_name: String = q(
            "SELECT d_name, d_street_1, d_street_2, d_city, d_state, d_zip
                 FROM district WHERE d_w_id = ?1 AND d_id = ?2",
        )?
        .query_row([w, d], |r| r.get(0))
        .map_err(sql_err(what))?;
        let c = self.customer(conn, cw, cd)?;
        let (credit, data): (String, String) = q("SELECT c_credit, c_data, c_first, c_middle,
                 c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone, c_since,
                 c_credit_lim, c_discount, c_balance
                 FROM customer WHERE c_w_id = ?1 AND c_d_id = ?2 AND c_id = ?3")?
        .query_row([cw, cd, c], |r| Ok((r.get(0)?, r.get(1)?)))
        .map_err(sql_err(what))?;
        let data = if credit == "BC" {
            let mut s = format!("{c} {cd} {cw} {d} {w} {amount} | {data}");
            s.truncate(500);
            s
        } else {
            data
        };
        q(
            "UPDATE customer SET c_balance = c_balance - ?4, c_ytd_payment = c_ytd_payment + ?4,
             c_payment_cnt = c_payment_cnt + 1, c_data = ?5
           WHERE c_w_id = ?1 AND c_d_id = ?2 AND c_id = ?3",
        )?
        .execute(params![cw, cd, c, amount, data])
        .map_err(sql_err(what))?;
        q("INSERT INTO history VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)")?
            .execute(params![
                c,
                cd,
                cw,
                d,
                w,
                self.clock,
                amount,
                format!("{w_name}    {d_name}")
            ])
            .map_err(sql_err(what))?;
        Ok(TxnKind::Payment)
    }

    /// Order-Status (clause 2.6): a customer's balance and last order with its lines.
    fn order_status(&mut self, conn: &Connection) -> Result<TxnKind, WorkloadError> {
        let (w, d) = (self.warehouse(), self.g.int(1, DISTRICTS));
        let c = self.customer(conn, w, d)?;
        let what = "Order-Status";
        let q = |sql: &str| conn.prepare_cached(sql).map_err(sql_err(what));
        let _balance: i64 = q("SELECT c_balance, c_first, c_middle, c_last FROM customer
                 WHERE c_w_id = ?1 AND c_d_id = ?2 AND c_id = ?3")?
        .query_row([w, d, c], |r| r.get(0))
        .map_err(sql_err(what))?;
        let last: Option<i64> = q("SELECT o_id, o_entry_d, o_carrier_id FROM orders
                 WHERE o_w_id = ?1 AND o_d_id = ?2 AND o_c_id = ?3 ORDER BY o_id DESC LIMIT 1")?
        .query_row([w, d, c], |r| r.get(0))
        .optional()
        .map_err(sql_err(what))?;
        if let Some(o) = last {
            let mut lines = q("SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount,
                     ol_delivery_d FROM order_line
                     WHERE ol_w_id = ?1 AND ol_d_id = ?2 AND ol_o_id = ?3")?;
            let mut rows = lines.query([w, d, o]).map_err(sql_err(what))?;
            while rows.next().map_err(sql_err(what))?.is_some() {}
        }
        Ok(TxnKind::OrderStatus)
    }

    /// Delivery (clause 2.7): the oldest undelivered order of each of the ten districts, all in
    /// one transaction.
    fn delivery(&mut self, conn: &Connection) -> Result<TxnKind, WorkloadError> {
        let w = self.warehouse();
        let carrier = self.g.int(1, 10);
        let what = "Delivery";
        let q = |sql: &str| conn.prepare_cached(sql).map_err(sql_err(what));
        for d in 1..=DISTRICTS {
            let oldest: Option<i64> = q("SELECT no_o_id FROM new_order
                     WHERE no_w_id = ?1 AND no_d_id = ?2 ORDER BY no_o_id LIMIT 1")?
            .query_row([w, d], |r| r.get(0))
            .optional()
            .map_err(sql_err(what))?;
            let Some(o) = oldest else { continue };
            q("DELETE FROM new_order WHERE no_w_id = ?1 AND no_d_id = ?2 AND no_o_id = ?3")?
                .execute([w, d, o])
                .map_err(sql_err(what))?;
            let c: i64 =
                q("SELECT o_c_id FROM orders WHERE o_w_id = ?1 AND o_d_id = ?2 AND o_id = ?3")?
                    .query_row([w, d, o], |r| r.get(0))
                    .map_err(sql_err(what))?;
            q("UPDATE orders SET o_carrier_id = ?4 WHERE o_w_id = ?1 AND o_d_id = ?2 AND o_id = ?3")?
                .execute([w, d, o, carrier])
                .map_err(sql_err(what))?;
            q("UPDATE order_line SET ol_delivery_d = ?4
               WHERE ol_w_id = ?1 AND ol_d_id = ?2 AND ol_o_id = ?3")?
            .execute([w, d, o, self.clock])
            .map_err(sql_err(what))?;
            let total: i64 = q("SELECT coalesce(sum(ol_amount), 0) FROM order_line
                     WHERE ol_w_id = ?1 AND ol_d_id = ?2 AND ol_o_id = ?3")?
            .query_row([w, d, o], |r| r.get(0))
            .map_err(sql_err(what))?;
            q("UPDATE customer SET c_balance = c_balance + ?4,
                 c_delivery_cnt = c_delivery_cnt + 1
               WHERE c_w_id = ?1 AND c_d_id = ?2 AND c_id = ?3")?
            .execute([w, d, c, total])
            .map_err(sql_err(what))?;
        }
        Ok(TxnKind::Delivery)
    }

    /// Stock-Level (clause 2.8): distinct items of the district's last 20 orders whose stock
    /// is below a threshold — a join of `order_line` and `stock`.
    fn stock_level(&mut self, conn: &Connection) -> Result<TxnKind, WorkloadError> {
        let (w, d) = (self.warehouse(), self.g.int(1, DISTRICTS));
        let threshold = self.g.int(10, 20);
        let what = "Stock-Level";
        let q = |sql: &str| conn.prepare_cached(sql).map_err(sql_err(what));
        let next: i64 = q("SELECT d_next_o_id FROM district WHERE d_w_id = ?1 AND d_id = ?2")?
            .query_row([w, d], |r| r.get(0))
            .map_err(sql_err(what))?;
        let _low: i64 = q(STOCK_LEVEL_JOIN)?
            .query_row([w, d, next, threshold], |r| r.get(0))
            .map_err(sql_err(what))?;
        Ok(TxnKind::StockLevel)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn last_names_are_tpc_c_s_syllables() {
        assert_eq!(last_name(0), "BARBARBAR");
        assert_eq!(last_name(371), "PRICALLYOUGHT");
        assert_eq!(last_name(999), "EINGEINGEING");
    }

    #[test]
    fn nurand_stays_in_range_and_is_skewed() {
        let mut g = Gen(ChaCha8Rng::seed_from_u64(1));
        let mut hits = vec![0u32; CUSTOMERS as usize + 1];
        for _ in 0..30_000 {
            let c = g.nurand(NURAND_A_CUSTOMER, 1, CUSTOMERS, 17);
            assert!((1..=CUSTOMERS).contains(&c));
            hits[c as usize] += 1;
        }
        let max = *hits.iter().max().unwrap();
        let min = *hits[1..].iter().min().unwrap();
        assert!(max > 3 * min.max(1), "non-uniform: max {max}, min {min}");
    }
}
