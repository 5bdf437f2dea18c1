//! `joj report DIR|FILE…`: one self-contained HTML page from saved results (bench, compare,
//! trace, crash and replay JSON; `docs/report.md`).
//!
//! Inputs may come from anywhere (a workflow hands over a folder of every result), so each is
//! read as joj reads any input: a regular file only (a FIFO or device is listed as refused,
//! never opened for reading), at most [`MAX_DOCUMENT_BYTES`]; a folder is walked
//! [`MAX_DEPTH`] levels deep without following symbolic links, at most [`MAX_FILES`] files.
//! Its owner may swap names while joj works: each folder is opened from its parent's
//! descriptor, each document from the folder named with no link followed on the way, and a
//! document must be the very file (device, inode) the walk found. A
//! file that is no JSON, or JSON of no kind joj writes, is listed on the page with the reason,
//! never fatal: the page shows whatever can be shown. Documents are read one at a time, each
//! drawn onto the page and dropped, and the page is bounded (`report_page::MAX_PAGE_BYTES`).

use std::ffi::{OsStr, OsString};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use clap::Args;
use joj_linux::{Beneath, BeneathError, Mounts};
use joj_trace::OutputError;
use joj_trace::TraceError;
use joj_trace::output::{Existing, OutputDir, write_atomically};
use rustix::fs::{AtFlags, FileType, Mode, OFlags};

use crate::output::{CliError, CliResult, check_output_file};
use crate::report_doc::{Document, Kind, Skipped};
use crate::report_page::{MAX_SECTIONS, Page};

/// The largest result document read (a trace run's JSON with its file rows is a few MiB).
pub const MAX_DOCUMENT_BYTES: u64 = 64 << 20;
/// How deep a folder is walked.
pub const MAX_DEPTH: usize = 4;
/// How many files the page takes; the rest are counted as left out.
pub const MAX_FILES: usize = 2000;
/// The documents' bytes read for one page, in all: past it the rest are listed as not shown.
/// Each is bounded by [`MAX_DOCUMENT_BYTES`], but 2,000 of them (or 2,000 hard links to one)
/// would be 125 GiB to parse; a page of this much JSON is already more than a reader reads.
pub const MAX_TOTAL_DOCUMENT_BYTES: u64 = 256 << 20;
/// How many files a folder's walk lists as not shown (links, FIFOs, folders too deep) before it
/// stops: a folder of a million links is not a million lines.
const MAX_WALK_SKIPPED: usize = 2000;

const _: () = assert!(
    MAX_FILES <= MAX_SECTIONS,
    "a page has a section for every file it takes"
);

#[derive(Args)]
pub struct ReportArgs {
    /// Result documents (`--save` or `--json` output), or folders holding them (`*.json`,
    /// walked four levels deep).
    #[arg(required = true, value_name = "DIR|FILE")]
    inputs: Vec<PathBuf>,
    /// The HTML page to write.
    #[arg(short = 'o', long = "output", default_value = "joj-report.html", help_heading = crate::groups::OUTPUT)]
    output: PathBuf,
    /// Replace an existing output file.
    #[arg(long, help_heading = crate::groups::OUTPUT)]
    force: bool,
    /// Let the paper-figure tables link to files beneath this folder (default: each
    /// document's own folder; a document may come from anyone, and its links may name any
    /// file of the host).
    #[arg(long = "link-root", value_name = "DIR", help_heading = crate::groups::OUTPUT)]
    link_root: Option<PathBuf>,
}

pub fn main(a: ReportArgs) -> CliResult {
    let inputs: Vec<&Path> = a.inputs.iter().map(PathBuf::as_path).collect();
    check_output_file("-o/--output", &a.output, a.force, &inputs)?;
    let link_root = match &a.link_root {
        Some(root) => {
            let canonical = root.canonicalize().map_err(|source| CliError::Open {
                path: root.clone(),
                source,
            })?;
            if !canonical.is_dir() {
                return Err(CliError::LinkRootNotAFolder { path: root.clone() }.into());
            }
            Some(canonical)
        }
        None => None,
    };
    let gathered = gather(&a.inputs);
    // Every file found in a folder is an input the page may not replace (`-o DIR/a.json` of
    // `joj report DIR`), checked before any is read.
    let paths = gathered.paths();
    let found: Vec<&Path> = paths.iter().map(PathBuf::as_path).collect();
    check_output_file("-o/--output", &a.output, a.force, &found)?;
    let files = paths;
    let mut page = Page::new("joj report", &a.output, &files);
    if let Some(root) = link_root {
        page.set_link_root(root);
    }
    let mut read_failed = Vec::new();
    let mut read_bytes = 0;
    for (k, f) in gathered.files.iter().enumerate() {
        if read_bytes >= MAX_TOTAL_DOCUMENT_BYTES {
            let why = format!(
                "not read: this page has read {} of documents already, the most one page \
                 reads; fix: report fewer or smaller documents on each page",
                crate::report_doc::mib(read_bytes)
            );
            read_failed.push((k, Skipped::new(&f.path, why)));
            continue;
        }
        // One document at a time: drawn onto the page, then dropped.
        match read(&gathered, f, &mut read_bytes) {
            Ok(d) => page.add(k, &d),
            Err(reason) => read_failed.push((k, Skipped::new(&f.path, reason))),
        }
    }
    // A plot read beside a document is an input too (`-o DIR/its-plot.svg --force`).
    check_output_file(
        "-o/--output",
        &a.output,
        a.force,
        &page
            .plot_inputs()
            .iter()
            .map(PathBuf::as_path)
            .collect::<Vec<_>>(),
    )?;
    let mut skipped = gathered.skipped;
    for s in &skipped {
        page.not_shown(None, s);
    }
    for (k, s) in &read_failed {
        page.not_shown(Some(*k), s);
    }
    skipped.extend(read_failed.into_iter().map(|(_, s)| s));
    if page.documents() == 0 {
        for sk in &skipped {
            // A name from the folder given: someone else's choice of bytes.
            eprintln!(
                "  not shown: {} — {}",
                joj_trace::terminal::escaped(&sk.path),
                joj_trace::terminal::escaped(&sk.reason)
            );
        }
        return Err(CliError::NoReportDocument {
            inputs: a
                .inputs
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", "),
            skipped: skipped.len(),
        }
        .into());
    }
    write_page(&a.output, &page, Existing::replace_if(a.force))?;
    eprintln!(
        "joj report: {} document(s), {} file(s) not shown; wrote {}",
        page.documents(),
        skipped.len(),
        a.output.display()
    );
    Ok(())
}

/// Write the page to `path` atomically.
pub fn write_page(path: &Path, page: &Page, existing: Existing) -> Result<(), TraceError> {
    write_atomically(path, existing, |w| page.write(w).map_err(TraceError::from))
}

/// A file to read as a document, as [`gather`] found it.
pub struct Found {
    pub path: PathBuf,
    /// Where it is: beneath a folder named on the command line, or named itself.
    at: Place,
    /// The device and inode [`gather`] saw: the file read must be this one.
    id: (u64, u64),
}

enum Place {
    /// Beneath the folder `Gathered::roots[root]`, at `rel` (no symbolic link on the way).
    Beneath { root: usize, rel: PathBuf },
    /// A file named on the command line (read even through a link, as named).
    Named,
}

/// What [`gather`] found: the files to read, in order, and what was left out with the reason.
pub struct Gathered {
    pub files: Vec<Found>,
    pub skipped: Vec<Skipped>,
    /// Each folder named on the command line, open: its files are reached from here, never by
    /// their path again (a folder on the way swapped for a link since the walk leads nowhere).
    roots: Vec<Beneath>,
}

impl Gathered {
    pub fn paths(&self) -> Vec<PathBuf> {
        self.files.iter().map(|f| f.path.clone()).collect()
    }
}

/// Every file under `inputs` to read as a document, in the order named (a folder's files sorted
/// by path), and what was left out with the reason.
pub fn gather(inputs: &[PathBuf]) -> Gathered {
    let mut g = Gathered {
        files: Vec::new(),
        skipped: Vec::new(),
        roots: Vec::new(),
    };
    for input in inputs {
        match std::fs::symlink_metadata(input) {
            Ok(m) if m.is_dir() => match open_dir_not_through_a_link(input) {
                Ok(fd) => {
                    let mut w = Walk {
                        root: g.roots.len(),
                        files: &mut g.files,
                        skipped: &mut g.skipped,
                    };
                    w.walk(fd.as_fd(), input, Path::new(""), 0);
                    // Subfolders may be mounts (only root makes them): they were walked.
                    g.roots
                        .push(Beneath::from_dir(input.clone(), fd, Mounts::Cross));
                }
                Err(e) => g.skipped.push(Skipped::new(
                    input,
                    format!("cannot be listed: {}", std::io::Error::from(e)),
                )),
            },
            // A file named on the command line is read even through a link: the reader
            // still refuses anything but a regular file.
            Ok(m) => match std::fs::metadata(input) {
                Ok(t) if t.is_dir() && m.file_type().is_symlink() => {
                    g.skipped.push(Skipped::new(input, link_to_a_folder(input)));
                }
                Ok(t) => g.files.push(Found {
                    path: input.clone(),
                    at: Place::Named,
                    id: (t.dev(), t.ino()),
                }),
                Err(e) => g
                    .skipped
                    .push(Skipped::new(input, format!("cannot be read: {e}"))),
            },
            Err(e) => g
                .skipped
                .push(Skipped::new(input, format!("cannot be read: {e}"))),
        }
    }
    // A file reached by two names (hard links, a file named and in a folder named) is one
    // document: read and drawn once.
    let mut first: std::collections::HashMap<(u64, u64), PathBuf> = Default::default();
    let mut once = Vec::with_capacity(g.files.len());
    for f in std::mem::take(&mut g.files) {
        match first.get(&f.id) {
            Some(p) => g.skipped.push(Skipped::new(
                &f.path,
                format!(
                    "the same file as {} (a second name: a hard link, or named twice): shown once",
                    p.display()
                ),
            )),
            None => {
                first.insert(f.id, f.path.clone());
                once.push(f);
            }
        }
    }
    g.files = once;
    if g.files.len() > MAX_FILES {
        g.files.truncate(MAX_FILES);
        g.skipped.push(Skipped {
            path: "more files".into(),
            reason: format!(
                "past the first {MAX_FILES} a page takes (a folder is not walked further); \
                 fix: report fewer files, or each folder on its own page"
            ),
        });
    }
    g
}

/// Why a link to a folder named on the command line is not read.
fn link_to_a_folder(input: &Path) -> String {
    let target = input.canonicalize().map_or_else(
        |_| "the folder's own path".to_string(),
        |t| format!("its own path ({})", t.display()),
    );
    format!(
        "a symbolic link to a folder: links to folders are not followed (whoever can change \
         the link could point it anywhere); fix: name the folder by {target}"
    )
}

/// `path`, a folder, opened for listing and for opening what is in it; a symbolic link is
/// refused.
fn open_dir_not_through_a_link(path: &Path) -> rustix::io::Result<OwnedFd> {
    rustix::fs::open(
        path,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )
}

/// A walk of one folder named on the command line, each folder in it opened from its parent's
/// descriptor (never through a link).
struct Walk<'a> {
    root: usize,
    files: &'a mut Vec<Found>,
    skipped: &'a mut Vec<Skipped>,
}

impl Walk<'_> {
    /// The `*.json` files in the folder `fd` (at `dir`, `rel` beneath the root), sorted; links
    /// and special files listed as left out.
    fn walk(&mut self, fd: BorrowedFd, dir: &Path, rel: &Path, depth: usize) {
        let entries = match rustix::fs::Dir::read_from(fd) {
            Ok(e) => e,
            Err(e) => {
                let why = format!("cannot be listed: {}", std::io::Error::from(e));
                return self.skipped.push(Skipped::new(dir, why));
            }
        };
        let mut names: Vec<OsString> = entries
            .filter_map(Result::ok)
            .map(|e| OsStr::from_bytes(e.file_name().to_bytes()).to_os_string())
            .filter(|n| n != "." && n != "..")
            .collect();
        names.sort();
        for name in names {
            if self.files.len() > MAX_FILES || self.skipped.len() > MAX_WALK_SKIPPED {
                return;
            }
            if self.skipped.len() == MAX_WALK_SKIPPED {
                let why = format!(
                    "not walked: {MAX_WALK_SKIPPED} files are listed as not shown already; fix: \
                     name the documents, or a folder without so many links and special files"
                );
                return self.skipped.push(Skipped::new(dir, why));
            }
            let p = dir.join(&name);
            let Ok(st) = rustix::fs::statat(fd, name.as_os_str(), AtFlags::SYMLINK_NOFOLLOW) else {
                continue;
            };
            let t = FileType::from_raw_mode(st.st_mode);
            let json = Path::new(&name).extension().is_some_and(|e| e == "json");
            if t == FileType::Directory && depth + 1 < MAX_DEPTH {
                let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
                match rustix::fs::openat(fd, name.as_os_str(), flags, Mode::empty()) {
                    Ok(child) => self.walk(child.as_fd(), &p, &rel.join(&name), depth + 1),
                    Err(e) => {
                        let why = format!("cannot be listed: {}", std::io::Error::from(e));
                        self.skipped.push(Skipped::new(&p, why));
                    }
                }
            } else if t == FileType::Directory {
                self.skipped
                    .push(Skipped::new(&p, format!("deeper than {MAX_DEPTH} levels")));
            } else if json && t == FileType::Symlink {
                self.skipped
                    .push(Skipped::new(&p, "a symbolic link (not followed)".into()));
            } else if json && t != FileType::RegularFile {
                self.skipped
                    .push(Skipped::new(&p, "not a regular file".into()));
            } else if json {
                self.files.push(Found {
                    path: p,
                    at: Place::Beneath {
                        root: self.root,
                        rel: rel.join(&name),
                    },
                    id: (st.st_dev, st.st_ino),
                });
            }
        }
    }
}

/// The folder `f` is in, open, and `f` opened in it: for a file found in a folder, reached
/// from the folder named with no link followed on the way or at the end, without blocking on a
/// FIFO, and checked from the descriptor to be a regular file ([`Beneath`]) — the very one the
/// walk saw — of at most [`MAX_DOCUMENT_BYTES`]. Its folder's descriptor is where its plots are
/// looked for.
fn open_document(g: &Gathered, f: &Found) -> Result<(Beneath, joj_trace::input::Input), String> {
    let name = f
        .path
        .file_name()
        .ok_or_else(|| "cannot be read: no file name".to_string())?;
    let (dir, file) = match &f.at {
        Place::Beneath { root, rel } => {
            let parent = rel.parent().unwrap_or(Path::new(""));
            let dir = g.roots[*root].open_dir(parent).map_err(|e| match e {
                BeneathError::Link { path, .. } => format!(
                    "not read: a folder on its way ({}) was replaced by a symbolic link since the \
                     folder was walked (links are not followed)",
                    path.display()
                ),
                BeneathError::WrongType { path, found, .. } => format!(
                    "not read: a folder on its way ({}) is a {found} now",
                    path.display()
                ),
                e => format!("cannot be read: {e}"),
            })?;
            let file = dir.open_file(Path::new(name)).map_err(|e| match e {
                BeneathError::Link { .. } => "not read: replaced by a symbolic link since the \
                                              folder was walked (links are not followed)"
                    .to_string(),
                BeneathError::WrongType { found, .. } => {
                    format!("not read: a {found} now, not a regular file")
                }
                e => format!("cannot be read: {e}"),
            })?;
            (dir, file)
        }
        Place::Named => {
            let io = |e: rustix::io::Errno| format!("cannot be read: {}", std::io::Error::from(e));
            let parent = f
                .path
                .parent()
                .filter(|p| !p.as_os_str().is_empty())
                .unwrap_or(Path::new("."));
            let dir = rustix::fs::open(
                parent,
                OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
                Mode::empty(),
            )
            .map_err(io)?;
            let read_only = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC;
            let file = rustix::fs::openat(&dir, name, read_only, Mode::empty()).map_err(io)?;
            let dir = Beneath::from_dir(parent.to_path_buf(), dir, Mounts::Cross);
            (dir, std::fs::File::from(file))
        }
    };
    let input = joj_trace::input::checked(file, &f.path, MAX_DOCUMENT_BYTES, "a result document")
        .map_err(|e| e.to_string())?;
    let m = input
        .file
        .metadata()
        .map_err(|e| format!("cannot be read: {e}"))?;
    if (m.dev(), m.ino()) != f.id {
        return Err(
            "not read: another file than the one found when its folder was walked \
                    (it was replaced since)"
                .into(),
        );
    }
    Ok((dir, input))
}

/// One document, read within the bounds and recognised by its fields; its bytes are added to
/// `read_bytes`.
fn read(g: &Gathered, f: &Found, read_bytes: &mut u64) -> Result<Document, String> {
    let (dir, input) = open_document(g, f)?;
    let bytes = input.read_all().map_err(|e| e.to_string())?;
    *read_bytes += bytes.len() as u64;
    let value: serde_json::Value = serde_json::from_slice(&bytes).map_err(|e| {
        let first = bytes.split(|&b| b == b'\n').next().unwrap_or_default();
        match serde_json::from_slice::<serde_json::Value>(first) {
            Ok(head) => format!(
                "JSON lines ({}), not one result document: a result is what --json or --save \
                 writes",
                match head.get("format").and_then(|f| f.as_str()) {
                    Some("joj-trace") => "a joj block trace: `joj trace show` reads it",
                    Some("joj-syscalls") => "a recording of system calls",
                    _ => "one document per line",
                }
            ),
            Err(_) => format!("not JSON: {e}"),
        }
    })?;
    drop(bytes);
    let kind = Kind::of(value)?;
    Ok(Document {
        path: f.path.clone(),
        dir,
        kind,
    })
}

/// `--report` of `joj compare` and `joj trace`: the page of one document just made, written
/// beside its trace and plot as `<its plot's name>.html`, or `-2`, `-3`, … after it when a
/// file has that name (a page of an earlier run, or anyone's file: never replaced, as the
/// trace and plot are not); returns the page's path.
pub fn beside(kind: Kind, plot_file: Option<&str>, out: &Path) -> Result<PathBuf, TraceError> {
    let name = plot_file
        .and_then(|p| Path::new(p).file_stem())
        .map_or_else(|| "joj-report".into(), |s| s.to_string_lossy().into_owned());
    let held = OutputDir::open(out)?;
    let plots = held
        .as_fd()
        .try_clone_to_owned()
        .map_err(TraceError::from)?;
    let mut doc = Document {
        path: PathBuf::new(),
        dir: Beneath::from_dir(out.to_path_buf(), plots, Mounts::Cross),
        kind,
    };
    for n in 1..=joj_trace::output::MAX_UNIQUE_STEMS {
        let file = match n {
            1 => format!("{name}.html"),
            n => format!("{name}-{n}.html"),
        };
        let path = out.join(&file);
        doc.path.clone_from(&path);
        let mut page = Page::new("joj report", &path, &[]);
        page.add(0, &doc);
        match write_page(&held.at().join(&file), &page, Existing::Keep) {
            Ok(()) => return Ok(path),
            Err(TraceError::Output(OutputError::Exists { .. })) => continue,
            Err(e) => return Err(e),
        }
    }
    Err(TraceError::Output(OutputError::Exists {
        path: out.join(format!("{name}.html")),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/report");

    /// A crash result document holding `mark` (its workload's name).
    fn crash_doc(path: &Path, mark: &str) {
        let text = std::fs::read_to_string(Path::new(FIXTURES).join("crash.json")).unwrap();
        let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
        v["workload"] = mark.into();
        std::fs::write(path, serde_json::to_string(&v).unwrap()).unwrap();
    }

    fn read_text(g: &Gathered, k: usize) -> Result<String, String> {
        read(g, &g.files[k], &mut 0).map(|d| match d.kind {
            Kind::Crash(v) => v.to_string(),
            _ => panic!("a crash document"),
        })
    }

    /// The folder's owner swaps a file the walk found for a link to root's file, or a folder on
    /// its way for a link to root's folder, or for another file, between the walk and the
    /// read (docs/robustness.md H19): nothing but the file the walk saw is read.
    #[test]
    fn a_document_swapped_after_the_walk_is_not_read() {
        let tmp = tempfile::tempdir().unwrap();
        let secret = tmp.path().join("secret");
        std::fs::create_dir(&secret).unwrap();
        crash_doc(&secret.join("a.json"), "SECRET-TOKEN");
        let docs = tmp.path().join("docs");
        std::fs::create_dir_all(docs.join("sub")).unwrap();
        crash_doc(&docs.join("a.json"), "own-a");
        crash_doc(&docs.join("b.json"), "own-b");
        crash_doc(&docs.join("sub/a.json"), "own-sub");

        let g = gather(std::slice::from_ref(&docs));
        let names: Vec<_> = g.files.iter().map(|f| f.path.clone()).collect();
        assert_eq!(
            names,
            [
                docs.join("a.json"),
                docs.join("b.json"),
                docs.join("sub/a.json")
            ]
        );
        assert!(read_text(&g, 0).unwrap().contains("own-a"));

        // The file itself becomes a link to root's file.
        std::fs::remove_file(docs.join("a.json")).unwrap();
        std::os::unix::fs::symlink(secret.join("a.json"), docs.join("a.json")).unwrap();
        // Another file takes its name (the old one kept, so its inode is not reused: a file
        // that reuses it is a file of the folder, which its owner could have put there anyway).
        std::fs::rename(docs.join("b.json"), docs.join("b.old")).unwrap();
        std::fs::copy(secret.join("a.json"), docs.join("b.json")).unwrap();
        // A folder on its way becomes a link to root's folder.
        std::fs::rename(docs.join("sub"), docs.join("sub.real")).unwrap();
        std::os::unix::fs::symlink(&secret, docs.join("sub")).unwrap();
        for k in 0..3 {
            let why = read_text(&g, k).unwrap_err();
            assert!(why.starts_with("not read: "), "{why}");
        }
    }

    /// A FIFO swapped in for a document after the walk is refused without blocking.
    #[test]
    fn a_fifo_swapped_in_after_the_walk_is_refused_without_blocking() {
        let tmp = tempfile::tempdir().unwrap();
        let doc = tmp.path().join("a.json");
        crash_doc(&doc, "own");
        let g = gather(&[tmp.path().to_path_buf()]);
        std::fs::remove_file(&doc).unwrap();
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &doc,
            FileType::Fifo,
            Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        let why = read_text(&g, 0).unwrap_err();
        assert!(why.contains("FIFO"), "{why}");
    }

    /// After a document is read, the folder's owner swaps its folder for a link to root's
    /// folder holding a plot of the same name (docs/robustness.md H20): the plot shown is the
    /// one beside the document read.
    #[test]
    fn a_plot_is_read_from_the_documents_own_folder_even_if_it_is_swapped_for_a_link() {
        let tmp = tempfile::tempdir().unwrap();
        let plot = "trace-ext4-python3-small.py-delete+wal.svg";
        let secret = tmp.path().join("secret");
        std::fs::create_dir(&secret).unwrap();
        std::fs::write(secret.join(plot), "<svg>SECRET-TOKEN</svg>").unwrap();
        let sub = tmp.path().join("docs/sub");
        std::fs::create_dir_all(&sub).unwrap();
        std::fs::copy(Path::new(FIXTURES).join("trace.json"), sub.join("t.json")).unwrap();
        std::fs::write(sub.join(plot), "<svg>own plot</svg>").unwrap();

        let g = gather(&[tmp.path().join("docs")]);
        let doc = read(&g, &g.files[0], &mut 0).unwrap();
        std::fs::rename(&sub, tmp.path().join("docs/sub.real")).unwrap();
        std::os::unix::fs::symlink(&secret, &sub).unwrap();

        let mut page = crate::report_page::Page::new("t", &tmp.path().join("p.html"), &[]);
        page.add(0, &doc);
        let mut html = Vec::new();
        page.write(&mut html).unwrap();
        let html = String::from_utf8(html).unwrap();
        let b64 = |s: &str| crate::report_doc::tests_base64(s.as_bytes());
        assert!(html.contains(&b64("<svg>own plot</svg>")), "the own plot");
        assert!(
            !html.contains(&b64("<svg>SECRET-TOKEN</svg>")),
            "not root's"
        );
    }

    /// A link to a folder named on the command line is named as such, with the fix.
    #[test]
    fn a_link_to_a_folder_named_is_not_followed_and_the_fix_named() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("d");
        std::fs::create_dir(&dir).unwrap();
        let link = tmp.path().join("dlink");
        std::os::unix::fs::symlink(&dir, &link).unwrap();
        let g = gather(&[link]);
        assert!(g.files.is_empty());
        let why = &g.skipped[0].reason;
        assert!(why.contains("links to folders are not followed"), "{why}");
        assert!(
            why.contains(&dir.canonicalize().unwrap().display().to_string()),
            "{why}"
        );
    }
}
