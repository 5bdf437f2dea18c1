//! A progress bar on stderr fed by the workload's transaction counter. Hidden when stderr is
//! not a terminal, so `--json` output and logs stay clean.

use indicatif::{ProgressBar, ProgressStyle};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

pub struct Progress {
    pub counter: Arc<AtomicU64>,
    bar: ProgressBar,
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<()>>,
}

impl Progress {
    pub fn start(total: u64, label: &str) -> Progress {
        Self::start_counting(total, label, "txn")
    }

    /// A bar whose position counts `unit`s (`txn`, `req`).
    pub fn start_counting(total: u64, label: &str, unit: &str) -> Progress {
        let counter = Arc::new(AtomicU64::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let bar = ProgressBar::new(total);
        bar.set_style(
            ProgressStyle::with_template(&format!(
                "{{prefix:>12}} [{{bar:30}}] {{pos}}/{{len}} {unit} {{per_sec}} eta {{eta}}"
            ))
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
        );
        bar.set_prefix(label.to_string());
        let (c, s, b) = (counter.clone(), stop.clone(), bar.clone());
        let handle = std::thread::spawn(move || {
            while !s.load(Ordering::Relaxed) {
                b.set_position(c.load(Ordering::Relaxed));
                std::thread::sleep(Duration::from_millis(100));
            }
            b.finish_and_clear();
        });
        Progress {
            counter,
            bar,
            stop,
            handle: Some(handle),
        }
    }

    /// Start the bar afresh for another phase of the same job.
    pub fn restart(&self, total: u64, label: &str) {
        self.counter.store(0, Ordering::Relaxed);
        self.bar.set_length(total);
        self.bar.set_position(0);
        self.bar.reset_eta();
        self.bar.set_prefix(label.to_string());
    }

    /// Print a message on stderr above the bar.
    pub fn println(&self, msg: &str) {
        if self.bar.is_hidden() {
            eprint!("{msg}");
        } else {
            self.bar.println(msg.trim_end());
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}
