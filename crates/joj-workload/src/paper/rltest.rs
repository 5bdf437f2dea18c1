//! The RL Benchmark's tests (SQLite's "Database Speed Comparison"), their commit counts and
//! speed.html's number names. The statements themselves are in [`super::rlbench`].

use serde::{Deserialize, Serialize};

/// The largest divisor of the benchmark's counts.
pub const MAX_DIVISOR: u32 = 1000;

/// The benchmark's tests, in the order it runs them (speed.html's numbers in the names).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RlTest {
    Inserts,
    InsertsInTxn,
    InsertsIndexed,
    SelectsNoIndex,
    SelectsLike,
    CreateIndex,
    SelectsIndexed,
    UpdatesNoIndex,
    UpdatesIndexed,
    TextUpdatesIndexed,
    InsertFromSelect,
    DeleteNoIndex,
    DeleteIndexed,
    DropTables,
}

impl RlTest {
    pub const ALL: [RlTest; 14] = [
        RlTest::Inserts,
        RlTest::InsertsInTxn,
        RlTest::InsertsIndexed,
        RlTest::SelectsNoIndex,
        RlTest::SelectsLike,
        RlTest::CreateIndex,
        RlTest::SelectsIndexed,
        RlTest::UpdatesNoIndex,
        RlTest::UpdatesIndexed,
        RlTest::TextUpdatesIndexed,
        RlTest::InsertFromSelect,
        RlTest::DeleteNoIndex,
        RlTest::DeleteIndexed,
        RlTest::DropTables,
    ];

    pub fn name(self) -> &'static str {
        match self {
            RlTest::Inserts => "rl01_inserts",
            RlTest::InsertsInTxn => "rl02_inserts_in_a_transaction",
            RlTest::InsertsIndexed => "rl03_inserts_indexed",
            RlTest::SelectsNoIndex => "rl04_selects_without_index",
            RlTest::SelectsLike => "rl05_selects_string_comparison",
            RlTest::CreateIndex => "rl06_create_index",
            RlTest::SelectsIndexed => "rl07_selects_with_index",
            RlTest::UpdatesNoIndex => "rl08_updates_without_index",
            RlTest::UpdatesIndexed => "rl09_updates_with_index",
            RlTest::TextUpdatesIndexed => "rl10_text_updates_with_index",
            RlTest::InsertFromSelect => "rl11_inserts_from_select",
            RlTest::DeleteNoIndex => "rl12_delete_without_index",
            RlTest::DeleteIndexed => "rl13_delete_with_index",
            RlTest::DropTables => "rl16_drop_tables",
        }
    }

    /// Commits the test makes at `divisor`.
    pub fn transactions(self, divisor: u32) -> u64 {
        match self {
            RlTest::Inserts => 1 + scaled(1000, divisor),
            RlTest::CreateIndex => 2,
            RlTest::SelectsIndexed => scaled(5000, divisor),
            RlTest::DropTables => 3,
            _ => 1,
        }
    }
}

/// `n` divided by `divisor`, at least 1.
pub(super) fn scaled(n: u64, divisor: u32) -> u64 {
    (n / u64::from(divisor)).max(1)
}

/// Transactions of one pass through every test.
pub fn transactions_per_pass(divisor: u32) -> u64 {
    RlTest::ALL.iter().map(|t| t.transactions(divisor)).sum()
}

/// speed.html's `number_name`: 13153 → "thirteen thousand one hundred fifty three".
pub fn number_name(n: u64) -> String {
    const ONES: [&str; 20] = [
        "zero",
        "one",
        "two",
        "three",
        "four",
        "five",
        "six",
        "seven",
        "eight",
        "nine",
        "ten",
        "eleven",
        "twelve",
        "thirteen",
        "fourteen",
        "fifteen",
        "sixteen",
        "seventeen",
        "eighteen",
        "nineteen",
    ];
    const TENS: [&str; 10] = [
        "", "ten", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety",
    ];
    let mut words: Vec<String> = Vec::new();
    let mut n = n;
    if n >= 1000 {
        words.push(number_name(n / 1000));
        words.push("thousand".into());
        n %= 1000;
    }
    if n >= 100 {
        words.push(ONES[(n / 100) as usize].into());
        words.push("hundred".into());
        n %= 100;
    }
    if n >= 20 {
        words.push(TENS[(n / 10) as usize].into());
        n %= 10;
    }
    if n > 0 {
        words.push(ONES[n as usize].into());
    }
    if words.is_empty() {
        return "zero".into();
    }
    words.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn number_names_are_speed_html_s() {
        assert_eq!(
            number_name(13153),
            "thirteen thousand one hundred fifty three"
        );
        assert_eq!(
            number_name(75560),
            "seventy five thousand five hundred sixty"
        );
        assert_eq!(
            number_name(468026),
            "four hundred sixty eight thousand twenty six"
        );
        assert_eq!(number_name(0), "zero");
        assert_eq!(number_name(19), "nineteen");
        assert_eq!(number_name(1000), "one thousand");
    }

    #[test]
    fn one_pass_has_the_benchmark_s_commits() {
        // 1 CREATE + 1,000 inserts, 5,000 selects, 2 index creations, 3 drops, 9 others.
        assert_eq!(transactions_per_pass(1), 1001 + 5000 + 2 + 3 + 10);
        assert_eq!(transactions_per_pass(10), 101 + 500 + 2 + 3 + 10);
        assert_eq!(transactions_per_pass(MAX_DIVISOR), 2 + 5 + 2 + 3 + 10);
    }
}
