//! Write-then-rename for output files (traces, plots), so a reader sees either the previous
//! file or the complete new one, never a partial write.

use std::fs::{self, File};
use std::io::{self, BufWriter};
use std::path::{Path, PathBuf};

/// Write `path` by calling `fill` on a buffered temporary file in the same directory (so the
/// rename cannot cross filesystems), syncing it, and renaming it over `path`. On any error the
/// temporary file is removed and `path` is left as it was.
pub(crate) fn write_atomically<E>(
    path: &Path,
    fill: impl FnOnce(&mut BufWriter<File>) -> Result<(), E>,
) -> Result<(), E>
where
    E: From<io::Error>,
{
    let tmp = tmp_path(path);
    let result = (|| {
        let mut w = BufWriter::new(File::create(&tmp)?);
        fill(&mut w)?;
        let file = w.into_inner().map_err(|e| e.into_error())?;
        // The rename is only as good as the data under it: sync before publishing the name.
        file.sync_all()?;
        fs::rename(&tmp, path)?;
        Ok(())
    })();
    if result.is_err() {
        // Best effort: the temporary may not exist if creating it was what failed.
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// `dir/.name.tmp.<pid>`: hidden, next to the target, unique per process.
fn tmp_path(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "out".to_owned());
    path.with_file_name(format!(".{name}.tmp.{}", std::process::id()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn a_failed_fill_leaves_the_old_file_and_no_temporary() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("x.txt");
        fs::write(&path, "old").expect("write");
        let r: Result<(), io::Error> = write_atomically(&path, |w| {
            w.write_all(b"partial")?;
            Err(io::Error::other("boom"))
        });
        assert!(r.is_err());
        assert_eq!(fs::read_to_string(&path).expect("read"), "old");
        assert_eq!(fs::read_dir(dir.path()).expect("ls").count(), 1);
    }

    #[test]
    fn a_successful_fill_replaces_the_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("x.txt");
        fs::write(&path, "old").expect("write");
        write_atomically::<io::Error>(&path, |w| w.write_all(b"new")).expect("write");
        assert_eq!(fs::read_to_string(&path).expect("read"), "new");
        assert_eq!(fs::read_dir(dir.path()).expect("ls").count(), 1);
    }
}
