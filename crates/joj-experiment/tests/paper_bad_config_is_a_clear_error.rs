//! A paper workload with a size it cannot run, or with more than one thread, is refused before
//! anything is created, with an error that names the fix.

use joj_experiment::{ExperimentError, RunOptions, Workload};
use joj_workload::paper::{self, Driver, PaperWorkload, TpccMix};
use joj_workload::{ConfigError, DbWorkload, WorkloadError};

#[test]
fn paper_bad_config_is_a_clear_error() {
    for k in [0, 1001] {
        let w = PaperWorkload::synthetic(k);
        let err = w.validate().unwrap_err();
        assert_eq!(
            err,
            ConfigError::PagesPerTxn {
                given: k,
                max: 1000
            }
        );
        assert!(err.to_string().contains("--pages-per-txn"), "{err}");
        let conn = rusqlite::Connection::open_in_memory().unwrap();
        assert!(matches!(
            paper::prepare(&conn, &w, 1),
            Err(WorkloadError::Config(ConfigError::PagesPerTxn { .. }))
        ));
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
    assert!(matches!(
        rows_below_k.validate(),
        Err(ConfigError::SyntheticRows { rows: 4, .. })
    ));
    let no_warehouse = PaperWorkload::Tpcc {
        mix: TpccMix::JoinOnly,
        warehouses: 0,
    };
    assert!(matches!(
        no_warehouse.validate(),
        Err(ConfigError::Warehouses { given: 0, .. })
    ));
    assert!(matches!(
        PaperWorkload::RlBench { divisor: 0 }.validate(),
        Err(ConfigError::RlDivisor { given: 0, .. })
    ));
    let err = PaperWorkload::from_name("tpcc-everything", 5, 1, 1).unwrap_err();
    assert!(matches!(
        &err,
        ConfigError::Unknown { what: "paper workload", given, choices }
            if given == "tpcc-everything" && choices.contains("tpcc-write")
    ));

    // More than one thread: refused by the runner before it makes a directory or database.
    let w = DbWorkload {
        paper: Some(PaperWorkload::synthetic(5)),
        threads: 2,
        ..Default::default()
    };
    assert_eq!(w.validate(), Err(ConfigError::PaperThreads { threads: 2 }));
    let dir = tempfile::tempdir().unwrap();
    let opts = RunOptions {
        fs: joj_experiment::FsChoice::Host(Some(dir.path().to_path_buf())),
        ..RunOptions::default()
    };
    let err = joj_experiment::run(&Workload::Db(w), &opts).unwrap_err();
    assert!(
        matches!(
            err.workload(),
            Some(WorkloadError::Config(ConfigError::PaperThreads {
                threads: 2
            }))
        ),
        "{err:?}"
    );
    assert!(err.to_string().contains("one thread"), "{err}");
    assert!(matches!(err, ExperimentError::Workload(_)));
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}
