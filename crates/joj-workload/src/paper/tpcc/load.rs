//! Loading the TPC-C tables (clause 4.3.3.1) at the reduced cardinalities of [`super`], in
//! one transaction, every value drawn from the seed.

use super::random::{CUSTOMERS, DISTRICTS, Gen, ITEMS, NEW_ORDERS, ORDERS, last_name};
use crate::error::WorkloadError;
use crate::sqlite::sql_err;
use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;
use rusqlite::{Connection, Statement, params};

const SCHEMA: &str = "
CREATE TABLE warehouse (
    w_id INTEGER PRIMARY KEY, w_name TEXT, w_street_1 TEXT, w_street_2 TEXT, w_city TEXT,
    w_state TEXT, w_zip TEXT, w_tax INTEGER, w_ytd INTEGER);
CREATE TABLE district (
    d_id INTEGER, d_w_id INTEGER, d_name TEXT, d_street_1 TEXT, d_street_2 TEXT, d_city TEXT,
    d_state TEXT, d_zip TEXT, d_tax INTEGER, d_ytd INTEGER, d_next_o_id INTEGER,
    PRIMARY KEY (d_w_id, d_id)) WITHOUT ROWID;
CREATE TABLE customer (
    c_id INTEGER, c_d_id INTEGER, c_w_id INTEGER, c_first TEXT, c_middle TEXT, c_last TEXT,
    c_street_1 TEXT, c_street_2 TEXT, c_city TEXT, c_state TEXT, c_zip TEXT, c_phone TEXT,
    c_since INTEGER, c_credit TEXT, c_credit_lim INTEGER, c_discount INTEGER,
    c_balance INTEGER, c_ytd_payment INTEGER, c_payment_cnt INTEGER, c_delivery_cnt INTEGER,
    c_data TEXT, PRIMARY KEY (c_w_id, c_d_id, c_id)) WITHOUT ROWID;
CREATE INDEX customer_last ON customer (c_w_id, c_d_id, c_last, c_first);
CREATE TABLE history (
    h_c_id INTEGER, h_c_d_id INTEGER, h_c_w_id INTEGER, h_d_id INTEGER, h_w_id INTEGER,
    h_date INTEGER, h_amount INTEGER, h_data TEXT);
CREATE TABLE new_order (
    no_o_id INTEGER, no_d_id INTEGER, no_w_id INTEGER,
    PRIMARY KEY (no_w_id, no_d_id, no_o_id)) WITHOUT ROWID;
CREATE TABLE orders (
    o_id INTEGER, o_d_id INTEGER, o_w_id INTEGER, o_c_id INTEGER, o_entry_d INTEGER,
    o_carrier_id INTEGER, o_ol_cnt INTEGER, o_all_local INTEGER,
    PRIMARY KEY (o_w_id, o_d_id, o_id)) WITHOUT ROWID;
CREATE INDEX orders_customer ON orders (o_w_id, o_d_id, o_c_id, o_id);
CREATE TABLE order_line (
    ol_o_id INTEGER, ol_d_id INTEGER, ol_w_id INTEGER, ol_number INTEGER, ol_i_id INTEGER,
    ol_supply_w_id INTEGER, ol_delivery_d INTEGER, ol_quantity INTEGER, ol_amount INTEGER,
    ol_dist_info TEXT, PRIMARY KEY (ol_w_id, ol_d_id, ol_o_id, ol_number)) WITHOUT ROWID;
CREATE TABLE item (
    i_id INTEGER PRIMARY KEY, i_im_id INTEGER, i_name TEXT, i_price INTEGER, i_data TEXT);
CREATE TABLE stock (
    s_i_id INTEGER, s_w_id INTEGER, s_quantity INTEGER,
    s_dist_01 TEXT, s_dist_02 TEXT, s_dist_03 TEXT, s_dist_04 TEXT, s_dist_05 TEXT,
    s_dist_06 TEXT, s_dist_07 TEXT, s_dist_08 TEXT, s_dist_09 TEXT, s_dist_10 TEXT,
    s_ytd INTEGER, s_order_cnt INTEGER, s_remote_cnt INTEGER, s_data TEXT,
    PRIMARY KEY (s_w_id, s_i_id)) WITHOUT ROWID;
";

pub(in crate::paper) fn prepare(
    conn: &Connection,
    warehouses: u32,
    seed: u64,
) -> Result<(), WorkloadError> {
    let mut g = Gen(ChaCha8Rng::seed_from_u64(seed ^ 0x7bcc_10ad_0000_0002));
    let tx = conn
        .unchecked_transaction()
        .map_err(sql_err("BEGIN (load TPC-C)"))?;
    tx.execute_batch(SCHEMA)
        .map_err(sql_err("creating the TPC-C schema"))?;
    load_items(&tx, &mut g)?;
    for w in 1..=i64::from(warehouses) {
        load_warehouse(&tx, &mut g, w)?;
    }
    tx.commit().map_err(sql_err("COMMIT (load TPC-C)"))
}

/// The error of a failed insert into `table` while loading.
fn loading(table: &'static str) -> impl FnOnce(rusqlite::Error) -> WorkloadError {
    sql_err(format!("loading {table}"))
}

/// The `item` table, shared by every warehouse.
fn load_items(conn: &Connection, g: &mut Gen) -> Result<(), WorkloadError> {
    let mut item = conn
        .prepare("INSERT INTO item VALUES (?1, ?2, ?3, ?4, ?5)")
        .map_err(loading("item"))?;
    for i in 1..=ITEMS {
        let (im, name, price, data) = (
            g.int(1, 10_000),
            g.astring(14, 24),
            g.int(100, 10_000),
            g.data(),
        );
        item.execute(params![i, im, name, price, data])
            .map_err(loading("item"))?;
    }
    Ok(())
}

/// Warehouse `w` and everything under it: its stock, then district by district the district,
/// its customers (each with a history row) and its orders. The order of the draws from `g` is
/// the data set: changing it changes every database loaded from a seed.
fn load_warehouse(conn: &Connection, g: &mut Gen, w: i64) -> Result<(), WorkloadError> {
    let site = Site::draw(g);
    conn.execute(
        "INSERT INTO warehouse VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, 30000000)",
        params![
            w,
            site.name,
            site.street_1,
            site.street_2,
            site.city,
            site.state,
            site.zip,
            site.tax
        ],
    )
    .map_err(loading("warehouse"))?;
    load_stock(conn, g, w)?;
    let mut districts = DistrictInserts::prepare(conn)?;
    for d in 1..=DISTRICTS {
        districts.district(g, w, d)?;
        for c in 1..=CUSTOMERS {
            districts.customer(g, w, d, c)?;
        }
        districts.orders(g, w, d)?;
    }
    Ok(())
}

/// The name, address and tax rate of a warehouse or district, drawn alike (clause 4.3.3.1).
struct Site {
    name: String,
    street_1: String,
    street_2: String,
    city: String,
    state: String,
    zip: String,
    tax: i64,
}

impl Site {
    fn draw(g: &mut Gen) -> Site {
        // Fields are evaluated in the order written: the order of the draws.
        Site {
            name: g.astring(6, 10),
            street_1: g.astring(10, 20),
            street_2: g.astring(10, 20),
            city: g.astring(10, 20),
            state: g.astring(2, 2),
            zip: g.zip(),
            tax: g.int(0, 2000),
        }
    }
}

/// Warehouse `w`'s stock: one row per item.
fn load_stock(conn: &Connection, g: &mut Gen, w: i64) -> Result<(), WorkloadError> {
    let mut stock = conn
        .prepare(
            "INSERT INTO stock VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13,
             0, 0, 0, ?14)",
        )
        .map_err(loading("stock"))?;
    for i in 1..=ITEMS {
        let quantity = g.int(10, 100);
        let dist: Vec<String> = (0..10).map(|_| g.astring(24, 24)).collect();
        let data = g.data();
        stock
            .execute(params![
                i, w, quantity, dist[0], dist[1], dist[2], dist[3], dist[4], dist[5], dist[6],
                dist[7], dist[8], dist[9], data
            ])
            .map_err(loading("stock"))?;
    }
    Ok(())
}

/// The inserts of a district's rows, prepared once per warehouse.
struct DistrictInserts<'c> {
    district: Statement<'c>,
    customer: Statement<'c>,
    history: Statement<'c>,
    order: Statement<'c>,
    line: Statement<'c>,
    new_order: Statement<'c>,
}

impl<'c> DistrictInserts<'c> {
    fn prepare(conn: &'c Connection) -> Result<DistrictInserts<'c>, WorkloadError> {
        let statement = |sql: &str, table: &'static str| conn.prepare(sql).map_err(loading(table));
        Ok(DistrictInserts {
            district: statement(
                "INSERT INTO district VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, 3000000, ?10)",
                "district",
            )?,
            customer: statement(
                "INSERT INTO customer VALUES (?1, ?2, ?3, ?4, 'OE', ?5, ?6, ?7, ?8, ?9, ?10, ?11,
                 0, ?12, 5000000, ?13, -1000, 1000, 1, 0, ?14)",
                "customer",
            )?,
            history: statement(
                "INSERT INTO history VALUES (?1, ?2, ?3, ?2, ?3, 0, 1000, ?4)",
                "history",
            )?,
            order: statement(
                "INSERT INTO orders VALUES (?1, ?2, ?3, ?4, 0, ?5, ?6, 1)",
                "orders",
            )?,
            line: statement(
                "INSERT INTO order_line VALUES (?1, ?2, ?3, ?4, ?5, ?3, ?6, 5, ?7, ?8)",
                "order_line",
            )?,
            new_order: statement("INSERT INTO new_order VALUES (?1, ?2, ?3)", "new_order")?,
        })
    }

    /// District `d` of warehouse `w`; its next order id follows the initial orders.
    fn district(&mut self, g: &mut Gen, w: i64, d: i64) -> Result<(), WorkloadError> {
        let site = Site::draw(g);
        self.district
            .execute(params![
                d,
                w,
                site.name,
                site.street_1,
                site.street_2,
                site.city,
                site.state,
                site.zip,
                site.tax,
                ORDERS + 1
            ])
            .map_err(loading("district"))?;
        Ok(())
    }

    /// Customer `c` of district `d` and its one history row.
    fn customer(&mut self, g: &mut Gen, w: i64, d: i64, c: i64) -> Result<(), WorkloadError> {
        let (first, s1, s2, city, state, zip, phone) = (
            g.astring(8, 16),
            g.astring(10, 20),
            g.astring(10, 20),
            g.astring(10, 20),
            g.astring(2, 2),
            g.zip(),
            g.nstring(16),
        );
        let credit = if g.percent(10) { "BC" } else { "GC" };
        let (discount, data) = (g.int(0, 5000), g.astring(300, 500));
        self.customer
            .execute(params![
                c,
                d,
                w,
                first,
                last_name(c - 1),
                s1,
                s2,
                city,
                state,
                zip,
                phone,
                credit,
                discount,
                data
            ])
            .map_err(loading("customer"))?;
        self.history
            .execute(params![c, d, w, g.astring(12, 24)])
            .map_err(loading("history"))?;
        Ok(())
    }

    /// District `d`'s initial orders with their lines; the last `NEW_ORDERS` are undelivered
    /// and listed in `new_order`.
    fn orders(&mut self, g: &mut Gen, w: i64, d: i64) -> Result<(), WorkloadError> {
        // Each customer places one of the initial orders, in a random order.
        let mut placed_by: Vec<i64> = (1..=CUSTOMERS).collect();
        placed_by.shuffle(&mut g.0);
        for o in 1..=ORDERS {
            let delivered = o <= ORDERS - NEW_ORDERS;
            let carrier = delivered.then(|| g.int(1, 10));
            let lines = g.int(5, 15);
            self.order
                .execute(params![
                    o,
                    d,
                    w,
                    placed_by[(o - 1) as usize],
                    carrier,
                    lines
                ])
                .map_err(loading("orders"))?;
            for n in 1..=lines {
                self.order_line(g, w, d, o, n, delivered)?;
            }
            if !delivered {
                self.new_order
                    .execute(params![o, d, w])
                    .map_err(loading("new_order"))?;
            }
        }
        Ok(())
    }

    /// Line `n` of order `o`: a delivered order's lines have a delivery date and no amount due.
    fn order_line(
        &mut self,
        g: &mut Gen,
        w: i64,
        d: i64,
        o: i64,
        n: i64,
        delivered: bool,
    ) -> Result<(), WorkloadError> {
        let item = g.int(1, ITEMS);
        let (delivery_d, amount) = if delivered {
            (Some(0), 0)
        } else {
            (None, g.int(1, 999_999))
        };
        self.line
            .execute(params![
                o,
                d,
                w,
                n,
                item,
                delivery_d,
                amount,
                g.astring(24, 24)
            ])
            .map_err(loading("order_line"))?;
        Ok(())
    }
}
