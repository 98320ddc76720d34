//! File access shared by every reader: transparent `.bz2` decompression, numbered lines and
//! sha256 checksums.
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::error::{DatasetError, Result};

/// `true` when the file name ends in `.bz2` (the file is then read through a bzip2 decoder).
pub(crate) fn is_bz2(path: &Path) -> bool {
    path.extension().is_some_and(|e| e.eq_ignore_ascii_case("bz2"))
}

/// Opens a file, mapping "not found" to [`DatasetError::MissingFile`].
pub(crate) fn open_file(path: &Path, origin: &str) -> Result<File> {
    File::open(path).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            DatasetError::MissingFile {
                path: path.to_path_buf(),
                origin: origin.to_string(),
            }
        } else {
            DatasetError::io(path, e)
        }
    })
}

/// A buffered reader over the (decompressed) content of `path`.
pub(crate) fn open_reader(path: &Path) -> Result<Box<dyn BufRead + Send>> {
    let file = open_file(path, "no such file (check the path)")?;
    if is_bz2(path) {
        let dec = bzip2::read::MultiBzDecoder::new(BufReader::with_capacity(1 << 16, file));
        Ok(Box::new(BufReader::with_capacity(1 << 16, dec)))
    } else {
        Ok(Box::new(BufReader::with_capacity(1 << 16, file)))
    }
}

/// The whole (decompressed) content of `path`.
pub(crate) fn read_bytes(path: &Path) -> Result<Vec<u8>> {
    read_to_end(open_reader(path)?, path)
}

/// The rest of a stream; `name` names it in errors.
pub(crate) fn read_to_end(mut r: impl Read, name: &Path) -> Result<Vec<u8>> {
    let mut buf = Vec::new();
    r.read_to_end(&mut buf).map_err(|e| DatasetError::io(name, e))?;
    Ok(buf)
}

/// Hex sha256 of the raw bytes of `path` (compressed bytes for `.bz2` files), streamed.
pub fn sha256_file(path: &Path) -> Result<String> {
    let mut file = open_file(path, "cannot checksum a file that does not exist")?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = file.read(&mut buf).map_err(|e| DatasetError::io(path, e))?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(to_hex(&hasher.finalize()))
}

/// Hex sha256 of a byte slice.
pub fn sha256_bytes(bytes: &[u8]) -> String {
    to_hex(&Sha256::digest(bytes))
}

fn to_hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        // Writing to a String cannot fail.
        let _ = write!(s, "{b:02x}");
    }
    s
}

/// Reads a text file line by line with 1-based line numbers, stripping `\n` and `\r\n`.
pub(crate) struct LineReader {
    reader: Box<dyn BufRead + Send>,
    path: PathBuf,
    line: usize,
    buf: Vec<u8>,
}

impl LineReader {
    pub(crate) fn open(path: &Path) -> Result<Self> {
        Ok(Self::from_reader(open_reader(path)?, path))
    }

    pub(crate) fn from_reader(reader: Box<dyn BufRead + Send>, path: &Path) -> Self {
        Self {
            reader,
            path: path.to_path_buf(),
            line: 0,
            buf: Vec::new(),
        }
    }

    /// The next line (without its terminator) and its number, or `None` at the end of the file.
    pub(crate) fn next_line(&mut self) -> Result<Option<(usize, &str)>> {
        self.buf.clear();
        let n = self
            .reader
            .read_until(b'\n', &mut self.buf)
            .map_err(|e| DatasetError::io(&self.path, e))?;
        if n == 0 {
            return Ok(None);
        }
        self.line += 1;
        if self.buf.last() == Some(&b'\n') {
            self.buf.pop();
        }
        if self.buf.last() == Some(&b'\r') {
            self.buf.pop();
        }
        let line = self.line;
        match std::str::from_utf8(&self.buf) {
            Ok(s) => Ok(Some((line, s))),
            Err(e) => Err(DatasetError::parse(&self.path, line, format!("not valid UTF-8: {e}"))),
        }
    }
}
