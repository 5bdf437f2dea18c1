//! A pass-through VFS on joj-vfs's seam, registered over another VFS by name: what a tracing,
//! fault-injecting or crash-simulating test VFS stacked over joj's looks like to it.

use joj_vfs::{Access, BaseFile, BaseVfs, FileName, OpenFlags, SqliteError, Vfs, VfsFile};
use std::path::Path;

pub struct Shim {
    base: BaseVfs,
}

pub struct ShimFile {
    base: BaseFile,
}

impl Vfs for Shim {
    type File = ShimFile;

    fn open(
        &'static self,
        name: Option<&FileName<'_>>,
        flags: OpenFlags,
    ) -> Result<(ShimFile, OpenFlags), SqliteError> {
        let (base, out) = self.base.open(name, flags)?;
        Ok((ShimFile { base }, out))
    }

    fn delete(&self, path: &Path, sync_dir: bool) -> Result<(), SqliteError> {
        self.base.delete(path, sync_dir)
    }

    fn access(&self, path: &Path, check: Access) -> Result<bool, SqliteError> {
        self.base.access(path, check)
    }

    fn delegate(&self) -> Option<BaseVfs> {
        Some(self.base)
    }
}

impl VfsFile for ShimFile {
    joj_vfs::forward_to_base!(base, everything);
}

/// Register `shim-<base>` over the VFS `base`.
pub fn register_over(base: &str) {
    let b = BaseVfs::find(base).unwrap_or_else(|| panic!("no VFS {base}"));
    joj_vfs::register_vfs(&format!("shim-{base}"), |_| Shim { base: b })
        .unwrap_or_else(|e| panic!("registering shim-{base}: {e}"));
}
