//! Input files, read the way every joj command reads them: only a regular file (a device, FIFO
//! or socket named where a file is meant is refused before a byte is read — `/dev/zero` would
//! fill memory, a FIFO would block joj for ever), never more than a limit the caller states
//! (refused with the file's size and the limit, before it is read), and text a line at a time
//! with a cap on a line's length, so that a file without a newline cannot make one huge
//! allocation. [`quoted`] caps what a message repeats of its input.
//!
//! Invariants: nothing here allocates more than the limit it is given (plus one byte, to see
//! that a file grew past it while being read); a file is opened with `O_NONBLOCK` (opening a
//! FIFO does not wait for a writer) and its type is taken from the opened descriptor, so what
//! is checked is what is read.

use std::fs::File;
use std::io::{self, BufRead, Read};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// The longest line any of joj's text inputs has a use for: a recorded call with two paths of
/// `PATH_MAX` bytes, escaped, or a trace's header with its run facts, is a few tens of KiB.
pub const MAX_LINE_BYTES: usize = 1 << 20;

/// How many characters of an input a message repeats ([`quoted`]).
pub const QUOTE_CHARS: usize = 120;

/// Why an input file cannot be read. Each message names the file, the cause and the fix.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum InputError {
    #[error(
        "cannot open {}: {source}; fix: check that the path exists and is readable",
        .path.display()
    )]
    Open {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    /// A device, FIFO, socket or directory where a file is meant.
    #[error(
        "{} is {kind}, not a regular file; fix: name a regular file ({what} is read to its end, \
         and a device or FIFO may never end or never answer)",
        .path.display()
    )]
    NotRegularFile {
        path: PathBuf,
        kind: &'static str,
        what: &'static str,
    },
    #[error(
        "{} is {} bytes ({}), more than joj reads as {what} ({} bytes, {}: it is held in \
         memory whole); fix: check that it is the file meant, or cut it into smaller ones",
        .path.display(), .size_bytes, human(*.size_bytes), .limit_bytes, human(*.limit_bytes)
    )]
    TooLarge {
        path: PathBuf,
        size_bytes: u64,
        limit_bytes: u64,
        what: &'static str,
    },
    #[error(
        "{} line {line} is longer than {limit_bytes} bytes, the most joj reads of a line of \
         {what}; fix: check that it is the file meant (a line of {what} is far shorter)",
        .path.display()
    )]
    LineTooLong {
        path: PathBuf,
        line: u64,
        limit_bytes: usize,
        what: &'static str,
    },
    #[error(
        "cannot read {}: {source}; fix: check that the file is readable and its disk healthy",
        .path.display()
    )]
    Read {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
}

/// `n` bytes in the largest binary unit that keeps a whole number before the point.
fn human(n: u64) -> String {
    const UNITS: [(&str, u32); 4] = [("TiB", 40), ("GiB", 30), ("MiB", 20), ("KiB", 10)];
    for (unit, shift) in UNITS {
        if n >= 1 << shift {
            return format!("{:.1} {unit}", n as f64 / (1u64 << shift) as f64);
        }
    }
    format!("{n} B")
}

/// What a file that is not a regular file is, for the message.
fn kind_of(t: std::fs::FileType) -> &'static str {
    if t.is_dir() {
        "a directory"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_fifo() {
        "a FIFO (named pipe)"
    } else if t.is_socket() {
        "a socket"
    } else {
        "not a file"
    }
}

/// An input file, opened and checked: a regular file of `size_bytes` (at the time it was
/// opened), at most the limit it was opened with.
#[derive(Debug)]
pub struct Input {
    pub file: File,
    pub path: PathBuf,
    pub size_bytes: u64,
    pub limit_bytes: u64,
    pub what: &'static str,
}

/// Open `path` as `what` (`"a joj-trace file"`): a regular file of at most `limit_bytes`.
pub fn open(path: &Path, limit_bytes: u64, what: &'static str) -> Result<Input, InputError> {
    open_flags(path, limit_bytes, what, 0)
}

/// [`read_all`] of a file whose name was found in someone else's document (a plot a saved
/// result names beside it): never through a symlink, which could point at any file root may
/// read and have it copied into a page.
pub fn read_all_not_through_a_link(
    path: &Path,
    limit_bytes: u64,
    what: &'static str,
) -> Result<Vec<u8>, InputError> {
    open_flags(path, limit_bytes, what, libc::O_NOFOLLOW)?.read_all()
}

fn open_flags(
    path: &Path,
    limit_bytes: u64,
    what: &'static str,
    extra: i32,
) -> Result<Input, InputError> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY | extra)
        .open(path)
        .map_err(|source| InputError::Open {
            path: path.to_path_buf(),
            source,
        })?;
    checked(file, path, limit_bytes, what)
}

/// A file opened by the caller (beneath a folder's descriptor, say), checked as [`open`]
/// checks what it opens: a regular file of at most `limit_bytes`, found from the descriptor.
pub fn checked(
    file: std::fs::File,
    path: &Path,
    limit_bytes: u64,
    what: &'static str,
) -> Result<Input, InputError> {
    let meta = file.metadata().map_err(|source| InputError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    if !meta.is_file() {
        return Err(InputError::NotRegularFile {
            path: path.to_path_buf(),
            kind: kind_of(meta.file_type()),
            what,
        });
    }
    if meta.len() > limit_bytes {
        return Err(InputError::TooLarge {
            path: path.to_path_buf(),
            size_bytes: meta.len(),
            limit_bytes,
            what,
        });
    }
    Ok(Input {
        file,
        path: path.to_path_buf(),
        size_bytes: meta.len(),
        limit_bytes,
        what,
    })
}

impl Input {
    /// The same file through a second descriptor of the one opened (never its name again),
    /// for a second reading of what was checked. The two share one offset: seek it to the
    /// start once the first reading is done.
    pub fn try_clone(&self) -> io::Result<Input> {
        Ok(Input {
            file: self.file.try_clone()?,
            path: self.path.clone(),
            size_bytes: self.size_bytes,
            limit_bytes: self.limit_bytes,
            what: self.what,
        })
    }

    /// The whole file (refused if it grew past the limit since it was opened).
    pub fn read_all(self) -> Result<Vec<u8>, InputError> {
        let mut bytes = Vec::with_capacity(usize::try_from(self.size_bytes).unwrap_or(0));
        let read = (&self.file)
            .take(self.limit_bytes.saturating_add(1))
            .read_to_end(&mut bytes);
        read.map_err(|source| InputError::Read {
            path: self.path.clone(),
            source,
        })?;
        if bytes.len() as u64 > self.limit_bytes {
            return Err(self.too_large(bytes.len() as u64));
        }
        Ok(bytes)
    }

    /// A reader of the file that fails once more than the limit has been read.
    pub fn reader(self) -> Limited {
        Limited {
            inner: io::BufReader::new(self.file),
            left: self.limit_bytes,
            path: self.path,
            limit_bytes: self.limit_bytes,
            what: self.what,
        }
    }

    fn too_large(&self, size_bytes: u64) -> InputError {
        InputError::TooLarge {
            path: self.path.clone(),
            size_bytes,
            limit_bytes: self.limit_bytes,
            what: self.what,
        }
    }
}

/// `path`'s whole contents as `what`, at most `limit_bytes` (see [`open`]).
pub fn read_all(path: &Path, limit_bytes: u64, what: &'static str) -> Result<Vec<u8>, InputError> {
    open(path, limit_bytes, what)?.read_all()
}

/// A buffered reader of an [`Input`] that stops with an error past the file's limit (a file
/// that grows while it is read).
#[derive(Debug)]
pub struct Limited {
    inner: io::BufReader<File>,
    left: u64,
    path: PathBuf,
    limit_bytes: u64,
    what: &'static str,
}

impl Limited {
    /// The error a read past the limit returns, as an [`InputError`] (see [`LineReader`]).
    pub fn input_error(&self, e: io::Error) -> InputError {
        if e.kind() == io::ErrorKind::FileTooLarge {
            InputError::TooLarge {
                path: self.path.clone(),
                size_bytes: self.limit_bytes.saturating_add(1),
                limit_bytes: self.limit_bytes,
                what: self.what,
            }
        } else {
            InputError::Read {
                path: self.path.clone(),
                source: e,
            }
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn what(&self) -> &'static str {
        self.what
    }
}

fn past_limit() -> io::Error {
    io::Error::new(io::ErrorKind::FileTooLarge, "more than the input's limit")
}

impl BufRead for Limited {
    /// At most what is left of the limit; an error when the file holds more than that.
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        let left = usize::try_from(self.left).unwrap_or(usize::MAX);
        let buf = self.inner.fill_buf()?;
        if left == 0 && !buf.is_empty() {
            return Err(past_limit());
        }
        Ok(&buf[..buf.len().min(left)])
    }

    fn consume(&mut self, amt: usize) {
        self.inner.consume(amt);
        self.left = self.left.saturating_sub(amt as u64);
    }
}

impl Read for Limited {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let avail = self.fill_buf()?;
        let n = avail.len().min(out.len());
        out[..n].copy_from_slice(&avail[..n]);
        self.consume(n);
        Ok(n)
    }
}

/// What [`read_line`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Line {
    /// The end of the input: nothing was read.
    End,
    /// A line, in the buffer with its `\n` if it had one (the last line may not).
    Read,
    /// A line longer than the cap: the buffer holds its first `cap + 1` bytes.
    TooLong,
}

/// Read one line of at most `cap` bytes (its `\n` not counted) into `buf` (cleared first),
/// never holding more than `cap + 1` bytes of it.
pub fn read_line<R: BufRead + ?Sized>(
    r: &mut R,
    buf: &mut Vec<u8>,
    cap: usize,
) -> io::Result<Line> {
    buf.clear();
    let most = cap as u64 + 1;
    let n = Read::take(&mut *r, most).read_until(b'\n', buf)?;
    Ok(if n == 0 {
        Line::End
    } else if n as u64 == most && buf.last() != Some(&b'\n') {
        Line::TooLong
    } else {
        Line::Read
    })
}

/// The lines of an [`Input`], each at most `cap` bytes, the whole at most the input's limit;
/// every failure an [`InputError`] naming the file (and the line).
#[derive(Debug)]
pub struct LineReader {
    inner: Limited,
    cap: usize,
    line: u64,
    buf: Vec<u8>,
}

impl LineReader {
    pub fn new(input: Input, cap: usize) -> LineReader {
        LineReader {
            inner: input.reader(),
            cap,
            line: 0,
            buf: Vec::new(),
        }
    }

    /// The next line without its `\n` (and whether it had one), or `None` at the end.
    pub fn next_line(&mut self) -> Result<Option<(&[u8], bool)>, InputError> {
        let got = read_line(&mut self.inner, &mut self.buf, self.cap);
        let got = match got {
            Ok(g) => g,
            Err(e) => return Err(self.inner.input_error(e)),
        };
        match got {
            Line::End => Ok(None),
            Line::TooLong => Err(InputError::LineTooLong {
                path: self.inner.path.clone(),
                line: self.line + 1,
                limit_bytes: self.cap,
                what: self.inner.what,
            }),
            Line::Read => {
                self.line += 1;
                let complete = self.buf.last() == Some(&b'\n');
                let end = self.buf.len() - usize::from(complete);
                Ok(Some((&self.buf[..end], complete)))
            }
        }
    }

    /// The number of the line [`LineReader::next_line`] returned last (from 1).
    pub fn line(&self) -> u64 {
        self.line
    }
}

/// `path` for a message: as it is, up to the longest path Linux takes (4,096 bytes), else
/// quoted and cut as [`quoted`] cuts (a path given as an argument may be any text).
pub fn shown_path(path: &Path) -> String {
    let text = path.display().to_string();
    if text.len() <= 4096 {
        text
    } else {
        quoted(&text)
    }
}

/// `text` quoted (as `{:?}` quotes it) for a message, cut to [`QUOTE_CHARS`] characters with
/// the length of the whole said: `"abc…" (1073741824 bytes)`.
pub fn quoted(text: &str) -> String {
    let mut cut = text.char_indices().nth(QUOTE_CHARS).map(|(i, _)| i);
    if let Some(at) = cut
        && at >= text.len()
    {
        cut = None;
    }
    match cut {
        None => format!("{text:?}"),
        Some(at) => format!("{:?}… ({} bytes)", &text[..at], text.len()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_device_a_fifo_and_a_directory_are_refused_before_they_are_read() {
        for (path, kind) in [("/dev/zero", "a character device"), ("/", "a directory")] {
            let e = read_all(Path::new(path), 1 << 20, "a test input").unwrap_err();
            assert!(
                matches!(e, InputError::NotRegularFile { kind: k, .. } if k == kind),
                "{e}"
            );
            assert!(e.to_string().contains("fix: name a regular file"), "{e}");
        }
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: mkfifo on a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        // Opening a FIFO with no writer would block without O_NONBLOCK: this returns.
        let e = read_all(&fifo, 1 << 20, "a test input").unwrap_err();
        assert!(e.to_string().contains("a FIFO"), "{e}");
    }

    #[test]
    fn a_file_past_its_limit_is_refused_with_its_size() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("big");
        std::fs::write(&f, vec![b'x'; 4097]).unwrap();
        let e = read_all(&f, 4096, "a test input").unwrap_err();
        assert!(
            matches!(
                e,
                InputError::TooLarge {
                    size_bytes: 4097,
                    limit_bytes: 4096,
                    ..
                }
            ),
            "{e}"
        );
        assert_eq!(read_all(&f, 4097, "a test input").unwrap().len(), 4097);
    }

    #[test]
    fn a_line_past_the_cap_is_refused_holding_no_more_than_the_cap() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("lines");
        let mut text = b"short\n".to_vec();
        text.extend(vec![b'y'; 100]);
        std::fs::write(&f, &text).unwrap();
        let mut lines = LineReader::new(open(&f, 1 << 20, "a test input").unwrap(), 50);
        assert_eq!(lines.next_line().unwrap(), Some((&b"short"[..], true)));
        let e = lines.next_line().unwrap_err();
        assert!(matches!(e, InputError::LineTooLong { line: 2, .. }), "{e}");
        assert!(lines.buf.len() <= 51);
        // A last line without its newline, within the cap, is a line.
        std::fs::write(&f, b"a\nb").unwrap();
        let mut lines = LineReader::new(open(&f, 1 << 20, "a test input").unwrap(), 1);
        assert_eq!(lines.next_line().unwrap(), Some((&b"a"[..], true)));
        assert_eq!(lines.next_line().unwrap(), Some((&b"b"[..], false)));
        assert_eq!(lines.next_line().unwrap(), None);
    }

    #[test]
    fn a_quote_keeps_short_text_and_cuts_long_text_saying_its_length() {
        assert_eq!(quoted("a\"b"), r#""a\"b""#);
        let long = "é".repeat(1000);
        let q = quoted(&long);
        assert!(q.ends_with("… (2000 bytes)"), "{q}");
        assert!(q.chars().count() < QUOTE_CHARS + 30, "{q}");
    }
}
