//! A paper workload with a size it cannot run, or with more than one thread, is refused before
//! anything is created, with a message that names the fix.

use joj_workload::paper::{self, Driver, PaperWorkload, TpccMix};
use joj_workload::{DbWorkload, RunOptions, Workload, WorkloadError};

fn config_error(r: Result<impl std::fmt::Debug, WorkloadError>) -> String {
    match r {
        Err(WorkloadError::Config(msg)) => msg,
        other => panic!("expected a configuration error, got {other:?}"),
    }
}

#[test]
fn paper_bad_config_is_a_clear_error() {
    for k in [0, 1001] {
        let w = PaperWorkload::synthetic(k);
        let msg = w.validate().unwrap_err();
        assert!(
            msg.contains("--pages-per-txn") && msg.contains("1..=1000"),
            "{msg}"
        );
        let conn = rusqlite::Connection::open_in_memory().unwrap();
        let msg = config_error(paper::prepare(&conn, &w, 1));
        assert!(msg.contains("--pages-per-txn"), "{msg}");
        let tables: i64 = conn
            .query_row("SELECT count(*) FROM sqlite_schema", [], |r| r.get(0))
            .unwrap();
        assert_eq!(tables, 0, "nothing was created");
        assert!(Driver::new(&w, 1).is_err());
        assert!(PaperWorkload::from_name("xftl-synthetic", k, 1, 1).is_err());
    }
    assert!(PaperWorkload::synthetic(1).validate().is_ok());
    assert!(PaperWorkload::synthetic(20).validate().is_ok());
    let rows_below_k = PaperWorkload::XftlSynthetic {
        rows: 4,
        pages_per_txn: 5,
    };
    assert!(rows_below_k.validate().unwrap_err().contains("rows"));
    let no_warehouse = PaperWorkload::Tpcc {
        mix: TpccMix::JoinOnly,
        warehouses: 0,
    };
    assert!(
        no_warehouse
            .validate()
            .unwrap_err()
            .contains("--warehouses")
    );
    assert!(
        PaperWorkload::RlBench { divisor: 0 }
            .validate()
            .unwrap_err()
            .contains("--rl-divisor")
    );
    let msg = PaperWorkload::from_name("tpcc-everything", 5, 1, 1).unwrap_err();
    assert!(msg.contains("tpcc-write"), "{msg}");

    // More than one thread: refused by the runner before it makes a directory or database.
    let w = DbWorkload {
        paper: Some(PaperWorkload::synthetic(5)),
        threads: 2,
        ..Default::default()
    };
    let msg = w.validate().unwrap_err();
    assert!(
        msg.contains("one connection") && msg.contains("2 threads"),
        "{msg}"
    );
    let dir = tempfile::tempdir().unwrap();
    let opts = RunOptions {
        fs: joj_workload::FsChoice::Host(Some(dir.path().to_path_buf())),
        ..RunOptions::default()
    };
    let msg = config_error(joj_workload::run(&Workload::Db(w), &opts));
    assert!(msg.contains("one thread"), "{msg}");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}
