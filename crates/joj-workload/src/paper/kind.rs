//! What each transaction of a paper workload was, and counts of them.

use super::rltest::RlTest;
use serde::{Deserialize, Serialize};

/// What one [`Driver::transaction`] call ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TxnKind {
    /// Synthetic: read and update `pages_per_txn` rows.
    XftlUpdate,
    /// TPC-C New-Order that committed.
    NewOrder,
    /// TPC-C New-Order that rolled back on its unused item number (1 % by design).
    NewOrderRolledBack,
    Payment,
    OrderStatus,
    Delivery,
    StockLevel,
    /// One commit of an RL Benchmark test.
    Rl(RlTest),
}

impl TxnKind {
    pub fn name(self) -> &'static str {
        match self {
            TxnKind::XftlUpdate => "xftl_update",
            TxnKind::NewOrder => "new_order",
            TxnKind::NewOrderRolledBack => "new_order_rolled_back",
            TxnKind::Payment => "payment",
            TxnKind::OrderStatus => "order_status",
            TxnKind::Delivery => "delivery",
            TxnKind::StockLevel => "stock_level",
            TxnKind::Rl(t) => t.name(),
        }
    }
}

/// Counts of the transactions a run made, by kind ([`TxnKind::name`]), and TPC-C's committed
/// New-Orders, from which tpmC (New-Orders per minute) follows for any elapsed time, wall or
/// modeled; the New-Orders that rolled back by design are counted apart, under
/// `new_order_rolled_back`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct KindCounts {
    pub by_kind: std::collections::BTreeMap<String, u64>,
    pub new_orders: u64,
}

impl KindCounts {
    pub fn add(&mut self, kind: TxnKind) {
        *self.by_kind.entry(kind.name().to_string()).or_default() += 1;
        if kind == TxnKind::NewOrder {
            self.new_orders += 1;
        }
    }

    pub fn get(&self, kind: TxnKind) -> u64 {
        self.by_kind.get(kind.name()).copied().unwrap_or(0)
    }
}
