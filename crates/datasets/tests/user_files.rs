//! The readers of user files (`.npy`, text matrices, scipy `.npz`, LIBSVM, edge lists, index
//! lists): what numpy / scipy write reads back exactly, and every malformed file is a typed error
//! naming the file (and the line, for text), never a panic.
//!
//! `tests/data/user/` holds files written by numpy 2.4.6 and scipy 1.17.1 (Python 3), from
//! `a = [[1, 0, 2.5, 0], [0, 0, 0, 0], [-3, 0.125, 0, 4]]`:
//!
//! ```python
//! m = scipy.sparse.csr_matrix(a)
//! scipy.sparse.save_npz("csr.npz", m, compressed=False)
//! scipy.sparse.save_npz("csr_compressed.npz", m, compressed=True)
//! m32 = scipy.sparse.csr_matrix(a.astype(np.float32))  # then int64 indices and indptr
//! scipy.sparse.save_npz("csr_int64_f32.npz", m32, compressed=True)
//! scipy.sparse.save_npz("csc.npz", m.tocsc(), compressed=False)
//! np.save("f32.npy", np.array([[1.5, -2], [0.25, 8]], dtype=np.float32))
//! np.save("i16.npy", np.array([[1, -2, 3], [-4, 5, -6]], dtype=np.int16))
//! np.save("bool.npy", np.array([[True, False], [False, True]]))
//! np.save("fortran.npy", np.asfortranarray([[1.0, 2, 3], [4, 5, 6]]))
//! np.save("big_endian.npy", np.array([[1.0, 2.0]], dtype=">f8"))
//! np.save("complex.npy", np.array([[1 + 2j]]))
//! np.save("indices.npy", np.array([3, 0, 7], dtype=np.uint32))
//! ```
#![allow(clippy::unwrap_used, clippy::expect_used)]
use std::path::{Path, PathBuf};

use ksvd_datasets::{
    csv_bytes, npy_bytes, read_edge_list, read_index_list, read_libsvm, read_npy, read_npy_matrix,
    read_npy_matrix_from, read_npz_csr, read_npz_csr_from, read_text_matrix, read_text_matrix_from, DatasetError,
    LibsvmOptions, MatrixFormat, NodeIds, NpyDtype, TextOptions,
};
use ksvd_linalg::Vocabulary;
use ndarray::{array, Array2, Ix1};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/user").join(name)
}

fn write(dir: &Path, name: &str, bytes: impl AsRef<[u8]>) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

/// The message of an error, checked to name `path`.
fn message_naming(e: DatasetError, path: &Path) -> String {
    let text = e.to_string();
    assert!(
        text.contains(&path.display().to_string()),
        "{text} does not name {}",
        path.display()
    );
    text
}

fn scipy_matrix() -> Array2<f64> {
    array![[1.0, 0.0, 2.5, 0.0], [0.0, 0.0, 0.0, 0.0], [-3.0, 0.125, 0.0, 4.0]]
}

#[test]
fn formats_are_told_apart_by_extension() {
    for (name, format) in [
        ("x.npy", MatrixFormat::Npy),
        ("x.NPZ", MatrixFormat::Npz),
        ("x.libsvm", MatrixFormat::Libsvm),
        ("x.svm.bz2", MatrixFormat::Libsvm),
        ("x.csv", MatrixFormat::Text),
        ("x.txt.bz2", MatrixFormat::Text),
        ("x", MatrixFormat::Text),
    ] {
        assert_eq!(MatrixFormat::of_path(Path::new(name)), format, "{name}");
    }
}

/// Standard input has no extension: its first bytes tell `.npy`, `.npz` and text apart, and the
/// `_from` readers give what the file readers give, naming the stream in their errors.
#[test]
fn streams_are_sniffed_and_read_like_files() {
    let dir = tempfile::tempdir().unwrap();
    let text = write(dir.path(), "x.csv", "# c\n1, 2;3\n4 5 6\n");
    let stdin = Path::new("<stdin>");
    for path in [
        fixture("f32.npy"),
        fixture("i16.npy"),
        fixture("csr.npz"),
        fixture("csr_compressed.npz"),
        text.clone(),
    ] {
        let bytes = std::fs::read(&path).unwrap();
        let format = MatrixFormat::sniff(&bytes);
        assert_eq!(format, MatrixFormat::of_path(&path), "{}", path.display());
        match format {
            MatrixFormat::Npy => assert_eq!(
                read_npy_matrix_from(&bytes[..], stdin).unwrap(),
                read_npy_matrix(&path).unwrap()
            ),
            MatrixFormat::Npz => assert_eq!(
                read_npz_csr_from(&bytes[..], stdin).unwrap().to_dense(),
                read_npz_csr(&path).unwrap().to_dense()
            ),
            _ => assert_eq!(
                read_text_matrix_from(std::io::Cursor::new(bytes), stdin, &TextOptions::default()).unwrap(),
                read_text_matrix(&path, &TextOptions::default()).unwrap()
            ),
        }
    }
    assert_eq!(MatrixFormat::sniff(b""), MatrixFormat::Text);
    let e = read_text_matrix_from(&b"1,2\n3,x\n"[..], stdin, &TextOptions::default()).unwrap_err();
    assert!(matches!(e, DatasetError::Parse { line: 2, .. }), "{e:?}");
    assert!(message_naming(e, stdin).contains("`x` is not a number"));
    let e = read_npy_matrix_from(&b"\x93NUMPY\x01"[..], stdin).unwrap_err();
    assert!(matches!(e, DatasetError::Malformed { .. }), "{e:?}");
    message_naming(e, stdin);
}

#[test]
fn scipy_csr_archives_read_exactly() {
    for name in ["csr.npz", "csr_compressed.npz", "csr_int64_f32.npz"] {
        let m = read_npz_csr(&fixture(name)).unwrap();
        assert_eq!(m.to_dense(), scipy_matrix(), "{name}");
        assert_eq!(m.nnz(), 5, "{name}");
    }
    let p = fixture("csc.npz");
    let e = read_npz_csr(&p).unwrap_err();
    assert!(matches!(e, DatasetError::UnsupportedFormat { .. }), "{e:?}");
    assert!(message_naming(e, &p).contains("only CSR"));
}

#[test]
fn corrupt_npz_archives_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    let good = std::fs::read(fixture("csr_compressed.npz")).unwrap();
    // Not a zip at all, a truncated archive, and a value changed inside a stored entry (the
    // entry's CRC no longer matches).
    let mut flipped = std::fs::read(fixture("csr.npz")).unwrap();
    let at = flipped.windows(8).position(|w| w == 0.125f64.to_le_bytes()).unwrap();
    flipped[at + 7] ^= 0x10;
    for (name, bytes) in [
        ("garbage.npz", b"PK\x03\x04 not really a zip".to_vec()),
        ("truncated.npz", good[..good.len() / 2].to_vec()),
        ("flipped.npz", flipped),
        ("empty.npz", Vec::new()),
    ] {
        let p = write(dir.path(), name, &bytes);
        let e = read_npz_csr(&p).unwrap_err();
        assert!(
            matches!(
                e,
                DatasetError::Malformed { .. } | DatasetError::UnsupportedFormat { .. }
            ),
            "{name}: {e:?}"
        );
        message_naming(e, &p);
    }
    // A valid zip without the CSR arrays.
    let p = dir.path().join("other.npz");
    let mut w = zip::ZipWriter::new(std::fs::File::create(&p).unwrap());
    w.start_file("x.npy", zip::write::SimpleFileOptions::default()).unwrap();
    std::io::Write::write_all(&mut w, &npy_bytes(&array![1.0]).unwrap()).unwrap();
    w.finish().unwrap();
    let text = message_naming(read_npz_csr(&p).unwrap_err(), &p);
    assert!(text.contains("no format.npy"), "{text}");
}

#[test]
fn npy_of_every_numeric_dtype_reads_as_f64() {
    let (a, t) = read_npy_matrix(&fixture("f32.npy")).unwrap();
    assert_eq!((a, t), (array![[1.5, -2.0], [0.25, 8.0]], NpyDtype::Float32));
    let (a, t) = read_npy_matrix(&fixture("i16.npy")).unwrap();
    assert_eq!((a, t), (array![[1.0, -2.0, 3.0], [-4.0, 5.0, -6.0]], NpyDtype::Int16));
    let (a, t) = read_npy_matrix(&fixture("bool.npy")).unwrap();
    assert_eq!((a, t), (array![[1.0, 0.0], [0.0, 1.0]], NpyDtype::Bool));
    let (a, t) = read_npy_matrix(&fixture("fortran.npy")).unwrap();
    assert_eq!((a, t), (array![[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], NpyDtype::Float64));
    let (v, t) = read_npy::<Ix1>(&fixture("indices.npy")).unwrap();
    assert_eq!((v, t), (array![3.0, 0.0, 7.0], NpyDtype::Uint32));
    // What this crate writes reads back bit for bit.
    let dir = tempfile::tempdir().unwrap();
    let x = array![[0.1, -1e300, 5e-324], [f64::MAX, 3.0, -0.0]];
    let p = write(dir.path(), "x.npy", npy_bytes(&x).unwrap());
    let (back, t) = read_npy_matrix(&p).unwrap();
    assert_eq!(t, NpyDtype::Float64);
    assert_eq!(back.mapv(f64::to_bits), x.mapv(f64::to_bits));
}

#[test]
fn malformed_npy_files_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    let good = npy_bytes(&array![[1.0, 2.0], [3.0, 4.0]]).unwrap();
    // A header claiming 10^12 x 2 values (its length unchanged: the new digits replace padding):
    // rejected before anything that size is allocated.
    let mut huge = good.clone();
    let end = huge.iter().position(|&b| b == b'\n').unwrap();
    assert_eq!(&huge[end - 12..end], b"            ", "padding before the header's end");
    huge.drain(end - 12..end);
    let at = huge.windows(6).position(|w| w == b"(2, 2)").unwrap();
    huge.splice(at..at + 6, b"(1000000000000, 2)".iter().copied());
    assert_eq!(huge.len(), good.len());
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        ("truncated.npy", good[..good.len() - 3].to_vec(), "not a 2-D .npy"),
        ("header_only.npy", good[..20].to_vec(), "not a 2-D .npy"),
        ("not_npy.npy", b"1,2\n3,4\n".to_vec(), "not a 2-D .npy"),
        ("empty.npy", Vec::new(), "not a 2-D .npy"),
        ("huge.npy", huge, "not a 2-D .npy"),
        ("vector.npy", npy_bytes(&array![1.0, 2.0]).unwrap(), "not a 2-D .npy"),
        (
            "nan.npy",
            npy_bytes(&array![[1.0, f64::NAN]]).unwrap(),
            "non-finite value NaN at row 0, column 1",
        ),
        (
            "zero_rows.npy",
            npy_bytes(&Array2::<f64>::zeros((0, 3))).unwrap(),
            "empty array",
        ),
    ];
    for (name, bytes, want) in cases {
        let p = write(dir.path(), name, bytes);
        let text = message_naming(read_npy_matrix(&p).unwrap_err(), &p);
        assert!(text.contains(want), "{name}: {text}");
    }
    for (name, want) in [
        ("complex.npy", "dtype '<c16'"),
        ("big_endian.npy", "big-endian float64"),
    ] {
        let p = fixture(name);
        let e = read_npy_matrix(&p).unwrap_err();
        assert!(matches!(e, DatasetError::UnsupportedFormat { .. }), "{e:?}");
        let text = message_naming(e, &p);
        assert!(text.contains(want), "{name}: {text}");
    }
    let missing = dir.path().join("absent.npy");
    assert!(matches!(
        read_npy_matrix(&missing),
        Err(DatasetError::MissingFile { .. })
    ));
}

#[test]
fn text_matrices_read_and_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(
        dir.path(),
        "x.csv",
        "# two samples\n1, 2;3\n\n4\t5   6 # trailing comment\n",
    );
    let a = read_text_matrix(&p, &TextOptions::default()).unwrap();
    assert_eq!(a, array![[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]);
    let h = write(dir.path(), "h.csv", "# comment\na,b\n1,2\n");
    assert_eq!(
        read_text_matrix(&h, &TextOptions::default().header(true)).unwrap(),
        array![[1.0, 2.0]]
    );
    // What csv_bytes writes reads back bit for bit.
    let x = array![[0.1, -1e300, 5e-324], [f64::MAX, 3.0, -0.0]];
    let c = write(dir.path(), "c.csv", csv_bytes(x.view()));
    let back = read_text_matrix(&c, &TextOptions::default()).unwrap();
    assert_eq!(back.mapv(f64::to_bits), x.mapv(f64::to_bits));
    // Rows formatted in parallel blocks come back in order, bit for bit.
    let big = ndarray::Array2::from_shape_fn((1500, 3), |(i, k)| (i as f64 + 0.1) * [1.0, -1e-7, 3e5][k]);
    let c = write(dir.path(), "big.csv", csv_bytes(big.view()));
    let back = read_text_matrix(&c, &TextOptions::default()).unwrap();
    assert_eq!(back.mapv(f64::to_bits), big.mapv(f64::to_bits));
}

#[test]
fn malformed_text_matrices_are_errors_with_their_line() {
    let dir = tempfile::tempdir().unwrap();
    for (text, line, want) in [
        ("1,2\n3\n", 2, "1 values but the first row has 2"),
        ("1,2,3\n4,5,6\n7,8\n", 3, "2 values but the first row has 3"),
        ("1,2\n3,x\n", 2, "`x` is not a number"),
        ("1,2\nNaN,1\n", 2, "non-finite value NaN"),
        ("1,2\n3,inf\n", 2, "non-finite value inf"),
    ] {
        let p = write(dir.path(), "bad.csv", text);
        let e = read_text_matrix(&p, &TextOptions::default()).unwrap_err();
        assert!(
            matches!(e, DatasetError::Parse { line: l, .. } if l == line),
            "{text:?}: {e:?}"
        );
        let msg = message_naming(e, &p);
        assert!(msg.contains(want), "{msg}");
    }
    let p = write(dir.path(), "header.csv", "# c\nx,y\n1,2\n");
    let e = read_text_matrix(&p, &TextOptions::default()).unwrap_err();
    assert!(
        matches!(&e, DatasetError::UnexpectedHeader { line: 2, token, .. } if token == "x"),
        "{e:?}"
    );
    for text in ["", "# only a comment\n\n"] {
        let p = write(dir.path(), "empty.csv", text);
        let msg = message_naming(read_text_matrix(&p, &TextOptions::default()).unwrap_err(), &p);
        assert!(msg.contains("no data rows"), "{msg}");
    }
    let p = write(dir.path(), "latin1.csv", b"1,2\n3,\xe9\n");
    assert!(matches!(
        read_text_matrix(&p, &TextOptions::default()),
        Err(DatasetError::Parse { line: 2, .. })
    ));
}

/// The one LIBSVM parser reads what the command line takes; a bad index names its line.
#[test]
fn libsvm_with_a_bad_index_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    for (text, line, want) in [
        ("1 1:1\n-1 0:1.5 2:1\n", 2, "feature index 0: LIBSVM indices start at 1"),
        ("1 1:1\n1 x:2\n", 2, "feature index `x` is not a non-negative integer"),
        ("1 -3:2\n", 1, "feature index `-3`"),
        ("1 3:1 3:2\n", 1, "feature index 3 appears twice"),
        ("1 1:nan\n", 1, "non-finite value NaN of feature 1"),
    ] {
        let p = write(dir.path(), "bad.libsvm", text);
        let e = read_libsvm(&p, &LibsvmOptions::default()).unwrap_err();
        assert!(
            matches!(e, DatasetError::Parse { line: l, .. } if l == line),
            "{text:?}: {e:?}"
        );
        let msg = message_naming(e, &p);
        assert!(msg.contains(want), "{msg}");
    }
}

#[test]
fn edge_lists_number_nodes_as_asked() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "e.txt", "# arcs\n0 1\n1,2\n2 0\n0 1\n");
    for ids in [NodeIds::Auto, NodeIds::Index] {
        let e = read_edge_list(&p, ids).unwrap();
        assert_eq!(e.names, None);
        assert_eq!(
            e.adjacency.to_dense(),
            array![[0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [1.0, 0.0, 0.0]],
            "repeated arcs count once"
        );
    }
    let named = read_edge_list(&p, NodeIds::Name).unwrap();
    assert_eq!(named.names.unwrap(), ["0", "1", "2"]);
    // Gaps: `auto` numbers by first appearance, `index` keeps isolated nodes.
    let g = write(dir.path(), "gap.txt", "10 3\n3 10\n");
    let auto = read_edge_list(&g, NodeIds::Auto).unwrap();
    assert_eq!(auto.names.unwrap(), ["10", "3"]);
    assert_eq!(read_edge_list(&g, NodeIds::Index).unwrap().adjacency.shape(), (11, 11));
    for (text, ids, line, want) in [
        ("0 1\n# c\n1 b\n", NodeIds::Index, Some(3), "node id `b`"),
        ("0 1\n2\n", NodeIds::Auto, Some(2), "expected `src dst`"),
        ("# nothing\n", NodeIds::Auto, None, "no edges"),
        ("0 18446744073709551615\n", NodeIds::Index, None, "too large"),
    ] {
        let p = write(dir.path(), "bad.txt", text);
        let e = read_edge_list(&p, ids).unwrap_err();
        if let Some(line) = line {
            assert!(matches!(e, DatasetError::Parse { line: l, .. } if l == line), "{e:?}");
        }
        let msg = message_naming(e, &p);
        assert!(msg.contains(want), "{msg}");
    }
}

#[test]
fn node_id_names_round_trip() {
    for &ids in NodeIds::ALL {
        assert_eq!(ids.to_string().parse::<NodeIds>().unwrap(), ids);
        for name in ids.names() {
            assert_eq!(name.parse::<NodeIds>().unwrap(), ids);
        }
    }
    let err = "names".parse::<NodeIds>().unwrap_err().to_string();
    assert!(err.contains("auto, index, name"), "{err}");
}

#[test]
fn index_lists_from_text_and_npy() {
    let dir = tempfile::tempdir().unwrap();
    let t = write(dir.path(), "i.txt", "idx\n3\n1, 17 # comment\n8\n");
    assert_eq!(
        read_index_list(&t, &TextOptions::default().header(true)).unwrap(),
        [3, 1, 17, 8]
    );
    assert_eq!(
        read_index_list(&fixture("indices.npy"), &TextOptions::default()).unwrap(),
        [3, 0, 7]
    );
    for (text, want) in [
        ("1\n2.5\n", "`2.5` is not a 0-based index"),
        ("-1\n", "`-1`"),
        ("\n", "no indices"),
    ] {
        let p = write(dir.path(), "bad.txt", text);
        let msg = message_naming(read_index_list(&p, &TextOptions::default()).unwrap_err(), &p);
        assert!(msg.contains(want), "{msg}");
    }
    let p = write(dir.path(), "f.npy", npy_bytes(&array![1.0, 0.5]).unwrap());
    let msg = message_naming(read_index_list(&p, &TextOptions::default()).unwrap_err(), &p);
    assert!(msg.contains("0.5 is not a 0-based index"), "{msg}");
    let p = write(dir.path(), "m.npy", npy_bytes(&array![[1.0]]).unwrap());
    let msg = message_naming(read_index_list(&p, &TextOptions::default()).unwrap_err(), &p);
    assert!(msg.contains("not a 1-D .npy"), "{msg}");
}

proptest::proptest! {
    /// Arbitrary bytes never panic any reader.
    #[test]
    fn readers_never_panic(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..300)) {
        let dir = tempfile::tempdir().unwrap();
        let mut npy = npy_bytes(&array![[1.0, 2.0], [3.0, 4.0]]).unwrap();
        npy.truncate(bytes.len().min(npy.len()));
        npy.extend_from_slice(&bytes);
        for (name, content) in [("a.npy", &npy), ("b.npy", &bytes), ("c.npz", &bytes), ("d.csv", &bytes), ("e.txt", &bytes)] {
            let p = write(dir.path(), name, content);
            let _ = read_npy_matrix(&p);
            let _ = read_npz_csr(&p);
            let _ = read_text_matrix(&p, &TextOptions::default());
            let _ = read_edge_list(&p, NodeIds::Auto);
            let _ = read_index_list(&p, &TextOptions::default());
            let _ = read_npy_matrix_from(&content[..], &p);
            let _ = read_npz_csr_from(&content[..], &p);
            let _ = read_text_matrix_from(std::io::Cursor::new(content.clone()), &p, &TextOptions::default());
        }
    }
}
