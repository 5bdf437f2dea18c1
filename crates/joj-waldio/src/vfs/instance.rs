//! What one registered waldio VFS holds (there may be several, over different base VFSs):
//! its base, default options, counters, tap, observer and error log.

use crate::counters::AtomicWaldioCounters;
use crate::io::Tap;
use crate::options::{OptionsError, WaldioOptions};
use joj_vfs::{BaseVfs, ErrorLog, FileName, FileObserver};
use std::sync::{Arc, RwLock};

/// One registered waldio VFS.
pub(crate) struct Waldio {
    pub(crate) base: BaseVfs,
    pub(crate) defaults: RwLock<WaldioOptions>,
    pub(crate) counters: Arc<AtomicWaldioCounters>,
    pub(crate) tap: RwLock<Option<Arc<dyn Tap>>>,
    pub(crate) observer: RwLock<Option<Arc<dyn FileObserver>>>,
    /// Errors outside VFS calls (the group-sync timer's) are reported here.
    pub(crate) errors: ErrorLog,
}

impl Waldio {
    pub(crate) fn new(base: BaseVfs, errors: ErrorLog) -> Waldio {
        Waldio {
            base,
            defaults: RwLock::new(WaldioOptions::default()),
            counters: Arc::default(),
            tap: RwLock::new(None),
            observer: RwLock::new(None),
            errors,
        }
    }

    pub(crate) fn defaults(&self) -> WaldioOptions {
        read(&self.defaults)
    }

    pub(crate) fn tap(&self) -> Option<Arc<dyn Tap>> {
        read(&self.tap)
    }

    pub(crate) fn observer(&self) -> Option<Arc<dyn FileObserver>> {
        read(&self.observer)
    }

    /// Options for a WAL: the defaults overridden by the WAL name's URI parameters.
    pub(crate) fn options_for(&self, name: &FileName<'_>) -> Result<WaldioOptions, OptionsError> {
        self.defaults()
            .with_uri_params(|key| name.uri_parameter(key))
    }
}

pub(crate) fn read<T: Clone>(l: &RwLock<T>) -> T {
    joj_vfs::unpoisoned::read(l).clone()
}

pub(crate) fn write<T>(l: &RwLock<T>, value: T) {
    *joj_vfs::unpoisoned::write(l) = value;
}

pub(crate) use joj_vfs::unpoisoned::lock;
