//! [`forward_to_base!`]: the file methods a VFS that wraps a [`BaseFile`](crate::BaseFile)
//! usually leaves to it, written once.

/// Inside `impl VfsFile for T`, where `self.$base` is a [`BaseFile`](crate::BaseFile): forward
/// `file_size`, the locks, `file_control`, `sector_size`, `device_characteristics`, the
/// shared-memory methods (`has_shared_memory` included) and `fetch` / `unfetch`
/// (`has_memory_map` included) to it unchanged. The file writes `read`, `write`, `truncate`,
/// `sync` and `close` itself. (`self.$base` may also be a
/// [`SharedBaseFile`](crate::SharedBaseFile), which has the same methods.)
/// `forward_to_base!(base, except file_control)` forwards all of them but `file_control`;
/// `forward_to_base!(base, everything)` forwards `read`, `write`, `truncate`, `sync` and `close`
/// too (a file whose VFS changes only what is opened, not how).
#[macro_export]
macro_rules! forward_to_base {
    ($base:ident, everything) => {
        fn read(
            &mut self,
            buf: &mut [u8],
            offset: u64,
        ) -> Result<$crate::ReadOutcome, $crate::SqliteError> {
            self.$base.read(buf, offset)
        }

        fn write(&mut self, data: &[u8], offset: u64) -> Result<(), $crate::SqliteError> {
            self.$base.write(data, offset)
        }

        fn truncate(&mut self, size: u64) -> Result<(), $crate::SqliteError> {
            self.$base.truncate(size)
        }

        fn sync(&mut self, flags: $crate::SyncFlags) -> Result<(), $crate::SqliteError> {
            self.$base.sync(flags)
        }

        $crate::forward_to_base!($base);

        fn close(self) -> Result<(), $crate::SqliteError> {
            self.$base.close()
        }
    };
    ($base:ident) => {
        $crate::forward_to_base!($base, except file_control);

        fn file_control(
            &mut self,
            control: $crate::FileControl<'_>,
        ) -> Result<(), $crate::SqliteError> {
            self.$base.file_control(control)
        }
    };
    ($base:ident, except file_control) => {
        fn file_size(&mut self) -> Result<u64, $crate::SqliteError> {
            self.$base.file_size()
        }

        fn lock(&mut self, level: $crate::LockLevel) -> Result<(), $crate::SqliteError> {
            self.$base.lock(level)
        }

        fn unlock(&mut self, level: $crate::LockLevel) -> Result<(), $crate::SqliteError> {
            self.$base.unlock(level)
        }

        fn check_reserved_lock(&mut self) -> Result<bool, $crate::SqliteError> {
            self.$base.check_reserved_lock()
        }

        fn sector_size(&mut self) -> u32 {
            self.$base.sector_size()
        }

        fn device_characteristics(&mut self) -> $crate::DeviceCharacteristics {
            self.$base.device_characteristics()
        }

        fn has_shared_memory(&self) -> bool {
            self.$base.has_shared_memory()
        }

        fn has_memory_map(&self) -> bool {
            self.$base.has_memory_map()
        }

        fn shm_map(
            &mut self,
            region: u32,
            region_bytes: u32,
            extend: bool,
        ) -> Result<$crate::ShmMapping, $crate::SqliteError> {
            self.$base.shm_map(region, region_bytes, extend)
        }

        fn shm_lock(
            &mut self,
            offset: u32,
            count: u32,
            flags: $crate::ShmLockFlags,
        ) -> Result<(), $crate::SqliteError> {
            self.$base.shm_lock(offset, count, flags)
        }

        fn shm_barrier(&mut self) {
            self.$base.shm_barrier()
        }

        fn shm_unmap(&mut self, delete: bool) -> Result<(), $crate::SqliteError> {
            self.$base.shm_unmap(delete)
        }

        fn fetch(
            &mut self,
            offset: u64,
            amount: usize,
        ) -> Result<Option<$crate::FetchedPage>, $crate::SqliteError> {
            self.$base.fetch(offset, amount)
        }

        fn unfetch(
            &mut self,
            offset: u64,
            page: Option<$crate::FetchedPage>,
        ) -> Result<(), $crate::SqliteError> {
            self.$base.unfetch(offset, page)
        }
    };
}
