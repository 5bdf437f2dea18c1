//! `--completion interrupt|poll` and `--wakeup-us`: the host completion model's options, shared
//! by `joj replay` and the `--device` runs of `bench` and `compare` (docs/polling.md).

use crate::output::CliError;
use clap::Args;
use joj_device::{Completion, HostCompletion};

#[derive(Args, Debug, Clone, Default)]
pub struct CompletionArgs {
    /// Host completion model (docs/polling.md): `interrupt` adds one wakeup per device command,
    /// `poll` keeps a CPU busy for the whole device time. Off when not given.
    #[arg(long, value_enum, help_heading = crate::groups::DEVICE)]
    pub completion: Option<CompletionArg>,
    /// Cost of one interrupt-driven wakeup in µs (default 10, an assumption: see docs/polling.md).
    #[arg(long = "wakeup-us", value_name = "US", help_heading = crate::groups::DEVICE, allow_negative_numbers = true, value_parser = wakeup_us)]
    pub wakeup_us: Option<f64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CompletionArg {
    Interrupt,
    Poll,
}

/// A wakeup cost: finite, 0 to 10,000 µs (10 ms, far above any host's).
fn wakeup_us(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && (0.0..=10_000.0).contains(&v) => Ok(v),
        _ => Err(format!(
            "`{s}` is not a wakeup cost; fix: give microseconds from 0 to 10000, e.g. 10 or 2.5"
        )),
    }
}

impl CompletionArgs {
    /// The model asked for, if any; `--wakeup-us` only with `--completion interrupt`.
    pub fn host(&self) -> Result<Option<HostCompletion>, CliError> {
        let completion = match (self.completion, self.wakeup_us) {
            (None, None) => return Ok(None),
            (Some(CompletionArg::Interrupt), _) => Completion::Interrupt,
            (Some(CompletionArg::Poll), None) => Completion::Poll,
            (_, Some(_)) => return Err(CliError::WakeupWithoutInterrupt),
        };
        let wakeup_ns = self
            .wakeup_us
            .map(|us| (us * 1e3).round() as u64)
            .unwrap_or(HostCompletion::DEFAULT_WAKEUP_NS);
        Ok(Some(HostCompletion {
            completion,
            wakeup_ns,
        }))
    }
}

/// One text line for a `completion` report, `unit` naming the operations (`transaction`,
/// `request`).
pub fn completion_line(h: &joj_device::CompletionReport, unit: &str) -> String {
    // The word `--completion` takes, not the type's name.
    let mode = match h.completion {
        joj_device::Completion::Interrupt => "interrupt",
        joj_device::Completion::Poll => "poll",
    };
    format!(
        "  completion {mode} (wakeup {:.1} µs): {} completions, {} wakeups, {} context switches; \
         host sees {:.4} s, {:.1} {unit}s/s, {:.1} µs per {unit}; CPU busy {:.4} s ({:.1} % of \
         one core)\n",
        h.wakeup_ns as f64 / 1e3,
        h.completions,
        h.wakeups,
        h.context_switches,
        h.modeled_s,
        h.modeled_ops_per_sec,
        h.latency_per_op_us,
        h.cpu_busy_s,
        100.0 * h.cpu_busy_fraction
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(completion: Option<CompletionArg>, wakeup_us: Option<f64>) -> CompletionArgs {
        CompletionArgs {
            completion,
            wakeup_us,
        }
    }

    #[test]
    fn wakeup_cost_needs_interrupt_completion() {
        assert!(matches!(
            args(None, Some(5.0)).host(),
            Err(CliError::WakeupWithoutInterrupt)
        ));
        assert!(matches!(
            args(Some(CompletionArg::Poll), Some(5.0)).host(),
            Err(CliError::WakeupWithoutInterrupt)
        ));
        let h = args(Some(CompletionArg::Interrupt), Some(2.5))
            .host()
            .unwrap()
            .unwrap();
        assert_eq!(h.wakeup_ns, 2_500);
        let h = args(Some(CompletionArg::Interrupt), None)
            .host()
            .unwrap()
            .unwrap();
        assert_eq!(h.wakeup_ns, HostCompletion::DEFAULT_WAKEUP_NS);
        assert!(args(None, None).host().unwrap().is_none());
    }

    #[test]
    fn the_completion_line_names_the_mode_as_the_option_does() {
        let r = joj_device::CompletionReport {
            completion: joj_device::Completion::Poll,
            wakeup_ns: 0,
            completions: 1,
            wakeups: 0,
            context_switches: 0,
            device_s: 1.0,
            host_overhead_s: 0.0,
            modeled_s: 1.0,
            cpu_busy_s: 1.0,
            cpu_busy_fraction: 1.0,
            latency_per_completion_us: 1.0,
            latency_per_op_us: 1.0,
            ops: 1,
            modeled_ops_per_sec: 1.0,
        };
        assert!(
            completion_line(&r, "request").starts_with("  completion poll ("),
            "{}",
            completion_line(&r, "request")
        );
    }

    #[test]
    fn a_wakeup_cost_out_of_range_is_refused() {
        assert!(wakeup_us("-1").is_err());
        assert!(wakeup_us("NaN").is_err());
        assert!(wakeup_us("20000").is_err());
        assert_eq!(wakeup_us("12.5"), Ok(12.5));
    }
}
