//! One line of `strace -f -ttt -T -y` output, taken apart: thread, time, call name, arguments
//! split at top-level commas (strings, `{…}`, `[…]` and `-y`'s `<path>` kept whole), return
//! value, errno and duration; and `<unfinished ...>` / `<... NAME resumed>` halves, which the
//! importer joins per thread.

/// Why a line is not strace output joj reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum BadLine {
    #[error("no thread id (strace -f)")]
    NoThreadId,
    #[error("no -ttt time stamp (seconds.micros)")]
    NoTimeStamp,
    #[error("a `<...` line without `resumed>`")]
    NoResumed,
    #[error("no call name")]
    NoCallName,
    #[error("arguments without their closing `)`")]
    UnclosedArgs,
    #[error("no `= result`")]
    NoResult,
    #[error("no -T duration `<seconds>`")]
    NoDuration,
    #[error("a result that is not a number")]
    ResultNotANumber,
    #[error("a `resumed>` line whose `<unfinished ...>` line is missing")]
    ResumedWithoutStart,
    #[error("a `resumed>` line of another call than the unfinished one")]
    ResumedOtherCall,
}

/// What one line of strace output is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Line {
    /// A whole call.
    Call(RawCall),
    /// The first half of a call another thread interrupted: its arguments so far.
    Unfinished {
        tid: u64,
        time_ns: u64,
        name: String,
        args_head: String,
        /// The thread whose `resumed>` line finishes it: `tid`, or, for an `execve` by a
        /// thread other than the process's first, the process's id it takes (`<pid changed
        /// to N ...>`).
        resumed_by: u64,
    },
    /// The second half: the rest of the arguments, then the result.
    Resumed {
        tid: u64,
        name: String,
        /// Everything after `resumed>`.
        tail: String,
    },
    /// A thread ended (`+++ exited with 0 +++`, `+++ killed by SIGKILL +++`): what its
    /// process held is let go when it was the last thread sharing its descriptors.
    Exited { tid: u64, time_ns: u64 },
    /// Signals, `strace: Process … attached` and the like.
    Other,
}

/// A whole call as strace printed it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct RawCall {
    pub(super) tid: u64,
    pub(super) time_ns: u64,
    pub(super) name: String,
    pub(super) args: Vec<String>,
    /// `None` for `= ?` (a call that never returned, e.g. `exit_group`).
    pub(super) ret: Option<i64>,
    /// The `-y` path of a returned descriptor (`= 5</x/y>`).
    pub(super) ret_path: Option<String>,
    /// The thread id the calling thread has after the call, when it changed: an `execve` by
    /// a thread other than the process's first takes the process's id.
    pub(super) became: Option<u64>,
    pub(super) errno: Option<String>,
    pub(super) dur_ns: u64,
}

/// Seconds with a decimal fraction (`1795624668.078238`, `0.000025`) in nanoseconds.
pub(super) fn seconds_to_ns(s: &str) -> Option<u64> {
    let (int, frac) = s.split_once('.').unwrap_or((s, ""));
    let secs: u64 = int.parse().ok()?;
    if !frac.chars().all(|c| c.is_ascii_digit()) || frac.len() > 9 {
        return None;
    }
    let frac_ns: u64 = if frac.is_empty() {
        0
    } else {
        frac.parse::<u64>().ok()? * 10u64.pow(9 - frac.len() as u32)
    };
    secs.checked_mul(1_000_000_000)?.checked_add(frac_ns)
}

/// Take one line apart (`Err`: why it is not strace output).
pub(super) fn parse_line(line: &str) -> Result<Line, BadLine> {
    let line = line.trim();
    // strace pads the thread column to a width (`5073  1795625372.819054 …`).
    let (first, after_first) = line.split_once(' ').unwrap_or((line, ""));
    // Without -f there is no thread column: the time comes first.
    let (tid, time, rest) = if first.contains('.') {
        (0, first, after_first.trim_start())
    } else {
        let tid = first.parse().map_err(|_| BadLine::NoThreadId)?;
        let after_first = after_first.trim_start();
        let (time, rest) = after_first.split_once(' ').ok_or(BadLine::NoTimeStamp)?;
        (tid, time, rest.trim_start())
    };
    if rest.starts_with("+++ exited with ") || rest.starts_with("+++ killed by ") {
        let time_ns = seconds_to_ns(time).ok_or(BadLine::NoTimeStamp)?;
        return Ok(Line::Exited { tid, time_ns });
    }
    if rest.starts_with("+++") || rest.starts_with("---") || rest.is_empty() {
        return Ok(Line::Other);
    }
    let time_ns = seconds_to_ns(time).ok_or(BadLine::NoTimeStamp)?;
    if let Some(r) = rest.strip_prefix("<... ") {
        let (name, tail) = r.split_once(" resumed>").ok_or(BadLine::NoResumed)?;
        return Ok(Line::Resumed {
            tid,
            name: name.to_string(),
            tail: tail.to_string(),
        });
    }
    let (name, after) = rest.split_once('(').ok_or(BadLine::NoCallName)?;
    if let Some(head) = after.strip_suffix("<unfinished ...>") {
        return Ok(Line::Unfinished {
            tid,
            time_ns,
            name: name.to_string(),
            args_head: head.to_string(),
            resumed_by: tid,
        });
    }
    // `execve(…) <pid changed to 3057 ...>`: resumed by the process's first thread's id.
    if let Some(head_pid) = after.strip_suffix(" ...>")
        && let Some((head, pid)) = head_pid.rsplit_once("<pid changed to ")
        && let Ok(pid) = pid.parse::<u64>()
    {
        return Ok(Line::Unfinished {
            tid,
            time_ns,
            name: name.to_string(),
            args_head: head.trim_end().to_string(),
            resumed_by: pid,
        });
    }
    parse_call(tid, time_ns, name, after).map(Line::Call)
}

/// A whole call from its name and everything after its `(`.
pub(super) fn parse_call(
    tid: u64,
    time_ns: u64,
    name: &str,
    after: &str,
) -> Result<RawCall, BadLine> {
    let (args, rest) = split_args(after).ok_or(BadLine::UnclosedArgs)?;
    let rest = rest.trim_start();
    let rest = rest
        .strip_prefix('=')
        .ok_or(BadLine::NoResult)?
        .trim_start();
    let (result, dur) = match rest.rfind(" <") {
        Some(i) if rest.ends_with('>') => (&rest[..i], &rest[i + 2..rest.len() - 1]),
        _ => return Err(BadLine::NoDuration),
    };
    let dur_ns = seconds_to_ns(dur).unwrap_or(0);
    let (ret_text, errno_text) = result.split_once(' ').unwrap_or((result, ""));
    let (ret, ret_path) = if ret_text == "?" {
        (None, None)
    } else {
        let (num, path) = split_fd_path(ret_text);
        let n = if let Some(hex) = num.strip_prefix("0x") {
            i64::from_str_radix(hex, 16).map_err(|_| BadLine::ResultNotANumber)?
        } else {
            num.parse().map_err(|_| BadLine::ResultNotANumber)?
        };
        (Some(n), path)
    };
    let errno = errno_text
        .split_whitespace()
        .next()
        .filter(|e| e.starts_with('E'))
        .map(str::to_string);
    Ok(RawCall {
        tid,
        time_ns,
        name: name.to_string(),
        args,
        ret,
        ret_path,
        became: None,
        errno,
        dur_ns,
    })
}

/// `5</x/y>` → (`5`, `/x/y`); `AT_FDCWD</d>` → (`AT_FDCWD`, `/d`); `0` → (`0`, none). A path
/// of a deleted file loses strace's ` (deleted)`.
pub(super) fn split_fd_path(s: &str) -> (&str, Option<String>) {
    match s.split_once('<') {
        Some((n, p)) if p.ends_with('>') => {
            let p = &p[..p.len() - 1];
            let p = p.strip_suffix(" (deleted)").unwrap_or(p);
            (n, Some(p.to_string()))
        }
        _ => (s, None),
    }
}

/// Split `a, "b,c", {d, e}, f) = …` at top-level commas up to the closing `)`; the rest after
/// it.
fn split_args(s: &str) -> Option<(Vec<String>, &str)> {
    let mut args = Vec::new();
    let mut cur = String::new();
    let mut depth = 0u32;
    let mut chars = s.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => {
                cur.push(c);
                while let Some((_, q)) = chars.next() {
                    cur.push(q);
                    if q == '\\' {
                        cur.extend(chars.next().map(|(_, e)| e));
                    } else if q == '"' {
                        break;
                    }
                }
            }
            '<' => {
                cur.push(c);
                for (_, q) in chars.by_ref() {
                    cur.push(q);
                    if q == '>' {
                        break;
                    }
                }
            }
            '(' | '[' | '{' => {
                depth += 1;
                cur.push(c);
            }
            ')' if depth == 0 => {
                if !cur.trim().is_empty() || !args.is_empty() {
                    args.push(cur.trim().to_string());
                }
                return Some((args, &s[i + 1..]));
            }
            ')' | ']' | '}' => {
                depth = depth.saturating_sub(1);
                cur.push(c);
            }
            ',' if depth == 0 => args.push(std::mem::take(&mut cur).trim().to_string()),
            _ => cur.push(c),
        }
    }
    None
}

/// A C string as strace prints it (`"a\"b\0\20"`, possibly followed by `...`) without its
/// quotes and escapes.
pub(super) fn unquote(s: &str) -> Option<Vec<u8>> {
    let s = s.strip_suffix("...").unwrap_or(s);
    let inner = s.strip_prefix('"')?.strip_suffix('"')?;
    let mut out = Vec::with_capacity(inner.len());
    let b = inner.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'\\' {
            out.push(b[i]);
            i += 1;
            continue;
        }
        let e = *b.get(i + 1)?;
        i += 2;
        match e {
            b'n' => out.push(b'\n'),
            b't' => out.push(b'\t'),
            b'r' => out.push(b'\r'),
            b'v' => out.push(0x0b),
            b'f' => out.push(0x0c),
            b'x' => {
                let hex = std::str::from_utf8(b.get(i..i + 2)?).ok()?;
                out.push(u8::from_str_radix(hex, 16).ok()?);
                i += 2;
            }
            b'0'..=b'7' => {
                let mut v = u32::from(e - b'0');
                for _ in 0..2 {
                    match b.get(i) {
                        Some(d @ b'0'..=b'7') => {
                            v = v * 8 + u32::from(d - b'0');
                            i += 1;
                        }
                        _ => break,
                    }
                }
                out.push(u8::try_from(v).ok()?);
            }
            other => out.push(other),
        }
    }
    Some(out)
}
