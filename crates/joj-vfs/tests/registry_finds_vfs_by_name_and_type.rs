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
