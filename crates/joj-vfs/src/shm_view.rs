//! [`ShmView`]: a region of the shared memory SQLite mapped through a base file, seen as 32-bit
//! words, for a VFS that must check what SQLite keeps there — waldio checks that the wal-index
//! header indexes its WAL — and, rarely, put it in a state SQLite repairs by itself.
//!
//! Other connections and processes change the region at any moment, with plain C stores. Every
//! word is read and written here as one relaxed atomic 32-bit access (never torn, never cached by
//! the compiler); a reader that needs two copies to agree orders its reads with
//! [`ShmView::fence`], as SQLite's `xShmBarrier` does.

use std::marker::PhantomData;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU32, Ordering};

/// A mapped shared-memory region, borrowed from the file that mapped it (see the module
/// documentation; `BaseFile::shm_view` makes one). The borrow keeps the file from unmapping it
/// meanwhile.
pub struct ShmView<'a> {
    words: NonNull<u32>,
    len_words: usize,
    writable: bool,
    _region: PhantomData<&'a mut [u32]>,
}

impl<'a> ShmView<'a> {
    /// # Safety
    /// `region` points at `bytes` bytes of memory, 4-byte aligned, that stay mapped for `'a`
    /// (the file it came from stays borrowed for `'a`); `writable` only if stores are allowed.
    pub(crate) unsafe fn new(region: NonNull<u8>, bytes: usize, writable: bool) -> ShmView<'a> {
        debug_assert!(region.as_ptr().align_offset(4) == 0);
        ShmView {
            words: region.cast(),
            len_words: bytes / 4,
            writable,
            _region: PhantomData,
        }
    }

    fn word(&self, i: usize) -> Option<&AtomicU32> {
        if i >= self.len_words {
            return None;
        }
        // SAFETY: `i` is inside the region, which is aligned and mapped for 'a (`new`'s
        // contract); other writers use plain 32-bit stores, which an atomic load never tears.
        Some(unsafe { AtomicU32::from_ptr(self.words.as_ptr().add(i)) })
    }

    /// How many words the region holds.
    pub fn len_words(&self) -> usize {
        self.len_words
    }

    /// Whether [`store`](Self::store) may change the region (a read-only `-shm` is mapped
    /// without write permission: a store would fault).
    pub fn writable(&self) -> bool {
        self.writable
    }

    /// Word `i` (`None` past the end).
    pub fn load(&self, i: usize) -> Option<u32> {
        self.word(i).map(|w| w.load(Ordering::Relaxed))
    }

    /// Set word `i`; `false` (nothing done) past the end or in a read-only region.
    pub fn store(&self, i: usize, value: u32) -> bool {
        match self.word(i) {
            Some(w) if self.writable => {
                w.store(value, Ordering::Relaxed);
                true
            }
            _ => false,
        }
    }

    /// A full memory barrier between the accesses before it and those after.
    pub fn fence(&self) {
        std::sync::atomic::fence(Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_read_and_written_in_range_and_refused_read_only() {
        let mut mem = vec![0u32; 8];
        let p = NonNull::new(mem.as_mut_ptr() as *mut u8).unwrap();
        // SAFETY: 32 aligned bytes that outlive both views.
        let rw = unsafe { ShmView::new(p, 32, true) };
        assert_eq!(rw.len_words(), 8);
        assert!(rw.store(7, 0xdead_beef));
        assert_eq!(rw.load(7), Some(0xdead_beef));
        assert_eq!(rw.load(8), None);
        assert!(!rw.store(8, 1));
        // SAFETY: as above.
        let ro = unsafe { ShmView::new(p, 32, false) };
        assert!(!ro.store(0, 1));
        assert_eq!(ro.load(0), Some(0));
        assert_eq!(mem[7], 0xdead_beef);
    }
}
