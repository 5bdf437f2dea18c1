//! The seam's registry: a name is registered once and found again only as the type it was
//! registered with; names SQLite already has, or that C cannot hold, are refused; `on_connect`
//! runs for the connections of its own VFS only.

mod common;

use common::{CountingVfs, MemVfs};
use joj_vfs::{Registered, VfsError, register_vfs};
use rusqlite::{Connection, OpenFlags};

#[test]
fn registry_finds_vfs_by_name_and_type() {
    let name = common::unique_name("registry");
    let first = register_vfs(&name, |_| CountingVfs::default()).unwrap();
    let again = register_vfs(&name, |_| -> CountingVfs { panic!("made twice") }).unwrap();
    assert!(std::ptr::eq(first.vfs(), again.vfs()));
    let found = Registered::<CountingVfs>::find(&name).unwrap().unwrap();
    assert!(std::ptr::eq(first.vfs(), found.vfs()));
    assert_eq!(found.name(), name);

    assert!(matches!(
        Registered::<MemVfs>::find(&name),
        Err(VfsError::OtherType { .. })
    ));
    assert!(matches!(
        register_vfs(&name, |_| MemVfs::default()),
        Err(VfsError::OtherType { .. })
    ));
    assert!(Registered::<MemVfs>::find("no-such-vfs").unwrap().is_none());
    assert_eq!(
        register_vfs("unix", |_| MemVfs::default()).unwrap_err(),
        VfsError::NameTaken {
            name: "unix".into()
        }
    );
    assert!(matches!(
        register_vfs("nul\0name", |_| MemVfs::default()),
        Err(VfsError::BadName { .. })
    ));

    // on_connect: once per connection on this VFS, never for another VFS's connections.
    let dir = tempfile::tempdir().unwrap();
    let _mine = Connection::open_with_flags_and_vfs(
        dir.path().join("a.db"),
        OpenFlags::default(),
        name.as_str(),
    )
    .unwrap();
    let _other = Connection::open(dir.path().join("b.db")).unwrap();
    assert_eq!(first.vfs().count("on_connect"), 1);
    assert_eq!(first.as_base().name(), name);
}

/// Threads registering one name at once all get the one VFS: none is told the name is taken
/// by the VFS another thread is registering (seen once in CI: two tests calling the accounting
/// VFS's `register()` at once, one got `NameTaken { name: "joj" }`).
#[test]
fn threads_registering_one_name_at_once_all_get_it() {
    for round in 0..200 {
        let name = common::unique_name(&format!("race{round}"));
        let start = std::sync::Arc::new(std::sync::Barrier::new(4));
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let (name, start) = (name.clone(), start.clone());
                std::thread::spawn(move || {
                    start.wait();
                    register_vfs(&name, |_| CountingVfs::default())
                        .map(|r| r.vfs() as *const CountingVfs as usize)
                })
            })
            .collect();
        let got: Vec<_> = threads.into_iter().map(|t| t.join().unwrap()).collect();
        for r in &got {
            assert!(r.is_ok(), "round {round}: {got:?}");
        }
        assert!(
            got.windows(2)
                .all(|w| w[0].as_ref().ok() == w[1].as_ref().ok())
        );
    }
}

/// An application that unregisters a VFS of joj's (`sqlite3_vfs_unregister`) and loads the
/// extension again gets it back: registering again registers the same object with SQLite
/// (it used to find its own registry entry and answer OK with nothing registered, so the next
/// open failed with `no such vfs`).
#[test]
fn a_vfs_the_application_unregistered_is_registered_again() {
    let name = common::unique_name("unregistered");
    let first = register_vfs(&name, |_| CountingVfs::default()).unwrap();
    let c_name = std::ffi::CString::new(name.as_str()).unwrap();
    // SAFETY: finding and unregistering a VFS SQLite knows; the object itself lives on.
    let rc = unsafe {
        rusqlite::ffi::sqlite3_vfs_unregister(rusqlite::ffi::sqlite3_vfs_find(c_name.as_ptr()))
    };
    assert_eq!(rc, rusqlite::ffi::SQLITE_OK);
    assert!(joj_vfs::BaseVfs::find(&name).is_none());
    let again = register_vfs(&name, |_| -> CountingVfs { panic!("made twice") }).unwrap();
    assert!(std::ptr::eq(first.vfs(), again.vfs()));
    assert!(joj_vfs::BaseVfs::find(&name).is_some());
    let dir = tempfile::tempdir().unwrap();
    Connection::open_with_flags_and_vfs(
        dir.path().join("a.db"),
        OpenFlags::default(),
        name.as_str(),
    )
    .unwrap();
}
