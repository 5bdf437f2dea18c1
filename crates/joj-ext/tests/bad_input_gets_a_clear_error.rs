//! Bad input through the extension: a missing extension path, an unknown waldio URI option, a
//! database without waldio's reserve, a VFS joj does not have, a missing database to convert —
//! each a clear error naming the fix, and nothing changed.

mod common;

use std::process::Command;

/// Run Python `code` with the extension loaded (as `lib`); its stdout.
fn python(dir: &std::path::Path, code: &str) -> String {
    let prelude = format!(
        "import sqlite3\nloader = sqlite3.connect(':memory:')\nloader.enable_load_extension(True)\n\
         loader.load_extension({:?})\n",
        common::lib().with_extension("").to_string_lossy()
    );
    let out = common::run_ok(
        Command::new(common::python())
            .args(["-c", &(prelude + code)])
            .current_dir(dir),
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn a_missing_extension_path_is_named_by_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let (ok, _, stderr) = common::shell(dir.path(), &[], ".load ./no/such/libjoj\n");
    assert!(!ok || stderr.contains("Error"), "{stderr}");
    assert!(
        stderr.contains("no/such/libjoj"),
        "the path is named: {stderr}"
    );
    let out = common::run_ok(Command::new(common::python()).args([
        "-c",
        "import sqlite3\nc = sqlite3.connect(':memory:')\nc.enable_load_extension(True)\n\
         try:\n    c.load_extension('./no/such/libjoj')\nexcept sqlite3.OperationalError as e:\n    print(e)",
    ]));
    assert!(String::from_utf8_lossy(&out.stdout).contains("no/such/libjoj"));
}

#[test]
fn an_unknown_waldio_uri_option_fails_the_open_naming_the_known_ones() {
    let dir = tempfile::tempdir().unwrap();
    let out = python(
        dir.path(),
        "try:\n    sqlite3.connect('file:a.db?vfs=waldio&waldio_snyc=full', uri=True).execute('select 1')\n\
         except sqlite3.Error as e:\n    print(e)\n\
         try:\n    sqlite3.connect('file:a.db?vfs=waldio&waldio_sync=fast', uri=True).execute('select 1')\n\
         except sqlite3.Error as e:\n    print(e)\n",
    );
    assert!(
        out.contains("unknown URI parameter \"waldio_snyc\": waldio's are waldio_sync"),
        "{out}"
    );
    assert!(out.contains("use full, fua or normal"), "{out}");
}

#[test]
fn a_wal_database_without_the_reserve_is_refused_naming_the_conversion_and_converts() {
    let dir = tempfile::tempdir().unwrap();
    let out = python(
        dir.path(),
        "plain = sqlite3.connect('plain.db', isolation_level=None)\n\
         plain.execute('PRAGMA journal_mode=WAL')\n\
         plain.execute('CREATE TABLE t(x)')\n\
         plain.executemany('INSERT INTO t VALUES(?)', [(i,) for i in range(100)])\n\
         plain.close()\n\
         try:\n    sqlite3.connect('file:plain.db?vfs=waldio', uri=True).execute('select count(*) from t')\n\
         except sqlite3.Error as e:\n    print('refused:', e)\n\
         print('converted:', loader.execute(\"SELECT waldio_convert('plain.db')\").fetchone()[0])\n\
         w = sqlite3.connect('file:plain.db?vfs=waldio', uri=True)\n\
         print('rows:', w.execute('select count(*) from t').fetchone()[0])\n",
    );
    assert!(
        out.contains("refused:")
            && out.contains("keeps 0 reserved bytes per page")
            && out.contains("waldio_convert('"),
        "{out}"
    );
    assert!(out.contains("\"vacuumed\":true"), "{out}");
    assert!(out.contains("rows: 100"), "{out}");
}

#[test]
fn make_default_and_convert_refuse_bad_arguments_with_the_fix() {
    let dir = tempfile::tempdir().unwrap();
    let out = python(
        dir.path(),
        "for sql in [\"SELECT joj_make_default('unix2')\", \"SELECT waldio_convert('missing.db')\"]:\n\
         \x20   try:\n        loader.execute(sql).fetchone()\n    except sqlite3.Error as e:\n        print(e)\n\
         print(loader.execute(\"SELECT joj_make_default('waldio')\").fetchone()[0])\n\
         d = sqlite3.connect('dflt.db', isolation_level=None)\n\
         d.execute('PRAGMA journal_mode=WAL'); d.execute('CREATE TABLE t(x)'); d.execute('INSERT INTO t VALUES(1)')\n\
         print(d.execute(\"SELECT json_extract(waldio_state('dflt.db'), '$.database.marked')\").fetchone()[0])\n",
    );
    assert!(
        out.contains("\"unix2\" is not one of joj's VFSs; give 'waldio' or 'joj'"),
        "{out}"
    );
    assert!(out.contains("missing.db does not exist"), "{out}");
    let mut lines = out.lines().skip(2);
    assert_eq!(lines.next(), Some("unix"), "the previous default: {out}");
    assert_eq!(
        lines.next(),
        Some("1"),
        "the default VFS is now waldio: {out}"
    );
}

#[test]
fn a_huge_waldio_uri_number_is_refused_naming_its_bound_and_makes_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = python(
        dir.path(),
        "for p in ['waldio_prealloc_frames=1000000000000', 'waldio_group_ms=100000000000',\n\
         \x20         'waldio_group_kib=1000000000000']:\n\
         \x20   try:\n\
         \x20       c = sqlite3.connect('file:h.db?vfs=waldio&' + p, uri=True)\n\
         \x20       c.execute('PRAGMA journal_mode=WAL')\n\
         \x20       c.execute('CREATE TABLE t(x)')\n\
         \x20       print('accepted', p)\n\
         \x20   except sqlite3.Error as e:\n\
         \x20       print(e)\n",
    );
    for want in [
        "waldio_prealloc_frames=1000000000000 is out of range: give 1 to 65536",
        "waldio_group_ms=100000000000 is out of range: give 1 to 1000",
        "waldio_group_kib=1000000000000 is out of range: give 0 to 65536",
    ] {
        assert!(out.contains(want), "{want}: {out}");
    }
    assert!(!out.contains("accepted"), "{out}");
    assert!(!dir.path().join("h.db-waldio").exists(), "a WAL was made");
}

/// A path with a NUL byte in it named the file before the NUL (`waldio_convert('victim.db' ||
/// char(0) || '.not-this')` converted `victim.db`), and a name that is not UTF-8 was turned into
/// U+FFFD (another name): both are refused, naming the argument, and nothing is changed.
#[test]
fn a_path_with_a_nul_byte_or_not_utf8_is_refused_and_names_no_other_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = python(
        dir.path(),
        "v = sqlite3.connect('victim.db'); v.execute('create table t(x)'); v.commit(); v.close()\n\
         before = open('victim.db', 'rb').read()\n\
         for arg in [\"'victim.db' || char(0) || '.not-this'\", \"cast(x'ff2e6462' as text)\"]:\n\
         \x20   try:\n\
         \x20       print(loader.execute('select waldio_convert(' + arg + ')').fetchone())\n\
         \x20   except sqlite3.Error as e:\n\
         \x20       print(e)\n\
         print('unchanged', open('victim.db', 'rb').read() == before)\n",
    );
    assert!(
        out.contains("argument 1 holds a NUL byte"),
        "refused, naming the argument: {out}"
    );
    assert!(out.contains("argument 1 is not UTF-8 text"), "{out}");
    assert!(out.contains("unchanged True"), "{out}");
}

/// An argument of a megabyte is quoted in the message cut to its first 120 characters and its
/// length, as joj's other inputs are (the whole megabyte used to come back in every message).
#[test]
fn a_megabyte_argument_is_cut_in_the_message() {
    let dir = tempfile::tempdir().unwrap();
    let out = python(
        dir.path(),
        "big = 'x' * 1000000\n\
         for q, a in [('select waldio_state(?)', big), ('select waldio_convert(?)', big),\n\
         \x20            ('select joj_make_default(?)', big),\n\
         \x20            ('select joj_make_default(\\'waldio\\', ?)', 'waldio_journal=' + big),\n\
         \x20            ('select joj_make_default(\\'waldio\\', ?)', 'waldio_sync=' + big),\n\
         \x20            ('select joj_make_default(\\'waldio\\', ?)', big + '=1'),\n\
         \x20            ('select joj_make_default(\\'waldio\\', ?)', 'waldio_group_ms=' + big)]:\n\
         \x20   try:\n\
         \x20       loader.execute(q, (a,)).fetchone(); print('accepted', q)\n\
         \x20   except sqlite3.Error as e:\n\
         \x20       s = str(e); print(len(s), s if len(s) < 1000 else s[:160])\n\
         try:\n\
         \x20   sqlite3.connect('file:u.db?vfs=waldio&waldio_journal=' + big, uri=True).execute('select 1')\n\
         except sqlite3.Error as e:\n\
         \x20   s = str(e); print(len(s), s if len(s) < 1000 else s[:160])\n",
    );
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 8, "each refused: {out}");
    for l in lines {
        let (len, text) = l.split_once(' ').unwrap();
        let len: usize = len.parse().unwrap();
        assert!(len < 1000, "a message of {len} bytes: {text}");
        assert!(text.contains("… (10000"), "the length is said: {text}");
    }
}

/// A waldio option given twice is refused, in a URI and in `joj_make_default`: SQLite reads the
/// first, so `waldio_sync=normal&waldio_sync=full` ran with `normal` (a window of lost commits)
/// without a word.
#[test]
fn a_waldio_option_given_twice_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = python(
        dir.path(),
        "try:\n\
         \x20   sqlite3.connect('file:r.db?vfs=waldio&waldio_sync=normal&waldio_sync=full', uri=True).execute('select 1')\n\
         \x20   print('accepted')\n\
         except sqlite3.Error as e:\n\
         \x20   print(e)\n\
         try:\n\
         \x20   loader.execute(\"select joj_make_default('waldio', 'waldio_sync=normal&waldio_sync=full')\").fetchone()\n\
         \x20   print('accepted')\n\
         except sqlite3.Error as e:\n\
         \x20   print(e)\n",
    );
    assert!(!out.contains("accepted"), "{out}");
    assert_eq!(
        out.matches("\"waldio_sync\" is given more than once")
            .count(),
        2,
        "{out}"
    );
    assert!(out.contains("fix: give each waldio option once"), "{out}");
}
